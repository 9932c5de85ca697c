"""A compiled pre-pass that reads the faces level editors write, for the ``.map`` parser.

TrenchBroom, J.A.C.K. and friends write every brush face on a line of its own, one space
between tokens, with plain decimal numbers and a bare texture name::

    ( 704 1824 576 ) ( 704 1792 576 ) ( 704 1792 448 ) grk_brk16 [ -2.22045e-16 -1 0 112 ] [ 0 0 -1 0 ] 0 1 1

:func:`scan_canonical_faces` finds every such line in one pass over the file's characters and
decodes its numbers. It accepts a subset of what the parser's face expression accepts, with
the same numbers, texture and end, so the parser can take a run of these faces as read and
falls back to its regular expressions for anything else (quoted textures, comments inside a
face, trailing surface flags, numbers whose exact value needs more than a fast conversion,
non-ASCII text next to a face...). A number is converted only when its decimal digits fit a
53-bit integer and its power of ten is at most 22 in magnitude: then one IEEE multiplication or
division of two exact doubles gives the correctly rounded value, the same double ``float()``
returns. The few other numbers are handed to ``float()`` itself.
"""
from __future__ import annotations

import math

import numba
import numpy as np

#: Values per face: three points, then either the Valve 220 axes, offsets, rotation and scales
#: (``ux uy uz uoff vx vy vz voff rot sx sy``) or the standard ``xoff yoff rot sx sy``.
VALVE_WIDTH, STANDARD_WIDTH = 20, 14

_EXACT_POWERS = np.array([10.0 ** k for k in range(23)])  # 1e0 .. 1e22, all exact doubles
_MAX_EXACT = 2 ** 53

# Character codes
_SPACE, _TAB, _LF, _VT, _FF, _CR = 32, 9, 10, 11, 12, 13
_MINUS, _DOT, _SLASH, _E = 45, 46, 47, 101
_OPEN, _CLOSE, _OPEN_AXIS, _CLOSE_AXIS = 40, 41, 91, 93


@numba.njit(cache=True, nogil=True)
def _digits(codes, p, n, mantissa, exact, scale):
    """Digits at ``p`` into ``mantissa``: ``(end, mantissa, exact, exponent change)``; each
    digit kept adds ``scale`` to the exponent (0 before the point, -1 after it)."""
    exponent = 0
    while p < n and 48 <= codes[p] <= 57:
        if mantissa < _MAX_EXACT:
            mantissa = mantissa * 10 + (codes[p] - 48)
            exponent += scale
        else:
            exact = False
        p += 1
    return p, mantissa, exact, exponent


@numba.njit(cache=True, nogil=True)
def _written_exponent(codes, p, n):
    """The ``-?\\d+`` after an ``e`` at ``p``: ``(end, value)``, end -1 if absent."""
    negative = False
    if p < n and codes[p] == _MINUS:
        negative = True
        p += 1
    start = p
    written = 0
    while p < n and 48 <= codes[p] <= 57:
        if written < 100000:
            written = written * 10 + (codes[p] - 48)
        p += 1
    if p == start:
        return -1, 0
    return p, (-written if negative else written)


@numba.njit(cache=True, nogil=True)
def _number(codes, p, n, powers):
    r"""Read ``-?\d+(\.\d+)?(e-?\d+)?`` at ``p``: ``(end, value, exact)``, end -1 if absent.

    ``exact`` is False when the fast conversion cannot promise the correctly rounded value
    (too many digits, or a power of ten beyond 22): the caller converts that one in Python.
    """
    negative = False
    if p < n and codes[p] == _MINUS:
        negative = True
        p += 1
    start = p
    p, mantissa, exact, exponent = _digits(codes, p, n, 0, True, 0)
    if p == start:
        return -1, 0.0, False
    if p < n and codes[p] == _DOT:
        start = p + 1
        p, mantissa, exact, fraction = _digits(codes, start, n, mantissa, exact, -1)
        if p == start:
            return -1, 0.0, False
        exponent += fraction
    if p < n and codes[p] == _E:
        p, written = _written_exponent(codes, p + 1, n)
        if p < 0:
            return -1, 0.0, False
        exponent += written
    if mantissa >= _MAX_EXACT or exponent < -22 or exponent > 22:
        exact = False
    if not exact:
        return p, np.nan, False
    value = float(mantissa)
    if exponent < 0:
        value = value / powers[-exponent]
    else:
        value = value * powers[exponent]
    return p, (-value if negative else value), True


@numba.njit(cache=True, nogil=True)
def _literal(codes, p, n, code):
    """``p + 2`` when ``codes[p:p+2]`` is ``code`` and one space, else -1."""
    if p + 1 < n and codes[p] == code and codes[p + 1] == _SPACE:
        return p + 2
    return -1


@numba.njit(cache=True, nogil=True)
def _numbers(codes, p, n, count, row, column, powers):
    """``count`` numbers, each followed by one space; the position after them or -1.

    A number the fast conversion cannot do is left NaN in ``row`` (converted afterwards).
    """
    for _ in range(count):
        p, value, exact = _number(codes, p, n, powers)
        if p < 0 or p >= n or codes[p] != _SPACE:
            return -1
        row[column] = value
        column += 1
        p += 1
    return p


@numba.njit(cache=True, nogil=True)
def _bracketed(codes, p, n, open_code, row, column, powers):
    """A point ``( x y z )`` (``open_code`` ``(``) or a Valve 220 axis ``[ x y z offset ]``
    (``[``), each token followed by one space; the position after it or -1."""
    point = open_code == _OPEN
    close_code = _CLOSE if point else _CLOSE_AXIS
    count = 3 if point else 4
    p = _literal(codes, p, n, open_code)
    if p < 0:
        return -1
    p = _numbers(codes, p, n, count, row, column, powers)
    if p < 0:
        return -1
    return _literal(codes, p, n, close_code)


@numba.njit(cache=True, nogil=True)
def _texture_end(codes, p, n):
    """The end of the bare texture name at ``p`` (``p`` itself when there is none)."""
    while p < n:
        c = codes[p]
        # printable ASCII but for the characters that end a bare texture name
        if c <= 32 or c >= 127 or c == 34 or c == 40 or c == 41 or c == 123 or c == 125 \
                or c == _OPEN_AXIS or c == _CLOSE_AXIS or c == _SLASH:
            break
        p += 1
    return p


@numba.njit(cache=True, nogil=True)
def _last_number(codes, p, n, row, column, powers):
    """The face's last number, which ends its line rather than being followed by a space."""
    p, value, _ = _number(codes, p, n, powers)
    if p < 0:
        return -1
    row[column] = value
    return p


@numba.njit(cache=True, nogil=True)
def _face_end(codes, p, n):
    """After the last number: the face ends its line (CR LF, LF or a lone CR) and the
    separator after it (white space and // comments) belongs to it; the end, or -1."""
    if p >= n or (codes[p] != _LF and codes[p] != _CR):
        return -1
    while True:
        while p < n and (codes[p] == _SPACE or _TAB <= codes[p] <= _CR):
            p += 1
        if p + 1 < n and codes[p] == _SLASH and codes[p + 1] == _SLASH:
            while p < n and codes[p] != _LF and codes[p] != _CR:
                p += 1
            continue
        break
    if p < n and codes[p] >= 128:
        return -1  # maybe white space the parser would skip too: let it decide
    return p


@numba.njit(cache=True, nogil=True)
def _face(codes, p, n, row, powers):
    """Read one face at ``p``; ``(end, valve, texture_start, texture_end)``, end -1 if not."""
    column = 0
    for _ in range(3):
        p = _bracketed(codes, p, n, _OPEN, row, column, powers)
        column += 3
        if p < 0:
            return -1, False, 0, 0
    texture_start = p
    p = _texture_end(codes, p, n)
    texture_end = p
    if p == texture_start or p >= n or codes[p] != _SPACE:
        return -1, False, 0, 0
    p += 1
    valve = p < n and codes[p] == _OPEN_AXIS
    last = 5
    if valve:
        for _ in range(2):
            p = _bracketed(codes, p, n, _OPEN_AXIS, row, column, powers)
            column += 4
            if p < 0:
                return -1, False, 0, 0
        last = 3
    p = _numbers(codes, p, n, last - 1, row, column, powers)
    if p < 0:
        return -1, False, 0, 0
    p = _last_number(codes, p, n, row, column + last - 1, powers)
    if p < 0:
        return -1, False, 0, 0
    p = _face_end(codes, p, n)
    if p < 0:
        return -1, False, 0, 0
    return p, valve, texture_start, texture_end


@numba.njit(cache=True, nogil=True)
def _scan(codes, powers, starts, ends, valve, texture_spans, numbers):
    n = len(codes)
    found = 0
    p = 0
    while p < n:
        # the first non-blank character of this line
        q = p
        while q < n and (codes[q] == _SPACE or codes[q] == _TAB):
            q += 1
        if q < n and codes[q] == _OPEN and found < len(starts):
            end, is_valve, t0, t1 = _face(codes, q, n, numbers[found], powers)
            if end >= 0:
                starts[found] = q
                ends[found] = end
                valve[found] = is_valve
                texture_spans[found, 0] = t0
                texture_spans[found, 1] = t1
                found += 1
        while p < n and codes[p] != _LF and codes[p] != _CR:
            p += 1
        p += 1
    return found


@numba.njit(cache=True, nogil=True)
def longest_token(codes):
    """``(start, length)`` of the longest run of characters holding no white space (tab, line
    feed, vertical tab, form feed, carriage return, space): the file's longest token, found in
    one pass without an array of the blanks' positions."""
    best_start, best_length = 0, 0
    start = 0
    for p in range(len(codes)):
        c = codes[p]
        if c == _SPACE or _TAB <= c <= _CR:
            if p - start > best_length:
                best_start, best_length = start, p - start
            start = p + 1
    if len(codes) - start > best_length:
        best_start, best_length = start, len(codes) - start
    return best_start, best_length


def scan_canonical_faces(text: str, codes: np.ndarray):
    """Every canonical face line of a file, decoded.

    Parameters
    ----------
    text : str
        The file's text.
    codes : ndarray of uint8 or uint32
        ``text`` as one code per character (so offsets are character offsets).

    Returns
    -------
    starts, ends : ndarray of int64, shape (K,)
        Offset of each face's ``(`` and offset just past the white space and comments after it
        (where the parser's face expression would end).
    valve : ndarray of bool, shape (K,)
        Valve 220 form (else standard).
    texture_spans : ndarray of int64, shape (K, 2)
        Start and end offsets of the texture name.
    numbers : ndarray of float64, shape (K, 20)
        The face's numbers in file order (the first 14 columns for a standard face), all
        finite: a face with a number too large to be finite is left to the parser, which
        reports it.
    """
    # A face opens three points, so there are at most this many; one spare row is the scratch
    # space of a last line that turns out not to be a face.
    lines = int(np.count_nonzero(codes == _OPEN)) // 3 + 1
    starts = np.empty(lines, dtype=np.int64)
    ends = np.empty(lines, dtype=np.int64)
    valve = np.empty(lines, dtype=np.bool_)
    texture_spans = np.empty((lines, 2), dtype=np.int64)
    numbers = np.zeros((lines, VALVE_WIDTH))
    found = _scan(codes, _EXACT_POWERS, starts, ends, valve, texture_spans, numbers)
    starts, ends, valve = starts[:found], ends[:found], valve[:found]
    texture_spans, numbers = texture_spans[:found], numbers[:found]
    # A standard face fills only its first columns; the rest may hold what a line that turned
    # out not to be a face left in the same row
    numbers[~valve, STANDARD_WIDTH:] = 0.0
    # The few numbers the compiled conversion left out, converted exactly by float() from the
    # face's own tokens (a canonical face is single-spaced and holds no comment, so its numbers
    # are the tokens before and after the texture name that are not brackets). A face whose
    # tokens do not line up keeps its NaN: it is left to the parser, which reports it.
    for face in np.flatnonzero(np.isnan(numbers).any(axis=1)).tolist():
        head = text[starts[face]:texture_spans[face, 0]].split()
        tail_start = int(texture_spans[face, 1])
        tail = text[tail_start:_line_end(text, tail_start)].split()
        tokens = [token for token in head + tail if token not in _BRACKETS]
        row = numbers[face]
        for column in np.flatnonzero(np.isnan(row)).tolist():
            if column < len(tokens):
                row[column] = _exact_number(tokens[column])
    keep = np.isfinite(numbers).all(axis=1)
    if keep.all():  # the usual case: no copy of the arrays
        return starts, ends, valve, texture_spans, numbers
    return starts[keep], ends[keep], valve[keep], texture_spans[keep], numbers[keep]


_BRACKETS = frozenset("()[]")


def _exact_number(token: str) -> float:
    """``float(token)``, or NaN when the token is not a number (the parser then reports it)."""
    try:
        return float(token)
    except ValueError:
        return math.nan


def _line_end(text: str, start: int) -> int:
    """The offset of the first CR or LF at or after ``start`` (the text's end if none)."""
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    carriage_return = text.find("\r", start, end)  # searched within this line only
    return end if carriage_return < 0 else carriage_return
