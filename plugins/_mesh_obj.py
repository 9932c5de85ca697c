"""Wavefront OBJ triangles, read by a bulk reader of our own.

Only what a level needs is read: vertex positions (``v x y z``, a fourth ``w`` and vertex
colours are ignored), faces (``f`` with ``v``, ``v/vt``, ``v/vt/vn`` or ``v//vn`` corners,
negative indices counting back from the last vertex defined so far) and the object or group
(``o`` / ``g``) each face belongs to. Polygons are fanned into triangles from their first
corner. Texture coordinates, normals, materials, smoothing groups, points and unknown
statements are skipped. Lines may end in LF, CR LF or a lone CR; a line ending in ``\\``
continues on the next one.

Files from the wild hold edges too: ``l`` lines and ``f`` lines with fewer than three corners
(Blender reads both as loose edges, trimesh skips them). They are skipped and counted in one
warning, with the line of the first (``warn``, see :func:`read_obj`).

Vertices with three numbers are converted in a few bulk passes, and so are faces of any size
(negative indices resolved and polygons fanned in bulk); anything wrong falls back to a
line-by-line pass that reports the first problem as ``path:line:column: message``: index 0 (OBJ
counts from 1), an index beyond the vertices, a vertex with fewer than three numbers, a number
that does not read or is not finite, bytes that are not UTF-8.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from spatial.errors import ParseError

_SLASH_TAIL = re.compile(r"/\S*")
# Statements converted in bulk at a time: bounds the temporary lists of tokens, and how long
# one call into C holds the interpreter lock (the editor reads files on a worker thread; a
# slice of 65,536 statements held its window for up to 0.3 s).
_STATEMENTS_PER_SLICE = 1 << 14
# Characters of text split into lines at a time, for the same reason: ``str.splitlines`` on a
# whole 75 MB file held the lock for half a second.
_CHARS_PER_PIECE = 1 << 21


def _lines_of(text: str):
    """``text.splitlines()``, a piece of about :data:`_CHARS_PER_PIECE` characters at a time
    (each piece ends at a newline, so no line break is split)."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", min(start + _CHARS_PER_PIECE, size))
        end = size if end == -1 else end + 1
        yield from text[start:end].splitlines()
        start = end


def _decode(data: bytes, path: str, warn) -> str:
    """The file's text: UTF-8 (with or without a byte-order mark) or UTF-16 with its mark.

    Older exporters write names (materials, groups) in a Windows code page; such a file is
    read as Latin-1 with a warning, since every number and keyword is ASCII either way. A file
    with NUL bytes is binary and refused at the first byte that is not UTF-8.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            pass  # reported below at the first byte that does not decode
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if b"\0" not in data:
            line = data.count(b"\n", 0, exc.start) + 1
            if warn is not None:
                warn(f"{path}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x}): read as Latin-1, "
                     "so names may show other letters")
            return data.decode("latin-1")
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
        self.edge_lines: list[int] = []  # each l statement (a polyline: skipped, counted)
        self._corner_counts: np.ndarray | None = None
        if "\\\n" in text or "\\\r" in text:
            text = self.text = _join_continuations(text)
        vertex_rests, vertex_lines = self.vertex_rests, self.vertex_lines
        face_rests, face_lines = self.face_rests, self.face_lines
        # The list of lines is dropped after this loop; only the line-by-line passes need the
        # lines again, and split the text anew.
        for number, line in enumerate(_lines_of(text), 1):
            head = line[:2]
            if head == "v ":
                vertex_rests.append(line[2:])
                vertex_lines.append(number)
            elif head == "f ":
                face_rests.append(line[2:])
                face_lines.append(number)
            elif head[:1] != "#" and head not in ("vt", "vn"):
                self._other(number, line)  # the rest, and v / f written with tabs or indented

    def corner_counts(self) -> np.ndarray:
        """How many corners each face statement has (counted once, on first use)."""
        if self._corner_counts is None:
            self._corner_counts = _corner_counts(self.face_rests)
        return self._corner_counts

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
        elif keyword == "l":
            self.edge_lines.append(number)


def _join_continuations(text: str) -> str:
    """``text`` with each line ending in a backslash joined to the next; the joined statement
    keeps the number of its first line and empty lines take the place of the others, so every
    later line keeps its number."""
    out: list[str] = []
    pending: list[str] = []
    for line in text.splitlines():
        if line.endswith("\\"):
            pending.append(line[:-1])
            continue
        out.append(" ".join([*pending, line]))
        out.extend([""] * len(pending))
        pending = []
    if pending:
        out.append(" ".join(pending))
        out.extend([""] * (len(pending) - 1))
    return "\n".join(out)


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
    """``(triangles, face_of)``: vertex indices (0-based) of every triangle and its face row.

    Faces with fewer than three corners give no triangle."""
    bulk = _bulk_faces(lines, vertex_count)
    if bulk is not None:
        return bulk
    return _faces_line_by_line(lines, vertex_count, path)


def _corner_counts(rests: list[str]) -> np.ndarray:
    """Tokens of each statement (``str.split`` is faster here than counting on the bytes),
    a slice of statements at a time (one call over 2,000,000 held the lock for 0.6 s)."""
    counts = np.empty(len(rests), dtype=np.int64)
    for start in range(0, len(rests), _STATEMENTS_PER_SLICE):
        part = rests[start:start + _STATEMENTS_PER_SLICE]
        counts[start:start + len(part)] = np.fromiter(map(len, map(str.split, part)),
                                                      dtype=np.int64, count=len(part))
    return counts


def _bulk_faces(lines: _Lines, vertex_count: int) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_faces` in a few array passes; None when any corner is not a valid index (the
    line-by-line pass then finds and reports the first)."""
    rests = lines.face_rests
    counts = lines.corner_counts()
    index = np.empty(int(counts.sum()), dtype=np.int64)
    filled = 0
    for start in range(0, len(rests), _STATEMENTS_PER_SLICE):
        tokens = _without_slash_tails(" ".join(rests[start:start + _STATEMENTS_PER_SLICE])).split()
        if filled + len(tokens) > len(index):
            return None
        try:
            index[filled:filled + len(tokens)] = np.fromiter(map(int, tokens), dtype=np.int64,
                                                             count=len(tokens))
        except (ValueError, OverflowError):
            return None
        filled += len(tokens)
    if filled != len(index) or (index == 0).any():
        return None
    resolved = index - 1
    negative = index < 0
    if negative.any():  # counts back from the last vertex defined before the face's line
        defined = np.searchsorted(np.asarray(lines.vertex_lines, dtype=np.int64),
                                  np.asarray(lines.face_lines, dtype=np.int64))
        resolved[negative] = np.repeat(defined, counts)[negative] + index[negative]
    if len(resolved) and (resolved.min() < 0 or resolved.max() >= vertex_count):
        return None
    return _fan(resolved, counts)


def _fan(resolved: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Triangles ``(first, k + 1, k + 2)`` of every face's corners, faces under three corners
    left out."""
    per_face = np.maximum(counts - 2, 0)
    face_of = np.repeat(np.arange(len(counts), dtype=np.int64), per_face)
    first = (np.cumsum(counts) - counts)[face_of]
    k = np.arange(len(face_of), dtype=np.int64) - np.repeat(np.cumsum(per_face) - per_face, per_face)
    triangles = np.stack([resolved[first], resolved[first + k + 1], resolved[first + k + 2]], axis=1)
    return triangles, face_of


def _faces_line_by_line(lines: _Lines, vertex_count: int,
                        path: str) -> tuple[np.ndarray, np.ndarray]:
    vertex_lines = np.asarray(lines.vertex_lines, dtype=np.int64)
    triangles, face_of = [], []
    texts = lines.text.splitlines()
    for row, (rest, number) in enumerate(zip(lines.face_rests, lines.face_lines)):
        text = texts[number - 1]
        parts = rest.split()
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


def read_obj(path: str | os.PathLike, progress=None,
             warn=None) -> tuple[np.ndarray, list[str], np.ndarray]:
    """The triangles of an OBJ file.

    Parameters
    ----------
    path : str or os.PathLike
        The file; error messages start with it.
    progress : callable, optional
        ``progress(fraction, text)`` at the start of each pass over the file.
    warn : callable, optional
        ``warn(line)`` hears one line counting the edges skipped (``l`` lines and faces with
        fewer than three corners), if there are any.

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
    lines = _Lines(_decode(Path(path).read_bytes(), path, warn))
    report(0.35, f"Reading {len(lines.vertex_rests):,} vertices of {name}")
    vertices = _vertices(lines, path)
    report(0.6, f"Reading {len(lines.face_rests):,} faces of {name}")
    triangles, face_of = _faces(lines, len(vertices), path)
    skipped = _edges_skipped(lines, path)
    if skipped and warn is not None:
        warn(skipped)
    report(0.9, f"Gathering {len(triangles):,} triangles of {name}")
    groups, group_of = _groups(lines, face_of, name)
    return vertices[triangles], groups, group_of


def _edges_skipped(lines: _Lines, path: str) -> str | None:
    """The one warning line for the edges a file holds (None without any)."""
    short = np.flatnonzero(lines.corner_counts() < 3)
    face_lines = [lines.face_lines[int(k)] for k in short[:1]]
    total = len(short) + len(lines.edge_lines)
    if not total:
        return None
    first = min(face_lines + lines.edge_lines[:1])
    kinds = []
    if len(short):
        kinds.append(f"{len(short):,} face{'s' if len(short) > 1 else ''} with fewer than three corners")
    if lines.edge_lines:
        kinds.append(f"{len(lines.edge_lines):,} 'l' line{'s' if len(lines.edge_lines) > 1 else ''}")
    return (f"{path}: skipped {total:,} loose edge{'s' if total > 1 else ''} "
            f"({' and '.join(kinds)}; the first at line {first}): a level holds triangles only")
