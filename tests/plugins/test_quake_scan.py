"""The compiled pre-pass over canonical face lines gives exactly what ``float()`` gives."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugins.quake_map.scan import scan_canonical_faces
from plugins.quake_map.syntax import parse_map

POINTS = "( 0 0 0 ) ( 0 1 0 ) ( 1 0 0 )"


def _scan(text: str):
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    return scan_canonical_faces(text, codes)


def _number_text():
    digits = st.text("0123456789", min_size=1, max_size=25)
    plain = st.builds(lambda sign, i, f, e: f"{sign}{i}{f}{e}", st.sampled_from(["", "-"]), digits,
                      st.one_of(st.just(""), digits.map(lambda d: "." + d)),
                      st.one_of(st.just(""), st.integers(-340, 330).map(lambda e: f"e{e}")))
    written = st.floats(allow_nan=False, allow_infinity=False).map(repr).filter(
        lambda t: "E" not in t and "+" not in t)
    return st.one_of(plain, written)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(st.lists(_number_text(), min_size=11, max_size=11))
def test_scanned_numbers_equal_float_of_their_text(tokens):
    line = (f"{POINTS} T [ {' '.join(tokens[:4])} ] [ {' '.join(tokens[4:8])} ] "
            f"{' '.join(tokens[8:])}\n")
    starts, _, valve, _, numbers = _scan("{\n" + line + "}\n")
    expected = [float(t) for t in tokens]
    if not all(map(math.isfinite, expected)):
        assert len(starts) == 0  # left to the parser, which reports the overflow
        return
    assert len(starts) == 1 and valve[0]
    got = numbers[0, 9:].tolist()
    assert [repr(g) for g in got] == [repr(e) for e in expected]  # bit for bit, -0.0 included


def test_only_canonical_lines_are_taken():
    good = f"{POINTS} T 0 0 0 1 1\n"
    text = ("{\n" + good                     # taken
            + "\t  " + good                  # indented: taken
            + f"{POINTS} T 0 0 0 1 1 0 0 0\n"    # trailing flags: left to the parser
            + f"{POINTS} \"a b\" 0 0 0 1 1\n"    # quoted texture
            + f"{POINTS}  T 0 0 0 1 1\n"         # two spaces
            + f"{POINTS} T 0 0 0 1 1.\n"         # not a canonical number
            + f"{POINTS} T 0 0 0 1 1 // c\n"     # comment on the face's line
            + f"{POINTS} T 0 0 0 1 1\n\u00a0"    # then white space only the parser knows
            + f"{POINTS} caf\u00e9 0 0 0 1 1\n"  # non-ASCII texture
            + f"{POINTS} T 0 0 0 1 1e999\n"      # overflow
            + "}\n")
    starts, ends, valve, spans, numbers = _scan(text)
    assert len(starts) == 2 and not valve.any()
    assert [text[a:b] for a, b in spans] == ["T", "T"]
    assert ends[0] == starts[1]  # the white space before the next face belongs to the first


def test_the_parser_reads_fast_and_slow_faces_alike():
    canonical = "( 0 0 0 ) ( 0 1 0 ) ( 1 0 0 ) T 1.5 -2 90 1 1\n"
    spaced = "(0 0 0)(0 1 0)(1 0 0)T 1.5 -2 90 1 1\n"
    mapfile = parse_map("{\n{\n" + canonical + spaced + canonical + "}\n}\n")
    first, second, third = mapfile.entities[0].brushes[0].faces
    assert first == second == third
    assert [(f.line, f.column) for f in (first, second, third)] == [(3, 1), (4, 1), (5, 1)]


def test_a_line_opening_like_a_face_after_the_last_face_is_not_one():
    face = f"{POINTS} T 0 0 0 1 1\n"
    for tail in ("(", "( 1", "(\n(\n(", face[:-3] + "\n"):
        text = face * 3 + tail
        starts, _, _, _, numbers = _scan(text)
        assert len(starts) == 3
        assert numbers[:, 9:14].tolist() == [[0.0, 0.0, 0.0, 1.0, 1.0]] * 3


def test_a_line_that_is_not_a_face_leaves_nothing_behind_for_the_next_face():
    """A Valve-like line whose tiny number the compiled conversion leaves out, and which then
    turns out not to be a face, shares its row with the next (standard) face: that face must
    not inherit its left-out columns (it once raised IndexError instead of a located error)."""
    from spatial.errors import ParseError

    text = ("( 0 0 0 ) ( 0 0 0 ) ( 0 0 0 ) 0 [ 0 0 0 0 ] [ 0 3.853949890958656e-199 0 0 ] nan nan\n"
            "( 0 0 0 ) ( 0 0 0 ) ( 0 0 -20 ) 0 0 0 0 0 0\n// ")
    errors = []
    for source in (text, text.encode()):
        with pytest.raises(ParseError) as caught:
            parse_map(source, "x.map")
        errors.append((caught.value.line, caught.value.column))
    assert errors == [(1, 1), (1, 1)]
