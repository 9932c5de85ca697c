"""The line-oriented JSON frame format a running game can write (see ``docs/frame-format.md``).

One JSON object per line::

    {"static": [[id, minx, miny, minz, maxx, maxy, maxz], ...], "meta": {...}}   (optional, first)
    {"frame": n, "objects": [[id, minx, miny, minz, maxx, maxy, maxz, awake], ...]}

Every frame line lists every dynamic object alive at the end of that frame; an id that appears
is a spawn, an id that disappears a despawn. ``awake`` is ``true``/``false`` (or ``1``/``0``)
and may be left out (awake). Frame numbers increase. Blank lines are skipped.

:func:`load_frame_lines` reads the whole file before building anything: a malformed line
raises :class:`~spatial.errors.ParseError` (``path:line:column: message``) and nothing is
half-loaded. :func:`write_frame_lines` writes a recording in the same format.
"""
from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from spatial.atomic import atomic_writer
from spatial.bounded_json import check_json_bounds, loads_bounded
from spatial.errors import ParseError
from spatial.objects import MAX_ID

from .recording import FrameRecord, Recording

FRAME_KEYS = {"frame", "objects"}
HEADER_KEYS = {"static", "meta"}


class _Line:
    """One line of the file with helpers that locate what is wrong in it."""

    def __init__(self, path: str, number: int, text: str) -> None:
        self.path, self.number, self.text = path, number, text

    def fail(self, column: int, message: str) -> ParseError:
        return ParseError(self.path, self.number, max(column, 1), message)

    def key_column(self, key: str) -> int:
        at = self.text.find(json.dumps(key))
        return at + 1 if at >= 0 else 1

    def element_column(self, key: str, index: int, sub: int | None = None) -> int:
        """Column of element ``index`` of the array under ``key`` (or of its item ``sub``)."""
        start = self.text.find(json.dumps(key))
        if start < 0:
            return 1
        pos = self.text.find("[", start)
        if pos < 0:
            return start + 1
        element = -1
        for at, depth, count in _ValueScanner().value_starts(self.text, pos):
            if depth == 1:
                element = count
                if element == index and sub is None:
                    return at + 1
            elif depth == 2 and element == index and count == sub:
                return at + 1
        return start + 1


class _ValueScanner:
    """Walks one JSON array of a line character by character and tells where each value starts.

    The line has already parsed as JSON, so following strings, brackets and commas is enough.
    """

    # Per-depth state for up to this many levels; a parsed line nests no deeper
    # (spatial.bounded_json.MAX_JSON_DEPTH), so the array scanned stays below it.
    MAX_DEPTH = 64

    def __init__(self) -> None:
        self.depth = 0
        self.expect = [False] * self.MAX_DEPTH  # per depth: the next significant character starts a value
        self.seen = [-1] * self.MAX_DEPTH       # per depth: values started so far
        self.in_string = self.escape = False

    def value_starts(self, text: str, pos: int) -> Iterator[tuple[int, int, int]]:
        """``(offset, depth, count)`` of each value inside the array opening at ``text[pos]``,
        in text order: depth 1 is an element of that array, ``count`` its index at that depth."""
        for i in range(pos, len(text)):
            ch = text[i]
            if self.in_string:
                self._string_character(ch)
                continue
            if ch in " \t\r:":  # whitespace and object colons neither start nor end a value
                continue
            if ch in "]}":
                self.depth -= 1
                if self.depth == 0:  # the array itself closed
                    return
                continue
            if ch == ",":
                self.expect[self.depth] = True
                continue
            if self.depth < self.MAX_DEPTH and self.expect[self.depth]:
                self.expect[self.depth] = False
                self.seen[self.depth] += 1
                yield i, self.depth, self.seen[self.depth]
            self._enter(ch)

    def _string_character(self, ch: str) -> None:
        # Brackets and commas inside a string are text: only an unescaped quote ends it.
        if self.escape:
            self.escape = False
        elif ch == "\\":
            self.escape = True
        elif ch == '"':
            self.in_string = False

    def _enter(self, ch: str) -> None:
        """Follow the first character of a value: a string, or an array or object opening."""
        if ch == '"':
            self.in_string = True
        elif ch in "[{":
            self.depth += 1
            if self.depth < self.MAX_DEPTH:
                self.expect[self.depth] = True
                self.seen[self.depth] = -1


def line_document(line: _Line, bounds_checked: bool = False) -> dict:
    """The JSON object of one frame line, its keys checked (a header's or a frame's); one
    :class:`~spatial.errors.ParseError` naming the line and column otherwise."""
    doc = loads_bounded(line.text, line.path, first_line=line.number, bounds_checked=bounds_checked)
    if not isinstance(doc, dict):
        raise line.fail(1, "expected a JSON object per line")
    unknown = sorted(set(doc) - FRAME_KEYS - HEADER_KEYS)
    if unknown:
        raise line.fail(line.key_column(unknown[0]), f"unknown key '{unknown[0]}'")
    return doc


def frame_objects(line: _Line, doc: dict, static_ids: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(ids, lo, hi, awake)`` of a frame line's ``objects``, none of them a static id; one
    :class:`~spatial.errors.ParseError` naming the line, column and element otherwise."""
    if "objects" not in doc:
        raise line.fail(1, "missing 'objects'")
    ids, lo, hi, awake = _object_rows(line, "objects", doc["objects"], with_awake=True)
    clash = np.flatnonzero(np.isin(ids, static_ids))
    if len(clash):
        raise line.fail(line.element_column("objects", int(clash[0]), 0),
                        f"objects[{int(clash[0])}]: id {int(ids[clash[0]])} is a static object")
    return ids, lo, hi, awake


def _number(line: _Line, key: str, index: int, sub: int, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise line.fail(line.element_column(key, index, sub),
                        f"{key}[{index}][{sub}]: expected a finite number, got {json.dumps(value)}")
    return float(value)


def _object_rows(line: _Line, key: str, rows: Any, with_awake: bool):
    if not isinstance(rows, list):
        raise line.fail(line.key_column(key), f"'{key}' must be a list of objects")
    n = len(rows)
    ids = np.empty(n, dtype=np.int64)
    lo = np.empty((n, 3))
    hi = np.empty((n, 3))
    awake = np.ones(n, dtype=bool)
    sizes = (7, 8) if with_awake else (7,)
    shape = "[id, minx, miny, minz, maxx, maxy, maxz" + (", awake]" if with_awake else "]")
    seen: dict[int, int] = {}
    for k, row in enumerate(rows):
        if not isinstance(row, list) or len(row) not in sizes:
            got = f"{len(row)} items" if isinstance(row, list) else json.dumps(row)
            raise line.fail(line.element_column(key, k), f"{key}[{k}]: expected {shape}, got {got}")
        oid = row[0]
        if isinstance(oid, bool) or not isinstance(oid, int) or not 0 <= oid < MAX_ID:
            raise line.fail(line.element_column(key, k, 0),
                            f"{key}[{k}]: id must be an integer in [0, {MAX_ID}), got {json.dumps(oid)}")
        if oid in seen:
            raise line.fail(line.element_column(key, k, 0),
                            f"{key}[{k}]: id {oid} already listed at {key}[{seen[oid]}]")
        seen[oid] = k
        ids[k] = oid
        for axis in range(3):
            lo[k, axis] = _number(line, key, k, 1 + axis, row[1 + axis])
            hi[k, axis] = _number(line, key, k, 4 + axis, row[4 + axis])
        if (lo[k] > hi[k]).any():
            raise line.fail(line.element_column(key, k),
                            f"{key}[{k}]: min {lo[k].tolist()} exceeds max {hi[k].tolist()}")
        if len(row) == 8:
            flag = row[7]
            if flag not in (True, False, 0, 1) or isinstance(flag, float):
                raise line.fail(line.element_column(key, k, 7),
                                f"{key}[{k}]: awake must be true, false, 1 or 0, got {json.dumps(flag)}")
            awake[k] = bool(flag)
    return ids, lo, hi, awake


def _add_static(line: _Line, static, rows):
    """The static objects so far with those of one more header line (an id only once)."""
    ids, lo, hi, _ = _object_rows(line, "static", rows, with_awake=False)
    if static is None:
        return ids, lo, hi
    again = np.flatnonzero(np.isin(ids, static[0]))
    if len(again):
        raise line.fail(line.element_column("static", int(again[0]), 0),
                        f"static[{int(again[0])}]: id {int(ids[again[0]])} already listed")
    return (np.concatenate([static[0], ids]), np.concatenate([static[1], lo]),
            np.concatenate([static[2], hi]))


def load_frame_lines(path: str | os.PathLike, capacity: int | None = None) -> Recording:
    """Read a frame-lines file into a :class:`Recording` (all or nothing).

    Parameters
    ----------
    path : path-like
    capacity : int, optional
        Ring capacity; default: every frame of the file.

    Raises
    ------
    ParseError
        ``path:line:column: message`` for the first malformed line (nothing is returned).
    """
    name = os.fspath(path)
    data = _read_file(name)
    if b"\x00PSB" in data:  # binary frames too: a live-link stream saved as it came
        from .live.frame_stream import read_stream

        return read_stream(data, name, capacity)
    if data.startswith(b"\xef\xbb\xbf"):  # tolerate a byte-order mark
        data = data[3:]
    lines = _text_lines(name, data)
    checked = _bounds_hold(data, name)
    reader = _FrameLinesReader(name)
    for number, text in enumerate(lines, start=1):
        if text.strip():
            reader.read(_Line(name, number, text), checked)
    return reader.recording(len(lines), capacity)


def _read_file(name: str) -> bytes:
    """The bytes of file ``name``; a :class:`~spatial.errors.ParseError` if it cannot be read."""
    if os.path.exists(name) and not os.path.isfile(name):  # a folder, or a pipe never ending
        raise ParseError(name, 0, 0, "cannot read: not a regular file")
    try:
        return Path(name).read_bytes()
    except OSError as exc:
        raise ParseError(name, 0, 0, f"cannot read: {exc.strerror or exc}") from None


def _text_lines(name: str, data: bytes) -> list[str]:
    """``data`` decoded as UTF-8 and split into lines; the first undecodable byte is located."""
    try:
        return data.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        line_number = data.count(b"\n", 0, exc.start) + 1
        column = len(data[data.rfind(b"\n", 0, exc.start) + 1:exc.start].decode()) + 1
        raise ParseError(name, line_number, column,
                         f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be decoded") from None


def _bounds_hold(data: bytes, name: str) -> bool:
    """Whether the whole file keeps within the JSON bounds (nesting, numbers) in one pass."""
    # When some line breaks the bounds (or leaves a string open, which can mislead the pass),
    # each line is checked on its own instead, so the first problem in file order is the one
    # reported.
    try:
        check_json_bounds(data, name)
    except ParseError:
        return False
    return True


class _FrameLinesReader:
    """Builds a recording from the lines of one file in order: the header lines, then frames."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.static: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self.meta: dict = {}
        self.records: list[FrameRecord] = []
        self.previous_ids = np.empty(0, dtype=np.int64)
        self.static_ids = np.empty(0, dtype=np.int64)  # sorted, for the clash check of each frame

    def read(self, line: _Line, bounds_checked: bool) -> None:
        """Take one non-blank line: a header part, a frame or both; the first problem raises."""
        doc = line_document(line, bounds_checked=bounds_checked)
        if "static" in doc or "meta" in doc:
            self._header(line, doc)
        if "frame" not in doc:
            if "objects" in doc:
                raise line.fail(line.key_column("objects"), "'objects' without 'frame'")
            if self.static is None:
                raise line.fail(1, "expected 'frame' and 'objects'")
            return
        self._frame(line, doc)

    def _header(self, line: _Line, doc: dict) -> None:
        """Add the static objects and meta of one header line (before any frame)."""
        if self.records:
            key = "static" if "static" in doc else "meta"
            raise line.fail(line.key_column(key), f"'{key}' may only come before the first frame")
        if "meta" in doc:
            if not isinstance(doc["meta"], dict):
                raise line.fail(line.key_column("meta"), "'meta' must be an object")
            self.meta = {**self.meta, **doc["meta"]}  # header parts may come on separate lines
        self.static = _add_static(line, self.static, doc.get("static", []))
        self.static_ids = np.sort(self.static[0])

    def _frame_number(self, line: _Line, doc: dict) -> int:
        """The line's frame number: an integer >= 0 after the previous frame's."""
        frame = doc["frame"]
        if isinstance(frame, bool) or not isinstance(frame, int) or frame < 0:
            raise line.fail(line.key_column("frame"), f"'frame' must be an integer >= 0, got {json.dumps(frame)}")
        if self.records and frame <= self.records[-1].frame:
            raise line.fail(line.key_column("frame"),
                            f"frame {frame} does not follow frame {self.records[-1].frame}")
        return frame

    def _frame(self, line: _Line, doc: dict) -> None:
        """Append the frame of one line, its spawns and despawns taken from the previous frame."""
        frame = self._frame_number(line, doc)
        ids, lo, hi, awake = frame_objects(line, doc, self.static_ids)
        order = np.argsort(ids)
        ids, lo, hi, awake = ids[order], lo[order], hi[order], awake[order]
        spawned = np.setdiff1d(ids, self.previous_ids) if self.records else np.empty(0, dtype=np.int64)
        despawned = np.setdiff1d(self.previous_ids, ids)
        self.records.append(FrameRecord(frame, ids, lo, hi, awake, spawned, despawned))
        self.previous_ids = ids

    def recording(self, line_count: int, capacity: int | None) -> Recording:
        """The recording of every line read; a file of ``line_count`` lines without frames fails."""
        if not self.records:
            raise ParseError(self.name, max(line_count, 1), 1, "no frame lines found")
        static = self.static
        if static is None:
            static = (np.empty(0, dtype=np.int64), np.empty((0, 3)), np.empty((0, 3)))
        meta = {**self.meta, "source": self.name}
        static_rows, static_lo, static_hi = static  # file order, as the header lists them
        recording = Recording(static_rows, static_lo, static_hi, capacity=capacity or len(self.records),
                              meta=meta)
        for record in self.records:
            recording.append(record)
        return recording


def _box_row(oid, lo, hi) -> list:
    return [int(oid)] + [float(v) for v in lo] + [float(v) for v in hi]


def write_frame_lines(recording: Recording, path: str | os.PathLike) -> None:
    """Write ``recording`` as frame lines (a header line with the static objects first), atomically."""
    with atomic_writer(path) as fh:
        header: dict[str, Any] = {"static": [_box_row(i, lo, hi) for i, lo, hi in
                             zip(recording.static_ids, recording.static_lo, recording.static_hi)]}
        if recording.meta:
            header["meta"] = recording.meta
        fh.write(json.dumps(header, separators=(",", ":")) + "\n")
        for rec in recording:
            objects = [_box_row(i, lo, hi) + [bool(a)] for i, lo, hi, a in
                       zip(rec.ids, rec.lo, rec.hi, rec.awake)]
            fh.write(json.dumps({"frame": rec.frame, "objects": objects}, separators=(",", ":")) + "\n")
