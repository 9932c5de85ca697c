"""Syntax of Quake-family ``.map`` files: parse into plain dataclasses and write them back.

This layer knows the text format only; it keeps everything as written (texture names, offsets,
axes, trailing surface flags, key/values in file order with duplicates) so a map survives a
round trip, and it knows nothing of the scene model built on top of it.

What is accepted
----------------
* A file is a sequence of entities ``{ ... }``. An entity holds ``"key" "value"`` pairs and
  brushes ``{ face face ... }`` in any order. Brush entities (``worldspawn``, ``func_door``,
  TrenchBroom layers and groups, which are ``func_group`` entities carrying ``_tb_type``) are
  simply entities that own brushes.
* A face is three plane points ``( x y z )``, a texture name (bare, or quoted if it holds spaces),
  then either the standard form ``xoff yoff rotation xscale yscale`` or the Valve 220 form
  ``[ ux uy uz uoff ] [ vx vy vz voff ] rotation xscale yscale``. Further tokens on the line
  where the face ends (Quake 2/3 contents, flags and value) are kept verbatim in
  :attr:`MapFace.extra`; on a later line they are stray tokens, not part of the face.
* ``//`` comments may appear anywhere between tokens; any whitespace separates tokens (tabs, CR LF)
  and none is needed where the split is unambiguous, as in ``)(`` or ``(0 0 0)``.
* Numbers take any decimal float form (``1``, ``-2.``, ``.5``, ``1.000000``, ``-2.22045e-16``);
  NaN and infinities are rejected.
* Quoted strings end on the line they start. ``\\"`` stands for a quote and ``\\\\`` for a
  backslash; any other backslash is literal, so ``"wad" "\\quake\\id1.wad"`` reads as written.
* The comment lines before the first entity form :attr:`MapFile.header` (TrenchBroom's
  ``// Game: Quake`` and ``// Format: Valve``); the ``// entity N`` and ``// brush N`` markers
  are not kept, the writer numbers entities and brushes afresh. Other comments are dropped.
* Lines end with LF, CR LF or a lone CR (old Mac files), even mixed; a whole map may sit on one
  line. Lines and columns count the same whichever ending a file uses.
* An empty file, or one holding only whitespace and comments, is a valid map with no entities.
* The file format is that of the faces (one file uses one form; mixing them is an error), or,
  in a map without faces, the ``// Format:`` header, then worldspawn's ``"mapversion" "220"``.

What is rejected
----------------
Every problem raises :class:`spatial.errors.ParseError` whose ``line`` and ``column`` (1-based,
columns count characters) point at it: bytes that are not UTF-8, control characters, stray
tokens, unterminated strings, brushes and entities (reported where they were opened), faces with
missing or malformed parts, NaN or infinite numbers, faces whose three plane points are collinear
or coincident, patches and other non-brush blocks (``patchDef2``, ``brushDef`` ...), faces whose
form contradicts the rest of the file or its ``// Format:`` header, header lines announcing
two formats, a token (a run of characters between white space) longer than
:data:`MAX_TOKEN_CHARS` and a line longer than :data:`MAX_LINE_CHARS`. When a line stops short
(a truncated face, a key without its value) the error points just past its last token rather
than at the next line. Syntax is checked first and plane
geometry after it, and no partial result is ever returned.

Whether brushes are closed and convex, and how many faces a brush has (even none), is a question
for the scene model, not for this layer. Quake maps whose strings hold bytes of the Quake
character set rather than UTF-8 are rejected as not UTF-8.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter, is_, itemgetter
from pathlib import Path

import numpy as np

from spatial.atomic import atomic_writer
from spatial.collector import collector_paused
from spatial.errors import ParseError

from .scan import STANDARD_WIDTH, VALVE_WIDTH, longest_token, scan_canonical_faces


class SharedNumbers:
    """The numbers of many faces as Python floats and tuples in which equal values are one
    shared object.

    A map repeats its numbers: texture offsets, rotations and scales are mostly 0 and 1, each
    corner coordinate appears on several faces, and so does each corner and each pair of
    offsets or scales. One object per number or per tuple cost 24 to 64 bytes each, 14 numbers
    and 6 tuples per face (about 600 MB for 200,000 box brushes); sharing them keeps the faces
    verbatim (equal means the same bits, so ``-0.0`` stays itself) for a fraction of that.

    Parameters
    ----------
    numbers : ndarray of float64, shape (F, W)
        One row per face.
    """

    def __init__(self, numbers: np.ndarray) -> None:
        rows, width = numbers.shape
        bits = numbers.view(np.int64)
        # Distinct values column by column (small sorts), then across columns: every number is
        # a code into one table of shared floats, found by a binary search column by column (no
        # inverse array of every number is held at once).
        every = [np.unique(bits[:, c]) for c in range(width)]
        distinct = np.unique(np.concatenate(every)) if every else np.empty(0, dtype=np.int64)
        del every
        self.floats = np.fromiter(distinct.view(np.float64).tolist(), dtype=object,
                                  count=len(distinct))
        self.codes = np.empty((rows, width), dtype=np.min_scalar_type(max(len(distinct), 1)))
        for c in range(width):
            self.codes[:, c] = np.searchsorted(distinct, bits[:, c])

    def column(self, c: int) -> list[float]:
        """Column ``c`` as shared floats."""
        return self.floats[self.codes[:, c]].tolist()

    def tuples(self, columns: list[int]) -> list[tuple[float, ...]]:
        """Each row's numbers in ``columns`` as a tuple of shared floats; equal tuples are one
        object."""
        codes = self.codes[:, columns]
        base = max(len(self.floats), 1)
        if base ** len(columns) < 2 ** 62:  # one integer per row: a fast one-dimensional sort
            key = np.zeros(len(codes), dtype=np.int64)
            for c in range(len(columns)):
                key = key * base + codes[:, c].astype(np.int64)
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            distinct = codes[first]
        else:
            distinct, inverse = np.unique(codes, axis=0, return_inverse=True)
        made = zip(*(self.floats[distinct[:, c]].tolist() for c in range(len(columns))))
        shared = np.fromiter(made, dtype=object, count=len(distinct))
        return shared[inverse.reshape(-1)].tolist()

    def points(self) -> list[tuple]:
        """The three plane points of each row (its first 9 numbers), points shared."""
        rows = len(self.codes)
        corners = SharedNumbers.__new__(SharedNumbers)
        corners.floats = self.floats
        corners.codes = self.codes[:, :9].reshape(rows * 3, 3)
        each = corners.tuples([0, 1, 2])
        return list(zip(each[0::3], each[1::3], each[2::3]))


STANDARD = "standard"
VALVE220 = "valve220"
FORMATS = (STANDARD, VALVE220)

Vec3 = tuple[float, float, float]

#: The longest token (a run of characters between white space: a number, a texture name, a
#: quoted string without spaces) a map may hold. Real keys, values and texture names are far
#: shorter (Quake's own limit is 1,024); the bound keeps every expression's work per token small.
MAX_TOKEN_CHARS = 65_536
#: The longest line a map may hold. A whole map may sit on one line (some tools write no line
#: breaks), so this is far above any real line, yet it bounds a quoted string or a comment.
MAX_LINE_CHARS = 16 * 1024 * 1024

#: Three plane points are collinear when the sine of the angle between the two edge vectors they
#: span is below this: the plane normal would then be numerical noise rather than geometry.
COLLINEAR_SINE = 1e-10


@dataclass(slots=True)
class MapFace:
    """One brush face as written: three plane points, a texture and its alignment.

    ``line`` and ``column`` locate the face's ``(`` in the source and take no part in equality.
    """

    points: tuple[Vec3, Vec3, Vec3]
    texture: str
    offset: tuple[float, float]
    rotation: float
    scale: tuple[float, float]
    u_axis: Vec3 | None = None
    v_axis: Vec3 | None = None
    extra: tuple[str, ...] = ()
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    @property
    def is_valve220(self) -> bool:
        """True when the face carries explicit Valve 220 texture axes."""
        return self.u_axis is not None


@dataclass(slots=True)
class MapBrush:
    """A convex brush: the faces between its braces, in file order.

    ``span`` is the character range from its ``{`` to its ``}`` in the parsed text;
    ``verbatim``, when set, is written instead of the faces (a brush that does not bound a
    solid, kept exactly as it was read).
    """

    faces: list[MapFace]
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)
    span: tuple[int, int] = field(default=(0, 0), compare=False, repr=False)
    verbatim: str | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class MapEntity:
    """An entity: key/values in file order (duplicates kept) and the brushes it owns."""

    properties: list[tuple[str, str]]
    brushes: list[MapBrush] = field(default_factory=list)
    line: int = field(default=0, compare=False)
    column: int = field(default=0, compare=False)

    def get(self, key: str, default: str | None = None) -> str | None:
        """Return the value of ``key``; with duplicates the last one wins, as in the game.

        Parameters
        ----------
        key : str
            Property name, matched exactly (case-sensitive, as Quake does).
        default : str or None
            Returned when the key is absent.
        """
        for name, value in reversed(self.properties):
            if name == key:
                return value
        return default

    @property
    def classname(self) -> str | None:
        """The entity's ``classname`` or None when it has none."""
        return self.get("classname")


@dataclass(frozen=True, slots=True, eq=False)
class DecodedFaces:
    """Every face :func:`parse_map` read, with each attribute as a column (file order).

    The parser builds the faces from these very columns, so an importer can take the columns
    instead of reading the attributes back face by face; :meth:`columns_for` tells whether
    they still describe a given list of faces.
    """

    faces: list[MapFace]
    points: list
    textures: list
    offsets: list
    rotations: list
    scales: list
    u_axes: list
    v_axes: list
    extras: list
    plane_points: np.ndarray  # (F, 3, 3) float64, the numbers of ``points``

    def columns_for(self, faces: list[MapFace]) -> tuple | None:
        """``(points, textures, offsets, rotations, scales, u_axes, v_axes, extras)`` for
        ``faces``, or None unless ``faces`` are exactly the decoded faces, in order, each
        attribute still holding the object decoded (tuples, floats and strings are immutable,
        so then their content is unchanged too)."""
        if len(faces) != len(self.faces) or not all(map(is_, faces, self.faces)):
            return None
        columns = (self.points, self.textures, self.offsets, self.rotations, self.scales,
                   self.u_axes, self.v_axes, self.extras)
        for getter, column in zip(_FACE_ATTRIBUTES, columns):
            if not all(map(is_, map(getter, faces), column)):
                return None
        return columns


_FACE_ATTRIBUTES = tuple(attrgetter(name) for name in (
    "points", "texture", "offset", "rotation", "scale", "u_axis", "v_axis", "extra"))


@dataclass(slots=True)
class MapFile:
    """A whole ``.map`` file: its entities, face format and leading header comments.

    ``decoded_faces`` is filled by :func:`parse_map` (see :class:`DecodedFaces`); it takes no
    part in equality.
    """

    entities: list[MapEntity]
    format: str = STANDARD
    header: list[str] = field(default_factory=list)
    decoded_faces: DecodedFaces | None = field(default=None, compare=False, repr=False)
    #: the parsed text (a brush's ``span`` indexes it); empty for a map built in code
    source: str = field(default="", compare=False, repr=False)

    def counts(self) -> dict:
        """Count entities (brush entities included), brush entities, brushes and faces."""
        brushes = sum(len(e.brushes) for e in self.entities)
        return {
            "entities": len(self.entities),
            "brush_entities": sum(1 for e in self.entities if e.brushes),
            "brushes": brushes,
            "faces": sum(len(b.faces) for e in self.entities for b in e.brushes),
        }


# --------------------------------------------------------------------------------------------
# Lexical pieces. Possessive quantifiers keep the engine from backtracking into separators.

_SEP = r"\s*+(?://[^\r\n]*+\s*+)*+"
_NUMBER = r'[-+]?+(?:\d++(?:\.\d*+)?+|\.\d++)(?:[eE][-+]?+\d++)?+(?![^\s()\[\]{}"/])'
_STRING_BODY = r'(?:[^"\\\r\n]|\\[^\r\n])*+'
_QUOTED = '"' + _STRING_BODY + '"'
# Texture names may start with '{' (Quake's alpha-masked textures) or '*' or '+', but a lone
# brace, a bracket or a parenthesis is structure, not a name.
_BARE_TEXTURE = r'(?!\{(?:\s|\Z))(?:[^\s"()}\[\]/]|/(?!/))(?:[^\s"/]|/(?!/))*+'
_EXTRA = r'(?:[^\s"(){}\[\]/]|/(?!/))++'

_SEP_RE = re.compile(_SEP)
_QUOTED_RE = re.compile(_QUOTED)
_PROPERTY_RE = re.compile(f'"({_STRING_BODY})"{_SEP}"({_STRING_BODY})"')
_UNESCAPE_RE = re.compile(r'\\([\\"])')
_ESCAPE_RE = re.compile(r'"|\\(?=[\\"]|\Z)')
_COMMENT_RE = re.compile(r"//[^\r\n]*")
_MARKER_RE = re.compile(r"//\s*(?:entity|brush|patch)\s+\d+\s*\Z")
_FORMAT_HEADER_RE = re.compile(r"//\s*Format\s*:\s*(.*?)\s*\Z", re.IGNORECASE)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0b, 0x0c, *range(0x0e, 0x20), 0x7f])
_TOKEN_RE = re.compile(r'"[^"\r\n]*"?|[(){}\[\]]|(?:[^\s"(){}\[\]/]|/(?!/))+')
_BLOCK_RE = re.compile(r"([A-Za-z_]\w*)" + _SEP + r"\{")
_NOT_A_NUMBER_RE = re.compile(r"[-+]?(?:nan|inf|infinity|\d*\.?\d*#\w*)\Z", re.IGNORECASE)
_BARE_TEXTURE_FULL_RE = re.compile(_BARE_TEXTURE + r"\Z")
_EXTRA_FULL_RE = re.compile(_EXTRA + r"\Z")


@dataclass(frozen=True)
class _Item:
    """One element of the face grammar: its pattern and how an error names it."""

    pattern: str
    what: str
    captured: bool = False

    @property
    def regex(self) -> re.Pattern:
        return re.compile(self.pattern)

    @property
    def is_number(self) -> bool:
        return self.pattern == _NUMBER


def _literal(char: str, what: str) -> _Item:
    return _Item(re.escape(char), what)


def _number(what: str) -> _Item:
    return _Item(_NUMBER, what, captured=True)


def _point_items(ordinal: str) -> list[_Item]:
    return [_literal("(", f"'(' starting the {ordinal} plane point"),
            *(_number(f"the {axis} of the {ordinal} plane point (a number)") for axis in "xyz"),
            _literal(")", f"')' closing the {ordinal} plane point")]


def _axis_items(axis: str) -> list[_Item]:
    return [_literal("[", f"'[' starting the texture {axis} axis"),
            *(_number(f"the {c} of the texture {axis} axis (a number)") for c in "xyz"),
            _number(f"the texture {axis} offset (a number)"),
            _literal("]", f"']' closing the texture {axis} axis")]


def _alignment_items() -> list[_Item]:
    return [_number("the texture rotation (a number)"),
            _number("the texture x scale (a number)"),
            _number("the texture y scale (a number)")]


# The face grammar is written once, as these item lists: the fast whole-face expression below is
# assembled from them, and the error diagnosis walks the very same items one at a time.
_HEAD_ITEMS = [*_point_items("first"), *_point_items("second"), *_point_items("third"),
               _Item(f"{_QUOTED}|{_BARE_TEXTURE}", "a texture name", captured=True)]
_VALVE_ITEMS = [*_axis_items("U"), *_axis_items("V"), *_alignment_items()]
_STANDARD_ITEMS = [_number("the texture x offset (a number), or '[' starting a Valve 220 U axis"),
                   _number("the texture y offset (a number)"), *_alignment_items()]


def _join(items: list[_Item]) -> str:
    return "".join(_SEP + (f"({it.pattern})" if it.captured else f"(?:{it.pattern})")
                   for it in items)


_FACE_RE = re.compile(_join(_HEAD_ITEMS) + f"(?:{_join(_VALVE_ITEMS)}|{_join(_STANDARD_ITEMS)})"
                      + f"((?:[ \t]++{_EXTRA})*+){_SEP}")
# Group layout of _FACE_RE: 9 point coordinates, the texture, 11 Valve numbers, 5 standard
# numbers, the trailing extras.
_G_TEXTURE, _G_VALVE, _G_STANDARD, _G_EXTRA = 9, 10, 21, 26
# The numbers of a face as 1-based group numbers, for one Match.group call per face.
_VALVE_NUMBER_GROUPS = (*range(1, 10), *range(_G_VALVE + 1, _G_STANDARD + 1))
_STANDARD_NUMBER_GROUPS = (*range(1, 10), *range(_G_STANDARD + 1, _G_EXTRA + 1))
# The same, as pickers over ``Match.groups()`` tuples (0-based) for the bulk decoding pass.
_VALVE_NUMBERS = itemgetter(*(g - 1 for g in _VALVE_NUMBER_GROUPS))
_STANDARD_NUMBERS = itemgetter(*(g - 1 for g in _STANDARD_NUMBER_GROUPS))
_texture_of = itemgetter(_G_TEXTURE)
_extra_of = itemgetter(_G_EXTRA)


def _is_valve(groups: tuple) -> bool:
    return groups[_G_VALVE] is not None

# The same grammar as written by level editors: one space between tokens, plain decimal numbers,
# bare texture names, nothing after the face on its line. It accepts a subset of what _FACE_RE
# accepts, with the same groups and the same end, and Python's engine runs it about twice as
# fast (no separator or comment to try between tokens); any other face falls back to _FACE_RE.
_CANONICAL_NUMBER = r"-?\d++(?:\.\d++)?+(?:e-?\d++)?+"
_CANONICAL_TEXTURE = r'[^\s"(){}\[\]/]++'


def _join_canonical(items: list[_Item]) -> str:
    return " ".join(f"({_CANONICAL_NUMBER})" if it.is_number else
                    f"({_CANONICAL_TEXTURE})" if it.captured else it.pattern for it in items)


_CANONICAL_FACE_RE = re.compile(
    _join_canonical(_HEAD_ITEMS) + f" (?:{_join_canonical(_VALVE_ITEMS)}|"
    f"{_join_canonical(_STANDARD_ITEMS)})()(?=[\r\n]){_SEP}")


def _line_starts(codes: np.ndarray) -> np.ndarray:
    """Offsets where lines start: after a LF, after a CR not followed by LF, and 0.

    CR LF, LF and a lone CR (old Mac files) all end a line, so line and column stay right
    whichever a file uses. Only the positions of the breaks are kept, one mask at a time (a
    mask per test of a 100 MB file would be 100 MB each).
    """
    line_feeds = np.flatnonzero(codes == 10)
    returns = np.flatnonzero(codes == 13)
    following = returns + 1
    lone = following >= len(codes)
    lone[~lone] = codes[following[~lone]] != 10
    ends = np.union1d(line_feeds, returns[lone])
    return np.concatenate(([0], ends + 1)).astype(np.int64)


def _shortened(token: str) -> str:
    """``token`` quoted for an error message, cut to 40 characters."""
    if len(token) > 40:
        token = token[:37] + "..."
    return f"'{token}'"


def _unquote(token: str) -> str:
    body = token[1:-1]
    return _UNESCAPE_RE.sub(r"\1", body) if "\\" in body else body


def _header_format(line: str) -> str | None:
    """The face format a ``// Format: ...`` header line announces, or None for other lines."""
    m = _FORMAT_HEADER_RE.match(line)
    if m is None:
        return None
    return VALVE220 if "valve" in m.group(1).lower() else STANDARD


def _face_sources(records: list) -> tuple:
    """Where each face comes from: ``(fast_rows, fast_source, slow_rows, slow_matches)``, the
    faces read by the pre-pass (their rows and pre-pass rows) and the regular-expression
    matches (their rows and matches)."""
    fast_rows, fast_source, slow_rows, slow_matches = [], [], [], []
    row = 0
    for record in records:
        if type(record) is tuple:
            first, end = record
            fast_rows.append(np.arange(row, row + end - first))
            fast_source.append(np.arange(first, end))
            row += end - first
        else:
            slow_rows.append(row)
            slow_matches.append(record)
            row += 1
    empty = np.empty(0, dtype=np.int64)
    return (np.concatenate(fast_rows) if fast_rows else empty,
            np.concatenate(fast_source) if fast_source else empty,
            np.array(slow_rows, dtype=np.int64), slow_matches)


def _number_columns(numbers: np.ndarray, valve: bool) -> tuple:
    """``(points, offsets, rotations, scales, u_axes, v_axes)`` as lists of tuples of floats
    from the faces' number rows (one form for all), equal values shared."""
    shared = SharedNumbers(numbers)
    points = shared.points()
    if valve:
        # ux uy uz uoffset vx vy vz voffset rotation xscale yscale
        return (points, shared.tuples([12, 16]), shared.column(17), shared.tuples([18, 19]),
                shared.tuples([9, 10, 11]), shared.tuples([13, 14, 15]))
    nothing = [None] * len(numbers)
    return (points, shared.tuples([9, 10]), shared.column(11), shared.tuples([12, 13]),
            nothing, nothing)


class _Parser:
    """A single pass over the text; positions become line/column only where they are needed."""

    def __init__(self, text: str, path: str, data: bytes | None = None):
        self.text = text
        self.path = path
        if data is not None and len(data) == len(text):
            # UTF-8 bytes as many as characters: ASCII, the bytes are the codes (no copy)
            self.codes = np.frombuffer(data, dtype=np.uint8)
        elif text.isascii():
            self.codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
        else:  # one code unit per character, so offsets stay character offsets
            self.codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        self.line_starts = _line_starts(self.codes)
        self.header_format: str | None = None
        self.face_form: str | None = None
        self.face_form_at = (0, 0)
        # The scan only records where things are; faces are decoded in one bulk pass at the end
        # (numbers, texture attributes, line and column), which is several times faster than
        # building each face as it is met.
        self.face_records: list = []  # a Match, or a (first, end) run of canonical faces
        self.face_count = 0
        self.canonical: tuple = ()       # what scan_canonical_faces found
        self.canonical_starts: list[int] = []
        self.canonical_ends: list[int] = []
        self.canonical_run_last: list[int] = []
        self.canonical_cursor = 0
        self.brush_spans: list[tuple[MapBrush, int, int]] = []   # brush, first and end face
        self.located: list[tuple[object, int]] = []              # entities and brushes, offset
        self.faces: list[MapFace] = []
        self.decoded: DecodedFaces | None = None
        self.face_points = np.empty((0, 3, 3))

    # -- positions and errors --------------------------------------------------------------
    def where(self, pos: int) -> tuple[int, int]:
        """1-based line and column of the character offset ``pos``."""
        line = int(np.searchsorted(self.line_starts, pos, side="right"))
        return line, pos - int(self.line_starts[line - 1]) + 1

    def check_sizes(self) -> None:
        """Refuse a token or a line longer than the limits, before any expression runs on it."""
        codes = self.codes
        start, length = longest_token(codes)
        if length > MAX_TOKEN_CHARS:
            raise self.error(start, f"a token of {length:,} characters is longer than the "
                                    f"limit of {MAX_TOKEN_CHARS:,} (is this a .map file?)")
        starts = self.line_starts
        ends = np.append(starts[1:], len(codes))
        longest = int(np.argmax(ends - starts))
        length = int(ends[longest] - starts[longest])
        if length > MAX_LINE_CHARS:
            raise self.error(int(starts[longest]), f"a line of {length:,} characters is longer "
                                                   f"than the limit of {MAX_LINE_CHARS:,}")

    def error(self, pos: int, message: str) -> ParseError:
        line, column = self.where(pos)
        return ParseError(self.path, line, column, message)

    def describe(self, pos: int) -> str:
        """Name the token at ``pos`` for an error message."""
        if pos >= len(self.text):
            return "the end of the file"
        m = _TOKEN_RE.match(self.text, pos)
        return _shortened(m.group() if m else self.text[pos])

    def skip(self, pos: int) -> int:
        return _SEP_RE.match(self.text, pos).end()

    # -- grammar ---------------------------------------------------------------------------
    def parse(self) -> MapFile:
        text, n = self.text, len(self.text)
        pos = self.skip(0)
        header = []
        for comment in _COMMENT_RE.finditer(text, 0, pos):
            # A lone carriage return inside a comment would end the line for some readers: it
            # is kept as a space, so the header can be written back as the lines it shows.
            line = comment.group().rstrip()
            if _MARKER_RE.match(line):
                continue
            announced = _header_format(line)
            if announced is not None:
                if self.header_format not in (None, announced):
                    raise self.error(comment.start(), "this '// Format:' line contradicts an "
                                                      "earlier one")
                self.header_format = announced
            header.append(line)
        entities = []
        self.scan_canonical()
        try:
            while pos < n:
                if text[pos] != "{":
                    raise self.error(pos, "expected '{' starting an entity, got "
                                          f"{self.describe(pos)}")
                entity, pos = self.entity(pos)
                entities.append(entity)
                pos = self.skip(pos)
        except ParseError:
            # A face read before this syntax error may hold an error of its own (a number out of
            # range, the wrong form): the first problem in the file is the one reported.
            self.decode_faces()
            raise
        self.decode_faces()
        self.locate()
        self.check_planes()
        if self.face_form is not None:
            fmt = self.face_form
        elif self.header_format is not None:
            fmt = self.header_format
        elif entities and entities[0].get("mapversion") == "220":
            fmt = VALVE220
        else:
            fmt = STANDARD
        return MapFile(entities, fmt, header, self.decoded, text)

    def entity(self, start: int) -> tuple[MapEntity, int]:
        text, n = self.text, len(self.text)
        properties: list[tuple[str, str]] = []
        brushes: list[MapBrush] = []
        pos = start + 1
        while True:
            pos = self.skip(pos)
            if pos >= n:
                raise self.error(start, "unterminated entity: the file ends before the '}' "
                                        "closing the entity opened here")
            char = text[pos]
            if char == '"':
                m = _PROPERTY_RE.match(text, pos)
                if m is None:
                    self.diagnose_property(pos)
                key, value = m.group(1), m.group(2)
                if "\\" in key:
                    key = _UNESCAPE_RE.sub(r"\1", key)
                if "\\" in value:
                    value = _UNESCAPE_RE.sub(r"\1", value)
                properties.append((key, value))
                pos = m.end()
            elif char == "{":
                brush, pos = self.brush(pos)
                brushes.append(brush)
            elif char == "}":
                entity = MapEntity(properties, brushes)
                self.located.append((entity, start))
                return entity, pos + 1
            else:
                raise self.error(pos, "expected a quoted key, '{' starting a brush or '}' closing "
                                      f"the entity, got {self.describe(pos)}")

    def brush(self, start: int) -> tuple[MapBrush, int]:
        text, n = self.text, len(self.text)
        records = self.face_records
        first = self.face_count
        canonical_starts = self.canonical_starts
        n_canonical = len(canonical_starts)
        pos = self.skip(start + 1)
        while True:
            if pos >= n:
                raise self.error(start, "unterminated brush: the file ends before the '}' "
                                        "closing the brush opened here")
            char = text[pos]
            if char == "(":
                cursor = self.canonical_cursor
                while cursor < n_canonical and canonical_starts[cursor] < pos:
                    cursor += 1
                if cursor < n_canonical and canonical_starts[cursor] == pos:
                    # A run of faces the pre-pass has read already: take them all at once.
                    last = self.canonical_run_last[cursor]
                    records.append((cursor, last + 1))
                    self.face_count += last + 1 - cursor
                    self.canonical_cursor = last + 1
                    pos = self.canonical_ends[last]
                    continue
                self.canonical_cursor = cursor
                m = _CANONICAL_FACE_RE.match(text, pos) or _FACE_RE.match(text, pos)
                if m is None:
                    self.diagnose_face(pos)
                records.append(m)
                self.face_count += 1
                pos = m.end()  # both expressions end with the separator after the face
            elif char == "}":
                brush = MapBrush([], span=(start, pos + 1))
                self.brush_spans.append((brush, first, self.face_count))
                self.located.append((brush, start))
                return brush, pos + 1
            else:
                block = _BLOCK_RE.match(text, pos)
                if block is not None:
                    raise self.error(pos, f"'{block.group(1)}' blocks are not supported: only "
                                          "brushes made of plane faces can be read")
                hint = (" (is the '}' closing the previous brush or entity missing?)"
                        if char in '"{' else "")
                raise self.error(pos, "expected '(' starting a brush face or '}' closing the "
                                      f"brush, got {self.describe(pos)}{hint}")

    # -- bulk decoding of what the scan recorded ----------------------------------------------
    def scan_canonical(self) -> None:
        """Read every face written the way level editors write them in one compiled pass."""
        found = scan_canonical_faces(self.text, self.codes)
        starts, ends = found[0], found[1]
        # Faces that follow one another with nothing between them form a run.
        run_ends = np.append(np.flatnonzero(starts[1:] != ends[:-1]), len(starts) - 1)
        run_last = run_ends[np.searchsorted(run_ends, np.arange(len(starts)))]
        self.canonical = found
        self.canonical_starts = starts.tolist()
        self.canonical_ends = ends.tolist()
        self.canonical_run_last = run_last.tolist()

    def lines_and_columns(self, offsets) -> tuple[list[int], list[int]]:
        """1-based lines and columns of many character offsets at once."""
        at = np.asarray(offsets, dtype=np.int64)
        lines = np.searchsorted(self.line_starts, at, side="right")
        return lines.tolist(), (at - self.line_starts[lines - 1] + 1).tolist()

    def decode_faces(self) -> None:
        """Turn every recorded face into a :class:`MapFace`, checking numbers and form.

        Raises at the first face holding a number too large to be finite or written in the
        other face form (or the form the header contradicts).
        """
        records = self.face_records
        total = self.face_count
        # The walk over the text is over: what it looked up goes now, and the pre-pass's arrays
        # when this pass ends (over 300 MB for 200,000 brushes, still held while the faces are
        # located and their planes checked otherwise).
        self.face_records = []
        self.canonical_starts = self.canonical_ends = self.canonical_run_last = []
        c_starts, _, c_valve, c_textures, c_numbers = self.canonical
        self.canonical = ()
        if not total:
            return
        fast_rows, fast_source, slow_rows, slow_matches = _face_sources(records)
        groups = list(map(re.Match.groups, slow_matches))
        valve = np.empty(total, dtype=bool)
        valve[fast_rows] = c_valve[fast_source]
        valve[slow_rows] = np.fromiter(map(_is_valve, groups), dtype=bool, count=len(groups))
        starts = np.empty(total, dtype=np.int64)
        starts[fast_rows] = c_starts[fast_source]
        starts[slow_rows] = np.fromiter(map(re.Match.start, slow_matches), dtype=np.int64,
                                        count=len(slow_matches))
        starts = starts.tolist()

        first_valve = bool(valve[0])
        mixed = np.flatnonzero(valve != first_valve)
        count = int(mixed[0]) if mixed.size else total  # faces in the first face's form
        width = VALVE_WIDTH if first_valve else STANDARD_WIDTH
        pick = _VALVE_NUMBERS if first_valve else _STANDARD_NUMBERS
        numbers = np.empty((total, width))
        numbers[fast_rows] = c_numbers[fast_source, :width]
        in_form = int(np.searchsorted(slow_rows, count))  # slow faces before the first odd one
        slow_numbers = np.fromiter(
            map(float, chain.from_iterable(map(pick, groups[:in_form]))), dtype=np.float64,
            count=width * in_form).reshape(in_form, width)
        numbers[slow_rows[:in_form]] = slow_numbers
        # Within a face the numbers are checked before the form, as a reader would meet them;
        # faces of the pre-pass hold finite numbers only.
        infinite = slow_rows[:in_form][~np.isfinite(slow_numbers).all(axis=1)]
        if infinite.size and infinite[0] == 0:
            self.diagnose_face(starts[0])
        self.check_form(VALVE220 if first_valve else STANDARD, starts[0])
        if infinite.size:
            self.diagnose_face(starts[int(infinite[0])])
        if count < total:
            if in_form < len(slow_rows) and slow_rows[in_form] == count:
                odd = groups[in_form]
                odd_numbers = map(float, (_VALVE_NUMBERS if valve[count] else _STANDARD_NUMBERS)(odd))
                if not all(map(math.isfinite, odd_numbers)):
                    self.diagnose_face(starts[count])
            self.check_form(VALVE220 if valve[count] else STANDARD, starts[count])

        points, offsets, rotation, scales, u_axes, v_axes = _number_columns(numbers, first_valve)
        textures, extras = self.textures_and_extras(fast_rows, c_textures[fast_source], slow_rows,
                                                    groups, total)
        lines, cols = self.lines_and_columns(starts)
        self.faces = list(map(MapFace, points, textures, offsets, rotation, scales, u_axes,
                              v_axes, extras, lines, cols))
        self.face_points = numbers[:, :9].reshape(-1, 3, 3)
        self.decoded = DecodedFaces(self.faces, points, textures, offsets, rotation, scales,
                                    u_axes, v_axes, extras, self.face_points)

    def textures_and_extras(self, fast_rows, spans, slow_rows, groups, total: int) -> tuple:
        """Every face's texture name and extra tokens: the pre-pass's by their text spans,
        the matched faces' from their groups."""
        text = self.text
        textures = [""] * total
        # a level names few textures on many faces: one string object per name
        names: dict[str, str] = {}
        name = names.setdefault
        for r, a, b in zip(fast_rows.tolist(), spans[:, 0].tolist(), spans[:, 1].tolist()):
            texture = text[a:b]
            textures[r] = name(texture, texture)
        extras: list = [()] * total
        for r, g in zip(slow_rows.tolist(), groups):
            texture, extra = g[_G_TEXTURE], g[_G_EXTRA]
            textures[r] = _unquote(texture) if texture[0] == '"' else texture
            if extra:
                extras[r] = tuple(extra.split())
        return textures, extras

    def locate(self) -> None:
        """Give every face its brush and every entity and brush its line and column."""
        faces = self.faces
        for brush, first, end in self.brush_spans:
            brush.faces = faces[first:end]
        lines, columns = self.lines_and_columns([pos for _, pos in self.located])
        for (item, _), line, column in zip(self.located, lines, columns):
            item.line = line
            item.column = column

    def check_form(self, form: str, pos: int) -> None:
        name = {VALVE220: "Valve 220", STANDARD: "standard"}
        if self.face_form is None:
            if self.header_format is not None and self.header_format != form:
                raise self.error(pos, f"this face is in {name[form]} form but the file's "
                                      f"'// Format:' header announces {name[self.header_format]}")
            self.face_form, self.face_form_at = form, self.where(pos)
            return
        if form == self.face_form:
            return
        line, column = self.face_form_at
        raise self.error(pos, f"this face is in {name[form]} form but the first face "
                              f"(line {line}, column {column}) is in {name[self.face_form]} "
                              "form; a map file uses one face format throughout")

    def check_planes(self) -> None:
        """Reject faces whose three points do not span a plane (collinear or coincident)."""
        if not self.faces:
            return
        pts = self.face_points
        a = pts[:, 1] - pts[:, 0]
        b = pts[:, 2] - pts[:, 0]
        normal = np.cross(a, b)
        n2 = np.einsum("ij,ij->i", normal, normal)
        bound = COLLINEAR_SINE ** 2 * np.einsum("ij,ij->i", a, a) * np.einsum("ij,ij->i", b, b)
        bad = np.flatnonzero(n2 <= bound)
        if bad.size:
            face = self.faces[int(bad[0])]
            raise ParseError(self.path, face.line, face.column,
                             "the three plane points of this face are collinear, so they do not "
                             "define a plane")

    # -- error diagnosis -------------------------------------------------------------------
    def diagnose_property(self, pos: int) -> None:
        """Raise the precise error for a key/value pair _PROPERTY_RE rejected at ``pos``."""
        text = self.text
        key = _QUOTED_RE.match(text, pos)
        if key is None:
            raise self.error(pos, "unterminated string: no closing '\"' on the line it starts")
        value_pos = self.skip(key.end())
        if not text.startswith('"', value_pos):
            raise self.missing(key.end(), value_pos,
                               f"the quoted value of key '{_unquote(key.group())}'")
        raise self.error(value_pos, "unterminated string: no closing '\"' on the line it starts")

    def diagnose_face(self, start: int) -> None:
        """Walk the face grammar item by item from ``start`` and raise at the first misfit."""
        pos = start
        for item in _HEAD_ITEMS:
            pos = self.expect(item, pos)
        items = _VALVE_ITEMS if self.text.startswith("[", self.skip(pos)) else _STANDARD_ITEMS
        for item in items:
            pos = self.expect(item, pos)
        raise self.error(start, "malformed brush face")  # defensive: the items matched above

    def expect(self, item: _Item, pos: int) -> int:
        start = pos
        pos = self.skip(pos)
        m = item.regex.match(self.text, pos)
        if m is None:
            got = self.describe(pos)
            hint = (": NaN and infinite values are not allowed"
                    if item.is_number and _NOT_A_NUMBER_RE.match(got.strip("'")) else "")
            raise self.missing(start, pos, item.what, hint)
        if item.is_number and not math.isfinite(float(m.group())):
            raise self.error(pos, f"expected {item.what}, got {_shortened(m.group())}, which is too large "
                                  "to be a finite number")
        return m.end()

    def missing(self, after: int, at: int, what: str, hint: str = "") -> ParseError:
        """The error for ``what`` missing at ``at``, the first token after offset ``after``.

        When that token sits on a later line, the line that stops short is the problem (a
        truncated face, a key without its value), so the error points just past its last token.
        """
        got = self.describe(at)
        line, column = self.where(at)
        if line != self.where(after)[0]:
            return self.error(after, f"expected {what} before the end of the line (next comes "
                                     f"{got} at line {line}, column {column}){hint}")
        return self.error(at, f"expected {what}, got {got}{hint}")




def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = exc.start
        line = data.count(b"\n", 0, bad) + 1
        line_start = data.rfind(b"\n", 0, bad) + 1
        column = len(data[line_start:bad].decode("utf-8", "replace")) + 1
        raise ParseError(path, line, column, f"not UTF-8 text: byte 0x{data[bad]:02x} cannot be "
                                             "decoded (is this a binary file?)") from None


def parse_map(text: str | bytes, path: str = "<string>") -> MapFile:
    """Parse the text of a ``.map`` file.

    Parameters
    ----------
    text : str or bytes
        The file's content; bytes must be UTF-8 (a leading byte-order mark is ignored).
    path : str
        Name used in error messages.

    Returns
    -------
    MapFile
        Entities, brushes and faces in file order, the face format and the header comments.

    Raises
    ------
    spatial.errors.ParseError
        At the line and column of the first problem; see the module docstring for the rules.
    """
    may_hold_control = True
    data: bytes | None = None
    if isinstance(text, (bytes, bytearray, memoryview)):
        data = bytes(text)
        text = _decode(data, path)
        # Control characters are ASCII, so the same bytes; deleting them is a quick C pass
        # that tells whether the slower search for the first one's position is needed.
        may_hold_control = len(data.translate(None, _CONTROL_BYTES)) != len(data)
    if text.startswith("\ufeff"):
        text = text[1:]
    parser = _Parser(text, path, data)
    control = _CONTROL_RE.search(text) if may_hold_control else None
    if control is not None:
        raise parser.error(control.start(), f"control character U+{ord(control.group()):04X} is "
                                            "not allowed in a .map file (is this a binary file?)")
    parser.check_sizes()
    with collector_paused():
        return parser.parse()


def read_map(path: str | os.PathLike) -> MapFile:
    """Read and parse the ``.map`` file at ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The file to read; error messages start with it.

    Returns
    -------
    MapFile

    Raises
    ------
    OSError
        The file cannot be read.
    spatial.errors.ParseError
        The content is not a valid map (see :func:`parse_map`).
    """
    return parse_map(Path(path).read_bytes(), str(path))


# --------------------------------------------------------------------------------------------
# Writing

def _format_number(x: float) -> str:
    """Shortest text that reads back as exactly ``x``: integers without a decimal point."""
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"{x} cannot be written: NaN and infinite values are not allowed")
    if x.is_integer() and abs(x) < 1e15:
        if x == 0 and math.copysign(1.0, x) < 0:
            return "-0"
        return str(int(x))
    return repr(x)


def _quote(s: str, what: str) -> str:
    if "\n" in s or "\r" in s or _CONTROL_RE.search(s):
        raise ValueError(f"{what} {s!r} holds a line break or control character")
    return '"' + _ESCAPE_RE.sub(lambda m: "\\" + m.group(), s) + '"'


def _face_text(face: MapFace, valve: bool) -> str:
    num = _format_number
    parts = [" ".join(f"( {num(p[0])} {num(p[1])} {num(p[2])} )" for p in face.points)]
    texture = face.texture
    parts.append(texture if _BARE_TEXTURE_FULL_RE.match(texture) else _quote(texture, "texture"))
    if valve:
        if face.u_axis is None or face.v_axis is None:
            raise ValueError("the map format is valve220 but the face has no texture axes")
        u, v = face.u_axis, face.v_axis
        parts.append(f"[ {num(u[0])} {num(u[1])} {num(u[2])} {num(face.offset[0])} ] "
                     f"[ {num(v[0])} {num(v[1])} {num(v[2])} {num(face.offset[1])} ]")
    else:
        if face.u_axis is not None or face.v_axis is not None:
            raise ValueError("the map format is standard but the face has Valve 220 texture axes")
        parts.append(f"{num(face.offset[0])} {num(face.offset[1])}")
    parts.append(f"{num(face.rotation)} {num(face.scale[0])} {num(face.scale[1])}")
    for token in face.extra:
        if not _EXTRA_FULL_RE.match(token):
            raise ValueError(f"extra token {token!r} cannot be written as a bare token")
        parts.append(token)
    return " ".join(parts)


def brush_text(brush: MapBrush, fmt: str) -> str:
    """A brush as the writer writes it, from ``{`` to ``}`` (for a brush of a map built in code,
    which has no source text to keep)."""
    return "\n".join(["{", *(_face_text(f, fmt == VALVE220) for f in brush.faces), "}"])


def _export_header(mapfile: MapFile) -> list[str]:
    """The header lines, with a ``// Format:`` line corrected if it contradicts the format."""
    lines = []
    for line in mapfile.header:
        if not line.startswith("//") or "\n" in line or "\r" in line:
            raise ValueError(f"header line {line!r} is not a single '//' comment line")
        if _MARKER_RE.match(line):
            raise ValueError(f"header line {line!r} looks like an entity/brush marker, which "
                             "the writer generates itself")
        announced = _header_format(line)
        if announced is not None and announced != mapfile.format:
            line = "// Format: Valve" if mapfile.format == VALVE220 else "// Format: Standard"
        lines.append(line)
    return lines


def write_map(mapfile: MapFile) -> str:
    """Write a map as TrenchBroom does: header, ``// entity N`` and ``// brush N`` markers.

    Numbers are written in the shortest form that reads back exactly (``1`` rather than
    ``1.000000``), so ``parse_map(write_map(m)) == m`` for every parsed ``m``.

    Raises
    ------
    ValueError
        Unknown format, a face whose form does not match it, NaN or infinite numbers, strings
        with line breaks, or extra tokens that would not read back as single tokens; the message
        names the entity, brush and face.
    """
    if mapfile.format not in FORMATS:
        raise ValueError(f"unknown map format {mapfile.format!r}; expected one of {FORMATS}")
    valve = mapfile.format == VALVE220
    out = _export_header(mapfile)
    for e, entity in enumerate(mapfile.entities):
        out.append(f"// entity {e}")
        out.append("{")
        for key, value in entity.properties:
            out.append(f"{_quote(key, 'key')} {_quote(value, f'value of key {key!r}')}")
        for b, brush in enumerate(entity.brushes):
            out.append(f"// brush {b}")
            if brush.verbatim is not None:  # kept as read: not a solid, never rewritten
                out.append(brush.verbatim)
                continue
            out.append("{")
            for f, face in enumerate(brush.faces):
                try:
                    out.append(_face_text(face, valve))
                except ValueError as exc:
                    raise ValueError(f"entity {e}, brush {b}, face {f}: {exc}") from None
            out.append("}")
        out.append("}")
    return "\n".join(out) + "\n" if out else ""


_CHUNK = 1 << 20


def _write_bytes(handle, data: bytes) -> None:
    """Write ``data`` in chunks (a full disk fails part-way, like this)."""
    view = memoryview(data)
    for start in range(0, len(view), _CHUNK):
        handle.write(view[start:start + _CHUNK])


def save_map(mapfile: MapFile, path: str | os.PathLike) -> None:
    """Write ``mapfile`` to ``path`` atomically.

    The text goes to a temporary file in the same folder, is flushed and fsynced, then replaces
    ``path`` in one ``os.replace``. On any failure the temporary file is removed and the file
    previously at ``path`` is left untouched. An existing file's permission bits are kept.

    Parameters
    ----------
    mapfile : MapFile
        What to write (see :func:`write_map`).
    path : str or os.PathLike
        Destination; its folder must exist.

    Raises
    ------
    ValueError
        ``mapfile`` cannot be written (nothing is touched on disk).
    OSError
        Writing failed; the previous file is intact and no temporary file is left behind.
    """
    data = write_map(mapfile).encode("utf-8")
    with atomic_writer(path, binary=True) as handle:
        _write_bytes(handle, data)
