"""Line endings, single-line maps and the token and line limits of the ``.map`` reader."""
from __future__ import annotations

import pytest

from plugins.quake_map import syntax
from plugins.quake_map.syntax import parse_map
from spatial.errors import ParseError
from tests.conftest import shared_file

FACE = "( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) tex 0 0 0 1 1"
LINES = ["// Game: Quake", "{", '"classname" "worldspawn"', "// a comment", "{",
         FACE, FACE.replace("tex", '"quoted tex"'), "}", "}"]
ENDINGS = {"LF": "\n", "CRLF": "\r\n", "CR": "\r"}


def _positions(mapfile):
    faces = [f for e in mapfile.entities for b in e.brushes for f in b.faces]
    return ([(e.line, e.column) for e in mapfile.entities]
            + [(b.line, b.column) for e in mapfile.entities for b in e.brushes]
            + [(f.line, f.column) for f in faces])


@pytest.mark.parametrize("ending", ENDINGS)
def test_every_line_ending_reads_the_same_map_at_the_same_positions(ending):
    reference = parse_map("\n".join(LINES) + "\n")
    parsed = parse_map(ENDINGS[ending].join(LINES) + ENDINGS[ending])
    assert parsed == reference
    assert parsed.header == ["// Game: Quake"]
    assert _positions(parsed) == _positions(reference) == [(2, 1), (5, 1), (6, 1), (7, 1)]


@pytest.mark.parametrize("text", ['{ "classname" "worldspawn" { ' + FACE + " } }",
                                  '{"classname" "worldspawn"{' + FACE + "}}"])
def test_a_map_without_any_line_break_loads(text):
    parsed = parse_map(text)
    assert parsed.counts() == {"entities": 1, "brush_entities": 1, "brushes": 1, "faces": 1}
    face = parsed.entities[0].brushes[0].faces[0]
    assert (face.line, face.column) == (1, text.index("(") + 1)


@pytest.mark.parametrize("ending", ENDINGS)
def test_errors_are_located_alike_whatever_the_line_ending(ending):
    lines = ["{", '"classname" "worldspawn"', "{", FACE, "( 0 x 0 ) ( 1 0 0 ) ( 0 1 0 ) t 0 0 0 1 1",
             "}", "}"]
    with pytest.raises(ParseError) as caught:
        parse_map(ENDINGS[ending].join(lines) + ENDINGS[ending], "bad.map")
    assert (caught.value.line, caught.value.column) == (5, 5)
    assert str(caught.value).startswith("bad.map:5:5: expected the y of the first plane point")


def test_a_comment_ends_at_a_lone_carriage_return():
    text = '{\r"classname" "worldspawn" // comment\r"message" "kept"\r}\r'
    assert parse_map(text).entities[0].get("message") == "kept"


def test_a_truncated_face_on_a_cr_line_points_past_its_last_token():
    with pytest.raises(ParseError) as caught:
        parse_map("{\r{\r( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T 0 0\r}\r}\r")
    assert (caught.value.line, caught.value.column) == (3, 36)
    assert "before the end of the line (next comes '}' at line 4, column 1)" in str(caught.value)


def test_the_real_e1m1_with_cr_only_line_endings_reads_like_the_original():
    data = shared_file("quake", "quake_id1_e1m1.map").read_bytes()
    original = parse_map(data)
    converted = parse_map(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r"))
    assert converted == original
    assert _positions(converted) == _positions(original)


@pytest.mark.parametrize("where", ["texture", "value", "number", "top level"])
def test_a_token_over_the_limit_is_refused_where_it_starts(where):
    huge = "a" * (syntax.MAX_TOKEN_CHARS + 1)
    text = {"texture": "{\n{\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) " + huge + " 0 0 0 1 1\n}\n}\n",
            "value": '{\n"message" "' + huge + '"\n}\n',
            "number": "{\n{\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) t 1" + "0" * len(huge) + " 0 0 1 1\n}\n}\n",
            "top level": "{\n}\n  " + huge}[where]
    expected = {"texture": (3, 31), "value": (2, 11), "number": (3, 33), "top level": (3, 3)}
    with pytest.raises(ParseError) as caught:
        parse_map(text, "big.map")
    assert (caught.value.line, caught.value.column) == expected[where]
    message = str(caught.value)
    assert "longer than the limit of 65,536" in message and len(message) < 200


def test_a_token_at_the_limit_is_read():
    value = "v" * (syntax.MAX_TOKEN_CHARS - 2)  # the quotes belong to the token
    parsed = parse_map('{\n"message" "' + value + '"\n}\n')
    assert parsed.entities[0].get("message") == value


def test_a_line_over_the_limit_is_refused_at_its_start(monkeypatch):
    monkeypatch.setattr(syntax, "MAX_LINE_CHARS", 100)
    line = '"message" "' + "word " * 30 + '"'
    with pytest.raises(ParseError) as caught:
        parse_map("{\n" + line + "\n}\n", "long.map")
    # the line break counts as a character of its line
    assert str(caught.value) == (f"long.map:2:1: a line of {len(line) + 1} characters is longer "
                                 "than the limit of 100")
