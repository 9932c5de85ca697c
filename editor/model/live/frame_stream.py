"""Incremental parser of a live-link stream: frame lines and binary frames, mixed.

A stream is the frame lines of ``docs/frame-format.md`` (header lines, then one JSON line a
frame) where any frame may instead be a binary frame (``docs/live-link.md``)::

    magic  b"\\x00PSB"          4 bytes (a NUL never occurs in UTF-8 JSON text)
    length u32                  bytes of the payload that follows
    frame  u32, count u32, flags u32 (0)
    ids    u32[count]
    boxes  f32[count * 6]       minx, miny, minz, maxx, maxy, maxz per object
    awake  u8[count]            0 or 1

every number little-endian. :class:`FrameStreamParser` takes bytes as they arrive
(:meth:`~FrameStreamParser.feed`) and returns what they completed: :class:`StreamHeader`
parts and :class:`~editor.model.recording.FrameRecord` values (ids ascending, spawns and
despawns filled in). Its buffer is bounded: a line or a binary frame larger than
``max_frame_bytes`` is an error, never an allocation. The first fault raises
:class:`StreamError`, one line naming the byte offset, the line and the frame; the parser
then refuses more input; everything it returned before stays valid, and what the failing call
completed before the fault is on the error (``StreamError.items``).
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field

import numpy as np

from spatial.errors import ParseError, PartitionStudioError
from spatial.objects import MAX_ID

from ..frame_format import _Line, _object_rows, frame_objects, line_document
from ..recording import FrameRecord, Recording

#: the first bytes of a binary frame
BINARY_MAGIC = b"\x00PSB"
_HEAD = struct.Struct("<4sI")
_FRAME_HEAD = struct.Struct("<III")
#: bytes of one object in a binary frame: id, six floats, awake flag
BINARY_OBJECT_BYTES = 4 + 24 + 1
#: default bound of one line or one binary frame (about 2 million objects in binary)
DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024


class StreamError(PartitionStudioError):
    """A broken stream: one line naming the source, byte offset, line and frame."""

    def __init__(self, source: str, offset: int, line: int, message: str,
                 frame: int | None = None) -> None:
        self.source, self.offset, self.line, self.frame = source, offset, line, frame
        self.detail = message
        #: header parts and frames the failing ``feed`` call completed before the fault
        self.items: list = []
        where = f"byte {offset}, line {line}" + (f", frame {frame}" if frame is not None else "")
        super().__init__(f"{source}: {where}: {message}")

    def __reduce__(self):
        # sent from a processing process to the window's: rebuilt from its fields (the frames
        # completed before the fault travel on their own, as events)
        return (type(self), (self.source, self.offset, self.line, self.detail, self.frame))


@dataclass
class StreamHeader:
    """One header part: static objects and/or meta (several parts may precede the first frame)."""

    static_ids: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    static_lo: np.ndarray = field(default_factory=lambda: np.empty((0, 3)))
    static_hi: np.ndarray = field(default_factory=lambda: np.empty((0, 3)))
    meta: dict = field(default_factory=dict)


def encode_binary_frame(frame: int, ids, lo, hi, awake) -> bytes:
    """The binary frame of ``ids`` with boxes ``lo``/``hi`` (``(n, 3)``) and ``awake`` flags."""
    ids = np.asarray(ids, dtype="<u4").reshape(-1)
    n = len(ids)
    boxes = np.hstack([np.asarray(lo, dtype="<f4").reshape(n, 3),
                       np.asarray(hi, dtype="<f4").reshape(n, 3)])
    flags = np.asarray(awake, dtype=np.uint8).reshape(n)
    payload = _FRAME_HEAD.pack(frame, n, 0) + ids.tobytes() + boxes.astype("<f4").tobytes() + flags.tobytes()
    return _HEAD.pack(BINARY_MAGIC, len(payload)) + payload


class FrameStreamParser:
    """Bytes in, header parts and frames out (see the module docstring).

    Parameters
    ----------
    source : str
        Names the stream in error messages (an address or a file name).
    max_frame_bytes : int
        Largest line or binary frame accepted.
    """

    def __init__(self, source: str = "stream", max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self.source = source
        self.max_frame_bytes = int(max_frame_bytes)
        self._buffer = bytearray()
        self.offset = 0            # stream offset of the first byte of the buffer
        self.line = 1              # line number of the next line (binary frames count as one)
        self.frames = 0            # frames parsed
        self.last_frame = -1
        self.first_frame = -1      # the number of the first frame parsed
        self.error: StreamError | None = None
        self.meta: dict = {}
        self._static_ids = np.empty(0, dtype=np.int64)
        self._previous = np.empty(0, dtype=np.int64)
        self._scan = 0             # buffer bytes already searched for a newline
        self._after_binary = False  # the last thing consumed was a binary frame

    # ------------------------------------------------------------------ input
    def feed(self, data: bytes) -> list[StreamHeader | FrameRecord]:
        """Parse what ``data`` completes; raises :class:`StreamError` at the first fault."""
        if self.error is not None:
            raise self.error
        self._buffer += data
        out: list[StreamHeader | FrameRecord] = []
        try:
            while self._next(out):
                pass
        except StreamError as exc:
            exc.items = out  # what this call completed before the fault stays usable
            self.error = exc
            raise
        return out

    def finish(self) -> list[StreamHeader | FrameRecord]:
        """The stream ended: returns what a last line without a newline completes; a frame cut
        short raises :class:`StreamError` (whatever came before stays)."""
        if self.error is not None:
            raise self.error
        rest = bytes(self._buffer)
        out: list[StreamHeader | FrameRecord] = []
        if rest[:1] == b"\x00":
            self.error = self._fail("the stream ended inside a binary frame")
        elif rest.strip():
            try:
                self._text_line(rest, out)
            except StreamError as exc:
                self.error = exc
            else:
                self._buffer.clear()
        if self.error is not None:
            raise self.error
        return out

    @property
    def pending_bytes(self) -> int:
        """Bytes held waiting for the rest of their line or frame."""
        return len(self._buffer)

    # ------------------------------------------------------------------ framing
    def _fail(self, message: str, frame: int | None = None, at: int = 0) -> StreamError:
        return StreamError(self.source, self.offset + at, self.line, message, frame)

    def _next(self, out: list) -> bool:
        buf = self._buffer
        if not buf:
            return False
        after_binary, self._after_binary = self._after_binary, False
        if buf[0] == 0:
            return self._binary(out)
        if after_binary and buf[0] == 0x0A:  # the optional newline after a binary frame
            del buf[:1]
            self.offset += 1
            return True
        end = buf.find(b"\n", self._scan)
        if end < 0:
            if len(buf) > self.max_frame_bytes:
                raise self._fail(f"a line longer than {self.max_frame_bytes} bytes")
            self._scan = len(buf)
            return False
        nul = buf.find(b"\x00", 0, end)
        if nul >= 0:  # a binary frame glued to the end of a text line
            raise self._fail("a NUL byte inside a frame line (a binary frame must start a line)", at=nul)
        text = bytes(buf[:end])
        self._text_line(text, out)
        del buf[:end + 1]
        self.offset += end + 1
        self.line += 1
        self._scan = 0
        return True

    def _binary(self, out: list) -> bool:
        buf = self._buffer
        if len(buf) < _HEAD.size:
            if not BINARY_MAGIC.startswith(bytes(buf[:4])):
                raise self._fail("expected a frame line or a binary frame (magic \\x00PSB)")
            return False
        magic, length = _HEAD.unpack_from(buf)
        if magic != BINARY_MAGIC:
            raise self._fail("expected a frame line or a binary frame (magic \\x00PSB)")
        if length > self.max_frame_bytes:
            raise self._fail(f"binary frame of {length} bytes exceeds the limit of "
                             f"{self.max_frame_bytes} bytes")
        if len(buf) < _HEAD.size + length:
            return False
        payload = bytes(buf[_HEAD.size:_HEAD.size + length])
        out.append(self._binary_frame(payload))
        del buf[:_HEAD.size + length]
        self.offset += _HEAD.size + length
        self.line += 1
        # a newline after a binary frame is allowed (skipped, whenever it arrives), so frame
        # lines may follow it on their own line
        self._after_binary = True
        return True

    # ------------------------------------------------------------------ content
    def _binary_frame(self, payload: bytes) -> FrameRecord:
        if len(payload) < _FRAME_HEAD.size:
            raise self._fail(f"binary frame: payload of {len(payload)} bytes is shorter than its "
                             f"{_FRAME_HEAD.size}-byte head")
        frame, count, flags = _FRAME_HEAD.unpack_from(payload)
        if flags != 0:
            raise self._fail(f"binary frame: flags must be 0, got {flags}", frame)
        expected = _FRAME_HEAD.size + count * BINARY_OBJECT_BYTES
        if len(payload) != expected:
            raise self._fail(f"binary frame: count {count} needs a payload of {expected} bytes, "
                             f"got {len(payload)}", frame)
        at = _FRAME_HEAD.size
        ids = np.frombuffer(payload, "<u4", count, at).astype(np.int64)
        at += 4 * count
        boxes = np.frombuffer(payload, "<f4", 6 * count, at).astype(np.float64).reshape(count, 6)
        at += 24 * count
        awake_raw = np.frombuffer(payload, np.uint8, count, at)
        self._check_binary(frame, ids, boxes, awake_raw)
        return self._record(frame, ids, boxes[:, :3].copy(), boxes[:, 3:].copy(), awake_raw.astype(bool))

    def _check_binary(self, frame: int, ids, boxes, awake) -> None:
        def first(mask) -> int:
            return int(np.flatnonzero(mask)[0])

        if (ids >= MAX_ID).any():
            k = first(ids >= MAX_ID)
            raise self._fail(f"objects[{k}]: id must be an integer in [0, {MAX_ID}), got {ids[k]}", frame)
        if not np.isfinite(boxes).all():
            k = first(~np.isfinite(boxes).all(axis=1))
            raise self._fail(f"objects[{k}]: expected finite numbers, got {boxes[k].tolist()}", frame)
        bad = (boxes[:, :3] > boxes[:, 3:]).any(axis=1)
        if bad.any():
            k = first(bad)
            raise self._fail(f"objects[{k}]: min {boxes[k, :3].tolist()} exceeds max "
                             f"{boxes[k, 3:].tolist()}", frame)
        if (awake > 1).any():
            k = first(awake > 1)
            raise self._fail(f"objects[{k}]: awake must be 0 or 1, got {int(awake[k])}", frame)
        if _ascending(ids):  # no id twice (a game's usual frame: its objects in id order)
            return
        order = np.argsort(ids, kind="stable")
        repeat = np.flatnonzero(ids[order][1:] == ids[order][:-1])
        if len(repeat):
            k = int(order[repeat[0] + 1])
            raise self._fail(f"objects[{k}]: id {ids[k]} listed twice", frame)

    def _text_line(self, raw: bytes, out: list) -> None:
        if raw.startswith(b"\xef\xbb\xbf") and self.offset == 0:
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._fail(f"not UTF-8 text: byte 0x{raw[exc.start]:02x} cannot be decoded",
                             at=exc.start) from None
        if not text.strip():
            return
        try:
            self._line_document(_Line(self.source, self.line, text), out)
        except ParseError as exc:
            raise self._fail(f"column {exc.column}: {exc.detail}",
                             frame=self._frame_hint(text)) from None

    @staticmethod
    def _frame_hint(text: str) -> int | None:
        try:
            value = json.loads(text).get("frame")
        except (ValueError, AttributeError, RecursionError):
            return None
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def _line_document(self, line: _Line, out: list) -> None:
        doc = line_document(line)
        if "static" in doc or "meta" in doc:
            out.append(self._header(line, doc))
        if "frame" not in doc:
            if "objects" in doc:
                raise line.fail(line.key_column("objects"), "'objects' without 'frame'")
            if "static" not in doc and "meta" not in doc:
                raise line.fail(1, "expected 'frame' and 'objects'")
            return
        frame = doc["frame"]
        if isinstance(frame, bool) or not isinstance(frame, int) or not 0 <= frame < 2 ** 63:
            raise line.fail(line.key_column("frame"), f"'frame' must be an integer >= 0, got {json.dumps(frame)}")
        ids, lo, hi, awake = frame_objects(line, doc, self._static_ids)
        if frame <= self.last_frame:
            raise line.fail(line.key_column("frame"), f"frame {frame} does not follow frame {self.last_frame}")
        out.append(self._record(frame, ids, lo, hi, awake))

    def _header(self, line: _Line, doc: dict) -> StreamHeader:
        if self.frames:
            key = "static" if "static" in doc else "meta"
            raise line.fail(line.key_column(key), f"'{key}' may only come before the first frame")
        part = StreamHeader()
        if "meta" in doc:
            if not isinstance(doc["meta"], dict):
                raise line.fail(line.key_column("meta"), "'meta' must be an object")
            part.meta = doc["meta"]
            self.meta.update(part.meta)
        if "static" in doc:
            ids, lo, hi, _ = _object_rows(line, "static", doc["static"], with_awake=False)
            again = np.flatnonzero(np.isin(ids, self._static_ids))
            if len(again):
                raise line.fail(line.element_column("static", int(again[0]), 0),
                                f"static[{int(again[0])}]: id {int(ids[again[0]])} already sent")
            part.static_ids, part.static_lo, part.static_hi = ids, lo, hi
            self._static_ids = np.union1d(self._static_ids, ids)
        return part

    def _record(self, frame: int, ids, lo, hi, awake) -> FrameRecord:
        if frame <= self.last_frame:
            raise self._fail(f"frame {frame} does not follow frame {self.last_frame}", frame)
        clash = np.isin(ids, self._static_ids)
        if clash.any():
            k = int(np.flatnonzero(clash)[0])
            raise self._fail(f"objects[{k}]: id {int(ids[k])} is a static object", frame)
        if not _ascending(ids):
            order = np.argsort(ids)
            ids, lo, hi, awake = ids[order], lo[order], hi[order], awake[order]
        first = self.frames == 0
        if np.array_equal(ids, self._previous):  # the same objects as the frame before
            spawned = despawned = np.empty(0, dtype=ids.dtype)
        else:
            spawned = np.empty(0, dtype=np.int64) if first else np.setdiff1d(ids, self._previous, assume_unique=True)
            despawned = np.setdiff1d(self._previous, ids, assume_unique=True)
        self._previous = ids
        if first:
            self.first_frame = frame
        self.last_frame = frame
        self.frames += 1
        return FrameRecord(frame, ids, lo, hi, awake, spawned, despawned)


def _ascending(ids: np.ndarray) -> bool:
    """Strictly ascending (so no id twice): checked in one pass, where sorting takes several."""
    return bool(np.all(ids[1:] > ids[:-1]))


def read_stream(data: bytes, source: str, capacity: int | None = None) -> Recording:
    """A whole stream (bytes a listener received, or a client's save file) as a recording.

    Raises :class:`StreamError` at the first fault, naming ``source``; nothing is returned.
    """
    parser = FrameStreamParser(source, max_frame_bytes=max(len(data), DEFAULT_MAX_FRAME_BYTES))
    items = parser.feed(data)
    items += parser.finish()
    return recording_from(items, source, capacity)


def recording_from(items, source: str, capacity: int | None = None) -> Recording:
    """Gather parsed header parts and frames into a :class:`Recording`."""
    headers = [x for x in items if isinstance(x, StreamHeader)]
    frames = [x for x in items if isinstance(x, FrameRecord)]
    if not frames:
        raise StreamError(source, 0, 1, "no frames found")
    meta: dict = {}
    for h in headers:
        meta.update(h.meta)
    ids = np.concatenate([np.empty(0, dtype=np.int64)] + [h.static_ids for h in headers])
    lo = np.concatenate([np.empty((0, 3))] + [h.static_lo for h in headers])
    hi = np.concatenate([np.empty((0, 3))] + [h.static_hi for h in headers])
    recording = Recording(ids, lo, hi, capacity=capacity or len(frames), meta={**meta, "source": source})
    for record in frames:
        recording.append(record)
    return recording
