"""Wavefront OBJ triangles, read by a bulk reader of our own.

Only what a level needs is read: vertex positions (``v x y z``, a fourth ``w`` and vertex
colours are ignored), faces (``f`` with ``v``, ``v/vt``, ``v/vt/vn`` or ``v//vn`` corners,
negative indices counting back from the last vertex defined so far) and the object or group
(``o`` / ``g``) each face belongs to. Polygons are fanned into triangles from their first
corner. Texture coordinates, normals, materials, smoothing groups, lines, points and unknown
statements are skipped. Lines may end in LF, CR LF or a lone CR.

The common file (every vertex with three numbers, every face a triangle) is converted in a few
bulk passes; anything unusual or wrong falls back to a line-by-line pass that reports the first
problem as ``path:line:column: message``: index 0 (OBJ counts from 1), an index beyond the
vertices, a face with fewer than three corners, a vertex with fewer than three numbers, a
number that does not read or is not finite, bytes that are not UTF-8.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from spatial.errors import ParseError

_SLASH_TAIL = re.compile(r"/\S*")
# Statements converted in bulk at a time: bounds the temporary lists of tokens.
_STATEMENTS_PER_SLICE = 1 << 16


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ParseError(path, line, column, f"not UTF-8 text: byte 0x{data[exc.start]:02x} "
                                             "cannot be decoded (is this a binary file?)") from None


def _token_column(line: str, k: int) -> int:
    """1-based column of the ``k``-th white-space separated token of ``line`` (0 = keyword)."""
    for m, match in enumerate(re.finditer(r"\S+", line)):
        if m == k:
            return match.start() + 1
    return len(line) + 1


class _Lines:
    """The statements of an OBJ file that matter, with their 1-based line numbers."""

    def __init__(self, text: str):
        self.text = text
        self.vertex_rests: list[str] = []
        self.vertex_lines: list[int] = []
        self.face_rests: list[str] = []
        self.face_lines: list[int] = []
        self.group_marks: list[tuple[int, str]] = []  # (line, name) of each o / g statement
        vertex_rests, vertex_lines = self.vertex_rests, self.vertex_lines
        face_rests, face_lines = self.face_rests, self.face_lines
        # The list of lines is dropped after this loop; only the line-by-line passes need the
        # lines again, and split the text anew.
        for number, line in enumerate(text.splitlines(), 1):
            head = line[:2]
            if head == "v ":
                vertex_rests.append(line[2:])
                vertex_lines.append(number)
            elif head == "f ":
                face_rests.append(line[2:])
                face_lines.append(number)
            elif head[:1] != "#" and head not in ("vt", "vn"):
                self._other(number, line)  # the rest, and v / f written with tabs or indented

    def _other(self, number: int, line: str) -> None:
        parts = line.split(None, 1)
        if not parts:
            return
        keyword, rest = parts[0], (parts[1] if len(parts) > 1 else "")
        if keyword == "v":
            self.vertex_rests.append(rest)
            self.vertex_lines.append(number)
        elif keyword == "f":
            self.face_rests.append(rest)
            self.face_lines.append(number)
        elif keyword in ("o", "g"):
            self.group_marks.append((number, rest.strip()))


def _bulk_numbers(rests: list[str], convert, dtype, prepare=None) -> np.ndarray | None:
    """Three numbers per statement, converted a slice of statements at a time (so the
    temporary token lists stay small); None when any statement is not exactly three numbers
    that convert."""
    out = np.empty((len(rests), 3), dtype=dtype)
    for start in range(0, len(rests), _STATEMENTS_PER_SLICE):
        part = rests[start:start + _STATEMENTS_PER_SLICE]
        joined = " ".join(part)
        if prepare is not None:
            joined = prepare(joined)
        tokens = joined.split()
        if len(tokens) != 3 * len(part):
            return None
        try:
            out[start:start + len(part)] = np.fromiter(map(convert, tokens), dtype=dtype,
                                                       count=len(tokens)).reshape(-1, 3)
        except (ValueError, OverflowError):
            return None
    return out


def _without_slash_tails(joined: str) -> str:
    return _SLASH_TAIL.sub("", joined) if "/" in joined else joined


def _vertices(lines: _Lines, path: str) -> np.ndarray:
    vertices = _bulk_numbers(lines.vertex_rests, float, np.float64)
    if vertices is not None and np.isfinite(vertices).all():
        return vertices
    return _vertices_line_by_line(lines, path)


def _vertices_line_by_line(lines: _Lines, path: str) -> np.ndarray:
    rows = []
    texts = lines.text.splitlines()
    for rest, number in zip(lines.vertex_rests, lines.vertex_lines):
        text = texts[number - 1]
        parts = rest.split()
        if len(parts) < 3:
            raise ParseError(path, number, len(text.rstrip()) + 1,
                             f"a vertex needs three coordinates, got {len(parts)}")
        row = []
        for k, token in enumerate(parts[:3]):
            try:
                value = float(token)
            except ValueError:
                value = None
            if value is None or not np.isfinite(value):
                shown = token if len(token) <= 40 else token[:37] + "..."
                what = "is not a number" if value is None else "is not finite"
                raise ParseError(path, number, _token_column(text, k + 1),
                                 f"vertex coordinate '{shown}' {what}")
            row.append(value)
        rows.append(row)
    return np.array(rows, dtype=np.float64).reshape(-1, 3)


def _faces(lines: _Lines, vertex_count: int, path: str) -> tuple[np.ndarray, np.ndarray]:
    """``(triangles, face_of)``: vertex indices (0-based) of every triangle and its face row."""
    corners = _bulk_numbers(lines.face_rests, int, np.int64, _without_slash_tails)
    if corners is not None and len(corners) and corners.min() >= 1 \
            and corners.max() <= vertex_count:
        return corners - 1, np.arange(len(corners))
    return _faces_line_by_line(lines, vertex_count, path)


def _faces_line_by_line(lines: _Lines, vertex_count: int,
                        path: str) -> tuple[np.ndarray, np.ndarray]:
    vertex_lines = np.asarray(lines.vertex_lines, dtype=np.int64)
    triangles, face_of = [], []
    texts = lines.text.splitlines()
    for row, (rest, number) in enumerate(zip(lines.face_rests, lines.face_lines)):
        text = texts[number - 1]
        parts = rest.split()
        if len(parts) < 3:
            raise ParseError(path, number, len(text.rstrip()) + 1,
                             f"a face needs at least three corners, got {len(parts)}")
        defined = int(np.searchsorted(vertex_lines, number))  # vertices before this line
        corners = []
        for k, token in enumerate(parts):
            column = _token_column(text, k + 1)
            head = token.split("/", 1)[0]
            try:
                index = int(head)
            except ValueError:
                shown = head if len(head) <= 40 else head[:37] + "..."
                raise ParseError(path, number, column,
                                 f"face corner '{shown}' is not a vertex index") from None
            if index == 0:
                raise ParseError(path, number, column,
                                 "vertex index 0 does not exist (OBJ indices start at 1)")
            resolved = defined + index if index < 0 else index - 1
            if not 0 <= resolved < vertex_count:
                raise ParseError(path, number, column,
                                 f"vertex index {index} is out of range (the file has "
                                 f"{vertex_count} vertices)")
            corners.append(resolved)
        for i in range(1, len(corners) - 1):
            triangles.append((corners[0], corners[i], corners[i + 1]))
            face_of.append(row)
    return (np.array(triangles, dtype=np.int64).reshape(-1, 3),
            np.array(face_of, dtype=np.int64))


def _groups(lines: _Lines, face_of: np.ndarray, default: str) -> tuple[list[str], np.ndarray]:
    """Group names in order of first use and the group of every triangle."""
    marks = lines.group_marks
    names = [default] + [name or default for _, name in marks]
    mark_lines = np.array([line for line, _ in marks], dtype=np.int64)
    face_lines = np.asarray(lines.face_lines, dtype=np.int64)[face_of]
    mark_of = np.searchsorted(mark_lines, face_lines)  # the o / g in force; 0 before any
    first_use = np.sort(np.unique(mark_of, return_index=True)[1])
    ordered = list(dict.fromkeys(names[m] for m in mark_of[first_use].tolist()))
    position = {name: k for k, name in enumerate(ordered)}
    lookup = np.array([position.get(name, -1) for name in names], dtype=np.int64)
    return ordered, lookup[mark_of]


def read_obj(path: str | os.PathLike, progress=None) -> tuple[np.ndarray, list[str], np.ndarray]:
    """The triangles of an OBJ file.

    Parameters
    ----------
    path : str or os.PathLike
        The file; error messages start with it.
    progress : callable, optional
        ``progress(fraction, text)`` at the start of each pass over the file.

    Returns
    -------
    corners : ndarray, shape (T, 3, 3)
        Triangle corners, in file order (a polygon's fan in order).
    groups : list of str
        Object or group names in order of first use (the file name before any ``o``/``g``).
    group_of : ndarray of int, shape (T,)
        Index into ``groups`` of each triangle.

    Raises
    ------
    OSError
        The file cannot be read.
    spatial.errors.ParseError
        At the line and column of the first problem (see the module docstring).
    """
    report = progress or (lambda fraction, text: None)
    path = os.fspath(path)
    name = Path(path).name
    report(0.0, f"Reading {name}")
    lines = _Lines(_decode(Path(path).read_bytes(), path))
    report(0.35, f"Reading {len(lines.vertex_rests):,} vertices of {name}")
    vertices = _vertices(lines, path)
    report(0.6, f"Reading {len(lines.face_rests):,} faces of {name}")
    triangles, face_of = _faces(lines, len(vertices), path)
    report(0.9, f"Gathering {len(triangles):,} triangles of {name}")
    groups, group_of = _groups(lines, face_of, name)
    return vertices[triangles], groups, group_of
