"""JSON from files, with bounds on nesting and number length checked before decoding.

Python's :mod:`json` recurses once per nesting level (a document nested 100,000 deep raises
``RecursionError``), converts any run of digits to an ``int`` (past 4,300 digits that raises a
bare ``ValueError``) and turns a 400-digit float into infinity. Every file's JSON in the product
is read through :func:`loads_bounded` instead, which first measures the document in a few
vectorised passes and refuses, at the line and column of the culprit:

* nesting deeper than :data:`MAX_JSON_DEPTH` objects and lists;
* a number written with more than :data:`MAX_NUMBER_CHARS` characters.

Strings are not limited here (a reader that stores them bounds them by the file size).
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import ParseError

#: Deepest nesting of objects and lists. Our documents nest at most eight deep; metadata a
#: user adds has room to spare, and the decoder's recursion stays far from Python's limit.
MAX_JSON_DEPTH = 64
#: Longest number, in characters. A double needs at most 24 and a 64-bit integer 20; the bound
#: leaves room for hand-written decimals while refusing numbers no reader can use.
MAX_NUMBER_CHARS = 100

_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_OPENERS = np.array([ord("["), ord("{")], dtype=np.uint8)
_CLOSERS = np.array([ord("]"), ord("}")], dtype=np.uint8)
_NUMBER_CHARS = np.frombuffer(b"0123456789+-.eE", dtype=np.uint8)


def _position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of byte ``offset``."""
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    return line, len(data[start:offset].decode("utf-8", "replace")) + 1


def _outside_strings(codes: np.ndarray) -> np.ndarray:
    """Mask of the bytes outside JSON strings (quotes themselves count as inside).

    A quote is escaped when an odd number of backslashes precede it; the unescaped quotes
    alternate between opening and closing a string.
    """
    n = len(codes)
    index = np.arange(n, dtype=np.int64)
    last_plain = np.maximum.accumulate(np.where(codes != _BACKSLASH, index, -1))
    quotes = np.flatnonzero(codes == _QUOTE)
    before = np.where(quotes > 0, last_plain[np.maximum(quotes - 1, 0)], -1)
    run = np.where(quotes > 0, quotes - 1 - before, 0)  # backslashes just before each quote
    marks = np.zeros(n, dtype=np.int64)
    marks[quotes[run % 2 == 0]] = 1
    opened = np.cumsum(marks) - marks  # unescaped quotes strictly before each byte
    inside = (opened % 2 == 1) | (marks == 1)
    return ~inside


def check_json_bounds(data: bytes, source: str, first_line: int = 1) -> None:
    """Raise :class:`ParseError` when ``data`` nests too deep or holds too long a number.

    Parameters
    ----------
    data : bytes
        UTF-8 JSON text.
    source : str
        File name for the message.
    first_line : int
        Line number of the first line of ``data`` in its file.
    """
    if not data:
        return
    codes = np.frombuffer(data, dtype=np.uint8)
    outside = _outside_strings(codes)
    step = np.isin(codes, _OPENERS).astype(np.int32) - np.isin(codes, _CLOSERS)
    step[~outside] = 0
    depth = np.cumsum(step)
    deepest = int(depth.max())
    if deepest > MAX_JSON_DEPTH:
        at = int(np.argmax(depth > MAX_JSON_DEPTH))
        line, column = _position(data, at)
        raise ParseError(source, line + first_line - 1, column,
                         f"nesting deeper than {MAX_JSON_DEPTH} objects and lists")
    number = np.isin(codes, _NUMBER_CHARS) & outside
    if number.sum() > MAX_NUMBER_CHARS:
        breaks = np.flatnonzero(~number)
        edges = np.concatenate(([-1], breaks, [len(codes)]))
        runs = np.diff(edges) - 1
        long_runs = np.flatnonzero(runs > MAX_NUMBER_CHARS)
        if long_runs.size:
            at = int(edges[long_runs[0]]) + 1
            line, column = _position(data, at)
            raise ParseError(source, line + first_line - 1, column,
                             f"a number of {int(runs[long_runs[0]]):,} characters is longer "
                             f"than the limit of {MAX_NUMBER_CHARS}")


def loads_bounded(text: str | bytes, source: str, first_line: int = 1,
                  parse_constant: Callable[[str], Any] | None = None,
                  bounds_checked: bool = False) -> Any:
    """Decode JSON text after checking its bounds (see the module docstring).

    Parameters
    ----------
    text : str or bytes
        The document (bytes must be UTF-8).
    source : str
        File name used in error messages.
    first_line : int
        Line number of the first line of ``text`` in its file (for one line of a JSON-lines
        file).
    parse_constant : callable, optional
        Passed to :func:`json.loads` (``NaN``, ``Infinity``, ``-Infinity``); a number too
        large to be a finite float (``1e400``) goes to it too, with its text.
    bounds_checked : bool
        The caller ran :func:`check_json_bounds` on a text holding this one (a whole JSON-lines
        file, for instance), so the check is not repeated.

    Returns
    -------
    Any
        The decoded value.

    Raises
    ------
    spatial.errors.ParseError
        ``source:line:column: message`` for invalid JSON, too deep a nesting or too long a
        number; no other exception escapes for any input text.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if isinstance(text, (bytes, bytearray)):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line, column = _position(data, exc.start)
            raise ParseError(source, line + first_line - 1, column,
                             f"not UTF-8 text: byte 0x{data[exc.start]:02x} cannot be "
                             "decoded") from None
    if not bounds_checked:
        check_json_bounds(data, source, first_line)
    parse_float = None
    if parse_constant is not None:
        def parse_float(number: str):
            value = float(number)
            return value if math.isfinite(value) else parse_constant(number)
    try:
        return json.loads(text, parse_constant=parse_constant, parse_float=parse_float)
    except json.JSONDecodeError as exc:
        raise ParseError(source, exc.lineno + first_line - 1, exc.colno,
                         f"invalid JSON: {exc.msg}") from None
    except (RecursionError, ValueError) as exc:  # defensive: the bounds above prevent these
        raise ParseError(source, first_line, 1, f"cannot decode JSON: {exc}") from None
