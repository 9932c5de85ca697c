"""Recordings of moving objects: a bounded ring of frames, ``.npz`` files, replay into any index.

A :class:`Recording` holds the static objects once (ids and boxes) and, per frame, every
dynamic object alive at the end of that frame (ids ascending, boxes, awake flags) with the ids
spawned and despawned during it. It keeps the most recent ``capacity`` frames; older ones
fall off the front. Frame numbers increase but need not be consecutive (a game may drop
frames); frame 0 of a simulation is its initial state.

:class:`Replay` drives any backend through a recording: ``seek(frame)`` rebuilds the index at
that frame; ``step()`` moves to the next recorded frame incrementally, with the same
:mod:`.frame_step` functions as the live simulation, and returns the frame's stats and pairs.
Replaying one recording into two backends gives identical pairs frame by frame.

File format (``.npz``, written atomically by :func:`save_recording`, checked field by field by
:func:`load_recording`, which raises :class:`RecordingFormatError` naming the file and field):
``format`` = ``"partition-studio-recording"``, ``version`` = 1, ``meta`` (JSON text),
``static_ids``/``static_lo``/``static_hi``, ``frames`` (frame numbers), ``offsets`` (``F+1``,
CSR into ``ids``/``lo``/``hi``/``awake``), ``spawn_offsets``/``spawned`` and
``despawn_offsets``/``despawned``.
"""
from __future__ import annotations

import bisect
import io
import json
import os
import time
import zipfile
import zlib
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from spatial.atomic import atomic_write_bytes
from spatial.bounded_json import loads_bounded
from spatial.contract import PairResult, SpatialIndex
from spatial.errors import ParseError, PartitionStudioError
from spatial.objects import MAX_ID

from .frame_step import FrameDelta, FrameStats, apply_delta, settle_frame

FORMAT_NAME = "partition-studio-recording"
FORMAT_VERSION = 1
DEFAULT_CAPACITY = 600
#: the ring also drops its oldest frames beyond this many bytes (10k movers: ~570 kB a frame)
DEFAULT_MAX_BYTES = 512 * 1024 * 1024


class RecordingFormatError(PartitionStudioError, ValueError):
    """A recording file is unreadable or inconsistent; the message names file and field."""


@dataclass
class FrameRecord:
    """The dynamic objects at the end of one frame."""

    frame: int
    ids: np.ndarray        # (n,) int64, ascending
    lo: np.ndarray         # (n, 3)
    hi: np.ndarray         # (n, 3)
    awake: np.ndarray      # (n,) bool
    spawned: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    despawned: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    stats: FrameStats | None = None


def _rows(values, n: int) -> np.ndarray:
    """``values`` as an ``(n, 3)`` float64 array; no values is an empty table."""
    return np.zeros((0, 3)) if values is None else np.asarray(values, dtype=np.float64).reshape(n, 3)


def _record_bytes(record: FrameRecord) -> int:
    return sum(a.nbytes for a in (record.ids, record.lo, record.hi, record.awake, record.spawned,
                                  record.despawned))


class Recording:
    """Static objects plus a ring buffer of the last ``capacity`` frames.

    Parameters
    ----------
    static_ids, static_lo, static_hi : array_like
        Objects that never move (brushes).
    capacity : int
        Frames kept; the oldest fall off when more are appended.
    max_bytes : int
        The oldest frames also fall off while the frames held take more memory than this
        (the newest frame is always kept).
    meta : dict
        JSON-compatible description (source, backend, seed, dt...), saved with the file.
    """

    def __init__(self, static_ids=(), static_lo=None, static_hi=None,
                 capacity: int = DEFAULT_CAPACITY, meta: dict | None = None,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if capacity < 1:
            raise ValueError(f"recording capacity must be at least 1 frame, got {capacity}")
        self.static_ids = np.asarray(static_ids, dtype=np.int64).reshape(-1)
        n = len(self.static_ids)
        self.static_lo = _rows(static_lo, n)
        self.static_hi = _rows(static_hi, n)
        self.capacity = int(capacity)
        self.max_bytes = int(max_bytes)
        self.nbytes = 0
        self.meta = dict(meta or {})
        self._frames: deque[FrameRecord] = deque()
        self._numbers: deque[int] = deque()

    # ------------------------------------------------------------------ ring
    def __len__(self) -> int:
        return len(self._frames)

    def __iter__(self) -> Iterator[FrameRecord]:
        return iter(self._frames)

    @property
    def frame_numbers(self) -> np.ndarray:
        return np.array(self._numbers, dtype=np.int64)

    @property
    def first_frame(self) -> int:
        return self._numbers[0] if self._numbers else -1

    @property
    def last_frame(self) -> int:
        return self._numbers[-1] if self._numbers else -1

    def append(self, record: FrameRecord) -> None:
        """Add a frame after the last one, or replace a frame already held (re-simulated)."""
        if self._numbers and record.frame <= self._numbers[-1]:
            pos = self._position(record.frame)
            if pos < 0:
                raise ValueError(f"frame {record.frame} is not after the last recorded frame "
                                 f"{self._numbers[-1]} and not held")
            self.nbytes += _record_bytes(record) - _record_bytes(self._frames[pos])
            self._frames[pos] = record
            return
        self._frames.append(record)
        self._numbers.append(record.frame)
        self.nbytes += _record_bytes(record)
        while len(self._frames) > self.capacity or (self.nbytes > self.max_bytes and len(self._frames) > 1):
            self.nbytes -= _record_bytes(self._frames.popleft())
            self._numbers.popleft()

    def _position(self, frame: int) -> int:
        numbers = self._numbers
        pos = bisect.bisect_left(numbers, frame)
        return pos if pos < len(numbers) and numbers[pos] == frame else -1

    def get(self, frame: int) -> FrameRecord:
        """The record of ``frame``; ``KeyError`` naming the recorded range if absent."""
        pos = self._position(int(frame))
        if pos < 0:
            raise KeyError(f"frame {frame} is not recorded (held: {self.first_frame}..{self.last_frame}, "
                           f"{len(self)} frames)")
        return self._frames[pos]

    def index_of(self, frame: int) -> int:
        """Position of ``frame`` among the held frames (-1 if absent)."""
        return self._position(int(frame))

    def at(self, position: int) -> FrameRecord:
        return self._frames[position]

    def boxes(self, record: FrameRecord) -> tuple[np.ndarray, ...]:
        """``(ids, lo, hi, dynamic, awake)`` of every object in ``record``'s frame: the static
        objects (always awake, not dynamic) then the frame's movers — what an index is built
        from to show that frame."""
        n_static = len(self.static_ids)
        ids = np.concatenate([self.static_ids, record.ids])
        lo = np.concatenate([self.static_lo, record.lo])
        hi = np.concatenate([self.static_hi, record.hi])
        dynamic = np.concatenate([np.zeros(n_static, bool), np.ones(len(record.ids), bool)])
        awake = np.concatenate([np.ones(n_static, bool), record.awake])
        return ids, lo, hi, dynamic, awake

    def stats_arrays(self) -> dict[str, np.ndarray]:
        """Per-frame stats of the held frames as columns (frames without stats are skipped)."""
        from .frame_step import STATS_COLUMNS
        rows = [r.stats for r in self._frames if r.stats is not None]
        out = {}
        for name in STATS_COLUMNS:
            dtype = np.float64 if name.endswith("_ms") else np.int64
            out[name] = np.array([getattr(s, name) for s in rows], dtype=dtype)
        return out

    # ------------------------------------------------------------------ deltas
    def delta(self, before: FrameRecord | None, after: FrameRecord) -> FrameDelta:
        """What an index showing ``before`` must do to show ``after``."""
        if before is None:
            before = FrameRecord(-1, np.empty(0, dtype=np.int64), np.empty((0, 3)), np.empty((0, 3)),
                                 np.empty(0, dtype=bool))
        if np.array_equal(before.ids, after.ids):  # the same objects (a game's usual frame)
            keep_b = keep_a = np.ones(len(after.ids), dtype=bool)
            bi = ai = np.arange(len(after.ids))
            changed = (before.lo != after.lo) | (before.hi != after.hi)
        else:
            keep_b = np.isin(before.ids, after.ids, assume_unique=True)
            keep_a = np.isin(after.ids, before.ids, assume_unique=True)
            # both id lists are ascending, so the kept ones line up row by row
            bi, ai = np.flatnonzero(keep_b), np.flatnonzero(keep_a)
            changed = (before.lo[bi] != after.lo[ai]) | (before.hi[bi] != after.hi[ai])
        gone = before.ids[~keep_b]
        new = ~keep_a
        # the three columns or-ed one by one: a reduction over a 3-wide axis is several times
        # slower on a frame of 10,000 objects
        moved = changed[:, 0] | changed[:, 1] | changed[:, 2]
        flip = before.awake[bi] != after.awake[ai]
        mi, fi = ai[moved], ai[flip]
        return FrameDelta(gone, after.ids[new], after.lo[new], after.hi[new], after.awake[new],
                          after.ids[mi], after.lo[mi], after.hi[mi], after.ids[fi], after.awake[fi])


# --------------------------------------------------------------------------- replay
class Replay:
    """Drive a spatial index through a recording.

    Parameters
    ----------
    recording : Recording
    index : SpatialIndex
        Any backend; it is rebuilt by :meth:`seek`.
    """

    def __init__(self, recording: Recording, index: SpatialIndex) -> None:
        if not len(recording):
            raise ValueError("the recording holds no frames")
        self.recording = recording
        self.index = index
        self.position = -1
        self.last_pairs: PairResult | None = None

    @property
    def frame(self) -> int:
        return self.recording.at(self.position).frame if self.position >= 0 else -1

    def seek(self, frame: int) -> FrameStats:
        """Rebuild the index showing recorded ``frame`` and collect its active pairs."""
        pos = self.recording.index_of(frame)
        if pos < 0:
            self.recording.get(frame)  # raises with the recorded range
        rec = self.recording.at(pos)
        ids, lo, hi, dynamic, awake = self.recording.boxes(rec)
        start = time.perf_counter()
        self.index.build(ids, lo, hi, dynamic=dynamic, awake=awake)
        build_ms = (time.perf_counter() - start) * 1e3
        self.position = pos
        return self._finish(rec, FrameDelta(), build_ms, step=False)

    def step(self) -> FrameStats:
        """Advance to the next recorded frame incrementally; ``StopIteration`` at the end."""
        if self.position < 0:
            return self.seek(self.recording.first_frame)
        if self.position + 1 >= len(self.recording):
            raise StopIteration("end of recording")
        before = self.recording.at(self.position)
        after = self.recording.at(self.position + 1)
        delta = self.recording.delta(before, after)
        edit_ms = apply_delta(self.index, delta)
        self.position += 1
        return self._finish(after, delta, edit_ms, step=True)

    def _finish(self, rec: FrameRecord, delta: FrameDelta, edit_ms: float, step: bool) -> FrameStats:
        if step:
            settle_ms, result, pairs_ms = settle_frame(self.index, delta.awake_ids, delta.awake_flags)
        else:
            start = time.perf_counter()
            result = self.index.pairs("active")
            settle_ms, pairs_ms = 0.0, (time.perf_counter() - start) * 1e3
        self.last_pairs = result
        return FrameStats(rec.frame, moved=len(delta.moved), spawned=len(delta.spawned),
                          despawned=len(delta.despawned), awake=int(rec.awake.sum()),
                          dynamic=len(rec.ids), candidates=result.tests,
                          overlapping=len(result.pairs), update_ms=edit_ms + settle_ms,
                          pairs_ms=pairs_ms, frame_ms=edit_ms + settle_ms + pairs_ms)

    def frames(self, start: int | None = None) -> Iterator[FrameStats]:
        """Seek to ``start`` (default: the first frame held) and yield every frame's stats."""
        yield self.seek(self.recording.first_frame if start is None else start)
        while self.position + 1 < len(self.recording):
            yield self.step()


# --------------------------------------------------------------------------- files
def save_recording(recording: Recording, path: str | os.PathLike) -> None:
    """Write ``recording`` to ``path`` (``.npz``, atomic)."""
    frames = list(recording)
    counts = [len(f.ids) for f in frames]

    def csr(parts, width=None, dtype=np.float64):
        if parts:
            return np.concatenate(parts).astype(dtype)
        return np.empty((0,) if width is None else (0, width), dtype=dtype)

    arrays = {
        "format": np.array(FORMAT_NAME), "version": np.array(FORMAT_VERSION),
        "meta": np.array(json.dumps(recording.meta, sort_keys=True, allow_nan=False)),
        "static_ids": recording.static_ids, "static_lo": recording.static_lo,
        "static_hi": recording.static_hi,
        "frames": np.array([f.frame for f in frames], dtype=np.int64),
        "offsets": np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        "ids": csr([f.ids for f in frames], dtype=np.int64),
        "lo": csr([f.lo for f in frames], 3), "hi": csr([f.hi for f in frames], 3),
        "awake": csr([f.awake for f in frames], dtype=bool),
        "spawn_offsets": np.concatenate([[0], np.cumsum([len(f.spawned) for f in frames])]).astype(np.int64),
        "spawned": csr([f.spawned for f in frames], dtype=np.int64),
        "despawn_offsets": np.concatenate([[0], np.cumsum([len(f.despawned) for f in frames])]).astype(np.int64),
        "despawned": csr([f.despawned for f in frames], dtype=np.int64),
    }
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    atomic_write_bytes(path, buffer.getvalue())


#: The most bytes the arrays of a recording may hold once unpacked (a ring of 10,000 frames of
#: 10,000 objects is about 0.6 GB): a damaged or hostile file is refused before it is unpacked.
MAX_RECORDING_BYTES = 4 * 1024 ** 3

# What reading a damaged zip member can raise besides our own checks.
# (A damaged flag bit makes zipfile think a member is encrypted: RuntimeError.)
_ZIP_ERRORS = (OSError, ValueError, EOFError, RuntimeError, zipfile.BadZipFile, zlib.error,
               NotImplementedError)


def _reason(exc: BaseException) -> str:
    """The library's own words on a damaged archive, on one short line."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 120 else text[:117] + "..."


def _check_members(path: str) -> None:
    """Check every array's header against the bytes the zip holds for it, before any is read.

    A header may claim any shape (10**12 rows) and numpy allocates what it claims before
    reading; object arrays would need unpickling, which is never done.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            total = 0
            for info in archive.infolist():
                name = info.filename.removesuffix(".npy")
                total += info.file_size
                if total > MAX_RECORDING_BYTES:
                    raise RecordingFormatError(
                        f"{path}: field '{name}': the arrays unpack to more than the limit of "
                        f"{MAX_RECORDING_BYTES:,} bytes")
                with archive.open(info) as member:
                    version = np.lib.format.read_magic(member)
                    if version == (1, 0):
                        shape, _, dtype = np.lib.format.read_array_header_1_0(member)
                    elif version == (2, 0):
                        shape, _, dtype = np.lib.format.read_array_header_2_0(member)
                    else:
                        raise RecordingFormatError(f"{path}: field '{name}': unsupported .npy "
                                                   f"version {version}")
                    header = member.tell()
                if dtype.hasobject:
                    raise RecordingFormatError(f"{path}: field '{name}': holds Python objects, "
                                               "which are never loaded (pickled data)")
                declared = dtype.itemsize
                for extent in shape:
                    declared *= int(extent)
                held = info.file_size - header
                if declared != held:
                    raise RecordingFormatError(
                        f"{path}: field '{name}': the header declares shape {tuple(shape)} "
                        f"({declared:,} bytes) but the file holds {held:,} bytes")
    except RecordingFormatError:
        raise
    except _ZIP_ERRORS as exc:
        raise RecordingFormatError(f"{path}: not a readable .npz recording: {_reason(exc)}") from None


class _Fields:
    def __init__(self, path, data) -> None:
        self.path, self.data = os.fspath(path), data

    def fail(self, name: str, message: str) -> RecordingFormatError:
        return RecordingFormatError(f"{self.path}: field '{name}': {message}")

    def get(self, name: str, kind: str, ndim: int, width: int | None = None) -> np.ndarray:
        if name not in self.data.files:
            raise self.fail(name, "is missing")
        try:
            arr = self.data[name]
        except _ZIP_ERRORS as exc:  # a damaged member: bad CRC, truncated stream
            raise self.fail(name, f"cannot be read: {_reason(exc)}") from None
        ok = {"int": np.issubdtype(arr.dtype, np.integer), "float": np.issubdtype(arr.dtype, np.floating)
              or np.issubdtype(arr.dtype, np.integer), "bool": arr.dtype == np.bool_,
              "str": arr.dtype.kind == "U"}[kind]
        if not ok or arr.ndim != ndim or (width is not None and arr.shape[1] != width):
            shape = "scalar" if ndim == 0 else f"{ndim}-d" + (f" with {width} columns" if width else "")
            raise self.fail(name, f"expected a {kind} {shape} array, got {arr.dtype} {arr.shape}")
        if kind == "float" and not np.isfinite(arr).all():
            raise self.fail(name, "holds a non-finite number")
        return arr


def load_recording(path: str | os.PathLike, capacity: int | None = None) -> Recording:
    """Read a recording saved by :func:`save_recording`, validating every field.

    ``capacity`` defaults to the number of frames in the file; a smaller one keeps the last.
    """
    data = _open_npz(path)
    with data:
        f = _Fields(path, data)
        meta = _read_header(f)
        static_ids, static_lo, static_hi = _read_static(f)
        columns = _read_frame_columns(f)
        nf = len(columns.frames)
        recording = Recording(static_ids, static_lo, static_hi,
                              capacity=capacity if capacity is not None else max(nf, 1),
                              meta=meta)
        _append_frames(f, recording, columns, static_ids)
    return recording


def _open_npz(path: str | os.PathLike):
    """The archive at ``path``, its members' headers checked against their sizes first."""
    if not os.path.isfile(path):
        reason = "is a folder" if os.path.isdir(path) else "no such file"
        raise RecordingFormatError(f"{os.fspath(path)}: cannot read: {reason}")
    _check_members(os.fspath(path))
    try:
        return np.load(path, allow_pickle=False)
    except _ZIP_ERRORS as exc:
        raise RecordingFormatError(f"{os.fspath(path)}: not a readable .npz recording: {_reason(exc)}") from None


def _read_header(f: _Fields) -> dict:
    """Check ``format`` and ``version``; the ``meta`` JSON object."""
    fmt = f.get("format", "str", 0)
    if str(fmt) != FORMAT_NAME:
        raise f.fail("format", f"expected {FORMAT_NAME!r}, got {str(fmt)!r}")
    version = int(f.get("version", "int", 0))
    if version != FORMAT_VERSION:
        raise f.fail("version", f"this program reads version {FORMAT_VERSION}, the file is version {version}")
    try:
        meta = loads_bounded(str(f.get("meta", "str", 0)), "meta")
    except ParseError as exc:
        raise f.fail("meta", f"{exc.line}:{exc.column}: {exc.detail}") from None
    if not isinstance(meta, dict):
        raise f.fail("meta", "expected a JSON object")
    return meta


def _read_static(f: _Fields) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``static_ids``, ``static_lo`` and ``static_hi``: one row each, unique ids, lo <= hi."""
    static_ids = f.get("static_ids", "int", 1)
    static_lo = f.get("static_lo", "float", 2, 3)
    static_hi = f.get("static_hi", "float", 2, 3)
    if not (len(static_lo) == len(static_hi) == len(static_ids)):
        raise f.fail("static_lo", "static_ids, static_lo and static_hi differ in length")
    _check_boxes(f, "static", static_lo, static_hi)
    _check_ids(f, "static_ids", static_ids)
    return static_ids, static_lo, static_hi


@dataclass
class _FrameColumns:
    """The per-frame arrays of a recording file: frame ``k`` holds rows
    ``offsets[k]:offsets[k + 1]`` of ``ids``/``lo``/``hi``/``awake``, and likewise for spawns
    and despawns."""

    frames: np.ndarray
    offsets: np.ndarray
    ids: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    awake: np.ndarray
    spawn_offsets: np.ndarray
    spawned: np.ndarray
    despawn_offsets: np.ndarray
    despawned: np.ndarray

    def objects(self, k: int) -> slice:
        """The rows of frame ``k`` in ``ids``/``lo``/``hi``/``awake``."""
        return slice(self.offsets[k], self.offsets[k + 1])

    def spawns(self, k: int) -> np.ndarray:
        """The ids listed as spawned during frame ``k``."""
        return self.spawned[self.spawn_offsets[k]:self.spawn_offsets[k + 1]]

    def despawns(self, k: int) -> np.ndarray:
        """The ids listed as despawned during frame ``k``."""
        return self.despawned[self.despawn_offsets[k]:self.despawn_offsets[k + 1]]


def _read_frame_columns(f: _Fields) -> _FrameColumns:
    """The per-frame arrays, each checked on its own: types, lengths against their offsets,
    boxes and id range (how frames relate to each other is :func:`_append_frames`' job)."""
    frames = _read_frame_numbers(f)
    nf = len(frames)
    offsets = _check_offsets(f, "offsets", nf)
    ids, lo, hi = f.get("ids", "int", 1), f.get("lo", "float", 2, 3), f.get("hi", "float", 2, 3)
    awake = f.get("awake", "bool", 1)
    total = offsets[-1]
    for name, arr in (("ids", ids), ("lo", lo), ("hi", hi), ("awake", awake)):
        if len(arr) != total:
            raise f.fail(name, f"holds {len(arr)} rows but 'offsets' ends at {total}")
    _check_boxes(f, "", lo, hi)
    _check_id_range(f, "ids", ids)
    spawn_offsets = _check_offsets(f, "spawn_offsets", nf)
    spawned = f.get("spawned", "int", 1)
    despawn_offsets = _check_offsets(f, "despawn_offsets", nf)
    despawned = f.get("despawned", "int", 1)
    if len(spawned) != spawn_offsets[-1]:
        raise f.fail("spawned", "length does not match 'spawn_offsets'")
    if len(despawned) != despawn_offsets[-1]:
        raise f.fail("despawned", "length does not match 'despawn_offsets'")
    return _FrameColumns(frames, offsets, ids, lo, hi, awake, spawn_offsets, spawned,
                         despawn_offsets, despawned)


def _read_frame_numbers(f: _Fields) -> np.ndarray:
    """``frames``: at least one frame number, increasing."""
    frames = f.get("frames", "int", 1)
    if len(frames) > 1 and not (np.diff(frames) > 0).all():
        raise f.fail("frames", "frame numbers must increase")
    if len(frames) == 0:  # a replay needs one frame to start from
        raise f.fail("frames", "the recording holds no frames (nothing to replay)")
    return frames


def _append_frames(f: _Fields, recording: Recording, columns: _FrameColumns, static_ids: np.ndarray) -> None:
    """Check each frame against the static objects and the frame before it, then append it."""
    previous = np.empty(0, dtype=np.int64)
    for k in range(len(columns.frames)):
        frame = int(columns.frames[k])
        rows = columns.objects(k)
        frame_ids = columns.ids[rows]
        _check_frame_ids(f, frame, frame_ids, static_ids)
        if k:  # the first frame held has no frame before it to compare with
            _check_spawns(f, frame, frame_ids, previous, columns.spawns(k), columns.despawns(k))
        previous = frame_ids
        recording.append(FrameRecord(frame, frame_ids.astype(np.int64), columns.lo[rows].astype(np.float64),
                                     columns.hi[rows].astype(np.float64), columns.awake[rows].copy(),
                                     columns.spawns(k).astype(np.int64), columns.despawns(k).astype(np.int64)))


def _check_frame_ids(f: _Fields, frame: int, frame_ids: np.ndarray, static_ids: np.ndarray) -> None:
    """The ids of one frame are ascending, unique and none of them static."""
    if len(frame_ids) > 1 and not (np.diff(frame_ids) > 0).all():
        raise f.fail("ids", f"ids of frame {frame} are not ascending and unique")
    if np.isin(frame_ids, static_ids).any():
        raise f.fail("ids", f"frame {frame} moves a static object")


def _check_spawns(f: _Fields, frame: int, frame_ids: np.ndarray, previous: np.ndarray,
                  born: np.ndarray, gone: np.ndarray) -> None:
    """The spawns and despawns listed for a frame are exactly the ids that appear and disappear."""
    # Spawns and despawns are what replay inserts and removes: they must be the ids that
    # appear and disappear, or the index would meet ids it does not hold.
    if not np.array_equal(np.sort(born), np.setdiff1d(frame_ids, previous)):
        raise f.fail("spawned", f"frame {frame} lists spawns other than the ids "
                                "that appear in it")
    if not np.array_equal(np.sort(gone), np.setdiff1d(previous, frame_ids)):
        raise f.fail("despawned", f"frame {frame} lists despawns other than the "
                                  "ids that disappear in it")


def _check_offsets(f: _Fields, name: str, frames: int) -> np.ndarray:
    offsets = f.get(name, "int", 1)
    if len(offsets) != frames + 1 or offsets[0] != 0 or (np.diff(offsets) < 0).any():
        raise f.fail(name, f"expected {frames + 1} non-decreasing offsets starting at 0")
    return offsets.astype(np.int64)


def _check_boxes(f: _Fields, prefix: str, lo: np.ndarray, hi: np.ndarray) -> None:
    if len(lo) != len(hi):
        raise f.fail(prefix + ("_" if prefix else "") + "hi", "differs in length from lo")
    bad = np.flatnonzero((lo > hi).any(axis=1))
    if len(bad):
        raise f.fail(prefix + ("_" if prefix else "") + "lo", f"row {int(bad[0])} has lo > hi")


def _check_id_range(f: _Fields, name: str, ids: np.ndarray) -> None:
    if len(ids) and (ids.min() < 0 or ids.max() >= MAX_ID):
        raise f.fail(name, f"ids must be in [0, {MAX_ID})")


def _check_ids(f: _Fields, name: str, ids: np.ndarray) -> None:
    _check_id_range(f, name, ids)
    if len(np.unique(ids)) != len(ids):
        raise f.fail(name, "ids must be unique")
