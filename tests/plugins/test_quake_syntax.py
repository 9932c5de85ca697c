"""Tests of the Quake ``.map`` syntax layer: real maps, exact round trips, errors, atomic save."""
from __future__ import annotations

import math
import os
import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plugins.quake_map import syntax
from plugins.quake_map.syntax import (
    MapBrush,
    MapEntity,
    MapFace,
    MapFile,
    parse_map,
    read_map,
    save_map,
    write_map,
)
from spatial.errors import ParseError

QUAKE_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "quake"


def _license_table() -> dict[str, dict]:
    """Rows of the provenance table in LICENSES.md: file name -> format and expected counts."""
    rows = {}
    for line in (QUAKE_DATA / "LICENSES.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 6 or not cells[0].endswith(".map"):
            continue
        brushes, faces, entities = (int(x) for x in cells[-1].split("/"))
        rows[cells[0]] = {"format": cells[-2], "brushes": brushes, "faces": faces,
                          "entities": entities}
    return rows


def _real_maps() -> list[str]:
    if not (QUAKE_DATA / "LICENSES.md").exists():
        return []
    return sorted(_license_table())


needs_data = pytest.mark.skipif(not (QUAKE_DATA / "LICENSES.md").exists(),
                                 reason=f"real Quake maps not available at {QUAKE_DATA}")


def _count_lines(raw: str) -> dict:
    """Count a well-formed map line by line (every brace and face on its own line, as the real
    maps are written): an independent check of the parser's counts."""
    depth, counts, owns_brush = 0, dict.fromkeys(("entities", "brush_entities", "brushes",
                                                  "faces"), 0), False
    for line in raw.splitlines():
        line = line.strip()
        if line == "{":
            depth += 1
            if depth == 1:
                counts["entities"] += 1
                owns_brush = False
            else:
                counts["brushes"] += 1
                counts["brush_entities"] += not owns_brush
                owns_brush = True
        elif line == "}":
            depth -= 1
        elif line.startswith("(") and depth == 2:
            counts["faces"] += 1
    return counts


def _face(text: str) -> MapFace:
    """Parse one face written inside a worldspawn brush."""
    m = parse_map("{\n{\n" + text + "\n}\n}\n")
    return m.entities[0].brushes[0].faces[0]


# ------------------------------------------------------------------------------------------
# Real maps

@needs_data
def test_every_map_in_the_folder_is_in_the_license_table():
    on_disk = {p.name for p in QUAKE_DATA.glob("*.map")}
    assert on_disk == set(_license_table())


@needs_data
@pytest.mark.parametrize("name", _real_maps() or ["<no data>"])
def test_real_map_counts_and_exact_round_trip(name):
    expected = _license_table()[name]
    path = QUAKE_DATA / name
    parsed = read_map(path)
    counts = parsed.counts()
    assert (counts["brushes"], counts["faces"], counts["entities"]) == (
        expected["brushes"], expected["faces"], expected["entities"])
    assert parsed.format == ("valve220" if "Valve 220" in expected["format"] else "standard")
    raw = path.read_text(encoding="utf-8")
    assert counts == _count_lines(raw)
    assert parsed.entities[0].classname == "worldspawn"
    # TrenchBroom groups/layers are ordinary entities keeping their keys.
    assert sum(1 for e in parsed.entities if e.get("_tb_type") is not None) == raw.count('"_tb_type"')
    if "TrenchBroom" in expected["format"] or raw.startswith("// Game:"):
        assert parsed.header[0] == "// Game: Quake"
        assert parsed.header[1].startswith("// Format: ")
    else:
        assert parsed.header == []

    written = write_map(parsed)
    reparsed = parse_map(written, f"{name} (written)")
    assert reparsed == parsed
    assert reparsed.header == parsed.header and reparsed.format == parsed.format
    assert write_map(reparsed) == written
    # Line numbers point at the faces as they stand in the source.
    lines = raw.splitlines()
    for entity in parsed.entities[:20]:
        for brush in entity.brushes[:3]:
            assert lines[brush.line - 1][brush.column - 1] == "{"
            for face in brush.faces:
                assert lines[face.line - 1][face.column - 1] == "("


@needs_data
def test_parse_time_of_the_largest_map(record_property):
    """librequake_e3m4 (3.1 MB, 22,180 faces) must parse well under a second.

    The bound is on CPU time (best of three), which other processes on a busy machine disturb
    far less than wall-clock time; both are reported.
    """
    path = QUAKE_DATA / "librequake_e3m4_valve220.map"
    data = path.read_bytes()
    cpu, wall = [], []
    for _ in range(3):
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        parsed = parse_map(data, str(path))
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start_wall)
    assert parsed.counts()["faces"] == _license_table()[path.name]["faces"]
    record_property("parse_cpu_seconds_e3m4", min(cpu))
    record_property("parse_wall_seconds_e3m4", min(wall))
    print(f"\nparse time {path.name}: best of 3 {min(cpu) * 1000:.0f} ms CPU, "
          f"{min(wall) * 1000:.0f} ms wall")
    assert min(cpu) < 1.0


# ------------------------------------------------------------------------------------------
# What a face holds

def test_standard_face_fields():
    face = _face("( 1 2 3 ) ( 4 5 6 ) ( 7 8 10 ) METAL1_3 16 -32 90 -1.000000 0.5")
    assert face.points == ((1, 2, 3), (4, 5, 6), (7, 8, 10))
    assert face.texture == "METAL1_3"
    assert face.offset == (16, -32) and face.rotation == 90 and face.scale == (-1, 0.5)
    assert face.u_axis is None and face.v_axis is None and face.extra == ()
    assert not face.is_valve220


def test_valve220_face_fields_take_offsets_from_the_axes():
    face = _face("( 704 1824 576 ) ( 704 1792 576 ) ( 704 1792 448 ) grk_brk16 "
                 "[ -2.22045e-16 -1 0 112 ] [ 0 0 -1 -8.5 ] 15 2 0.25")
    assert face.u_axis == (-2.22045e-16, -1, 0) and face.v_axis == (0, 0, -1)
    assert face.offset == (112, -8.5)
    assert face.rotation == 15 and face.scale == (2, 0.25)
    assert face.is_valve220


def test_trailing_tokens_are_kept_verbatim():
    face = _face("( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) e1u1/floor1_3 0 0 0 1 1 0 0x10 -7 // flags")
    assert face.texture == "e1u1/floor1_3"
    assert face.extra == ("0", "0x10", "-7")


@pytest.mark.parametrize("texture", ["{fence", "*04water1", "+0SLIPBOT", "sky3", "a.b-c_d"])
def test_texture_names_with_quake_prefixes(texture):
    assert _face(f"( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) {texture} 0 0 0 1 1").texture == texture


def test_quoted_texture_name_with_spaces_round_trips():
    m = parse_map('{\n{\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) "my \\"odd\\" tex" 0 0 0 1 1\n}\n}\n')
    assert m.entities[0].brushes[0].faces[0].texture == 'my "odd" tex'
    assert parse_map(write_map(m)) == m


@pytest.mark.parametrize("text, value", [("1", 1.0), ("-2.", -2.0), (".5", 0.5), ("+3", 3.0),
                                         ("1E2", 100.0), ("-2.22045e-16", -2.22045e-16),
                                         ("1.000000", 1.0), ("007", 7.0)])
def test_number_forms(text, value):
    assert _face(f"( 0 0 0 ) ( 1 0 0 ) ( 0 1 {text} ) T 0 0 0 1 1").points[2][2] == value


def test_whitespace_comments_and_missing_spaces_are_tolerated():
    text = ("// a comment before anything\r\n{\t\"classname\"\t\"worldspawn\" // trailing\r\n"
            "{(0 0 0)(1 0 0)\r\n// comment inside a face\r\n(0 1 0)T\t0 0 0 1 1}}")
    m = parse_map(text)
    face = m.entities[0].brushes[0].faces[0]
    assert face.points == ((0, 0, 0), (1, 0, 0), (0, 1, 0)) and face.texture == "T"
    assert m.entities[0].properties == [("classname", "worldspawn")]
    assert m.header == ["// a comment before anything"]


def test_strings_keep_literal_backslashes_and_decode_escapes():
    m = parse_map('{\n"wad" "\\quake\\id1.wad"\n"message" "say \\"hi\\" \\\\o/"\n}\n')
    assert m.entities[0].get("wad") == "\\quake\\id1.wad"
    assert m.entities[0].get("message") == 'say "hi" \\o/'
    written = write_map(m)
    assert '"wad" "\\quake\\id1.wad"' in written  # plain backslashes are not doubled
    assert parse_map(written) == m


def test_duplicate_keys_are_kept_and_the_last_wins():
    m = parse_map('{\n"classname" "light"\n"light" "200"\n"light" "300"\n}\n')
    entity = m.entities[0]
    assert entity.properties == [("classname", "light"), ("light", "200"), ("light", "300")]
    assert entity.get("light") == "300" and entity.get("absent", "x") == "x"
    assert entity.classname == "light"
    assert MapEntity([], []).classname is None


def test_counts_and_brush_entities():
    brush = "{\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T 0 0 0 1 1\n( 0 0 0 ) ( 0 1 0 ) ( 0 0 1 ) T 0 0 0 1 1\n}\n"
    text = ('{\n"classname" "worldspawn"\n' + brush + brush + '}\n'
            '{\n"classname" "func_group"\n"_tb_type" "_tb_layer"\n"_tb_id" "2"\n' + brush + '}\n'
            '{\n"classname" "info_player_start"\n"origin" "0 0 24"\n}\n')
    m = parse_map(text)
    assert m.counts() == {"entities": 3, "brush_entities": 2, "brushes": 3, "faces": 6}
    assert m.entities[1].get("_tb_type") == "_tb_layer"


@pytest.mark.parametrize("text", ["", "   \n\t\r\n", "// only a comment\n// and another"])
def test_empty_or_comment_only_file_is_an_empty_map(text):
    m = parse_map(text)
    assert m.entities == [] and m.counts()["faces"] == 0


def test_header_keeps_leading_comments_but_not_markers():
    m = parse_map("// Game: Quake\n// Format: Valve\n// entity 0\n{\n\"classname\" \"worldspawn\"\n}\n")
    assert m.header == ["// Game: Quake", "// Format: Valve"]
    assert m.format == "valve220"  # no faces: the header decides


def test_a_lone_carriage_return_ends_a_header_comment_line():
    parsed = parse_map("// Game: Quake\r// Format: Valve\r{\r}\r")
    assert parsed.header == ["// Game: Quake", "// Format: Valve"]
    assert parse_map(write_map(parsed)) == parsed


def test_format_from_mapversion_when_there_are_no_faces():
    assert parse_map('{\n"classname" "worldspawn"\n"mapversion" "220"\n}\n').format == "valve220"
    assert parse_map('{\n"classname" "worldspawn"\n}\n').format == "standard"


def test_positions_count_characters_after_non_ascii_text():
    text = ('{\n"message" "caf\u00e9 \u00e0 la cr\u00e8me"\n{\n' + GOOD_FACE + "\n\t  " + GOOD_FACE
            + "\n}\n}\n")
    entity = parse_map(text).entities[0]
    brush = entity.brushes[0]
    assert (entity.line, entity.column) == (1, 1)
    assert (brush.line, brush.column) == (3, 1)
    assert [(f.line, f.column) for f in brush.faces] == [(4, 1), (5, 4)]


def test_bytes_with_byte_order_mark():
    m = parse_map(b'\xef\xbb\xbf{\n"message" "caf\xc3\xa9"\n}\n')
    assert m.entities[0].get("message") == "caf\u00e9"


# ------------------------------------------------------------------------------------------
# Malformed input: each error names the line and column of the problem

GOOD_FACE = "( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T 0 0 0 1 1"
MALFORMED = [
    ("unterminated brush", '{\n"classname" "worldspawn"\n  {\n' + GOOD_FACE + "\n", 3, 3,
     "unterminated brush"),
    ("unterminated entity", '// x\n {\n"classname" "worldspawn"\n', 2, 2, "unterminated entity"),
    ("collinear points", "{\n{\n" + GOOD_FACE + "\n   ( 0 0 0 ) ( 1 1 1 ) ( 2 2 2 ) T 0 0 0 1 1\n}\n}\n",
     4, 4, "collinear"),
    ("coincident points", "{\n{\n( 5 5 5 ) ( 5 5 5 ) ( 0 1 0 ) T 0 0 0 1 1\n}\n}\n", 3, 1,
     "collinear"),
    ("missing closing quote", '{\n"classname" "worldspawn\n}\n', 2, 13, "unterminated string"),
    ("missing value", '{\n"classname"\n}\n', 2, 12, "quoted value of key 'classname' before the end"),
    ("missing value on the line", '{\n"classname" }\n', 2, 13, "quoted value of key 'classname', got '}'"),
    ("nan", "{\n{\n( 0 0 0 ) ( 1 nan 0 ) ( 0 1 0 ) T 0 0 0 1 1\n}\n}\n", 3, 15, "NaN"),
    ("infinity", "{\n{\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T 0 0 -inf 1 1\n}\n}\n", 3, 37, "NaN"),
    ("overflow", "{\n{\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T 0 0 0 1 1e999\n}\n}\n", 3, 41,
     "finite"),
    ("binary garbage", b'{\n"a" "b"\n\x00\x01\x02\x03', 3, 1, "control character"),
    ("not utf-8", b'{\n"message" "caf\xe9"\n}\n', 2, 15, "not UTF-8"),
    ("stray token in entity", '{\n"classname" "worldspawn"\n  foo\n}\n', 3, 3, "got 'foo'"),
    ("stray token at top level", '{\n}\nbar', 3, 1, "expected '{' starting an entity"),
    ("stray closing brace", "}", 1, 1, "expected '{' starting an entity, got '}'"),
    ("truncated face", "{\n{\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T 0 0\n}\n}\n", 3, 36,
     "expected the texture rotation (a number) before the end of the line (next comes '}' at "
     "line 4, column 1)"),
    ("truncated valve face", "{\n{\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T [ 1 0 0 0 ] [ 0 1 0 0 ] 0 1 // c\n"
     "( 0 0 0 ) ( 1 0 0 ) ( 0 0 1 ) T [ 1 0 0 0 ] [ 0 1 0 0 ] 0 1 1\n}\n}\n", 3, 60,
     "texture y scale (a number) before the end of the line (next comes '('"),
    ("string broken by a carriage return", '{\n"message" "a\rb"\n}\n', 2, 11, "unterminated"),
    ("too few plane points", "{\n{\n( 0 0 0 ) ( 1 0 0 ) T 0 0 0 1 1\n}\n}\n", 3, 21,
     "'(' starting the third plane point"),
    ("stray token in brush", "{\n{\n" + GOOD_FACE + "\n  oops\n}\n}\n", 4, 3,
     "expected '(' starting a brush face"),
    ("patch", "{\n{\n patchDef2\n {\n }\n}\n}\n", 3, 2, "'patchDef2' blocks are not supported"),
    ("missing texture", "{\n{\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) }\n}\n", 3, 31, "a texture name"),
    ("broken valve axis", "{\n{\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T [ 1 0 0 ] [ 0 1 0 0 ] 0 1 1\n}\n}\n",
     3, 41, "the texture U offset"),
    ("mixed face forms", "{\n{\n" + GOOD_FACE + "\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T [ 1 0 0 0 ] "
     "[ 0 1 0 0 ] 0 1 1\n}\n}\n", 4, 1, "one face format"),
    ("header contradicts faces", "// Format: Valve\n{\n{\n" + GOOD_FACE + "\n}\n}\n", 4, 1,
     "'// Format:' header"),
    ("two format headers", "// Format: Valve\n// Game: Quake\n// Format: Standard\n", 3, 1,
     "contradicts"),
    # Faces are decoded after the scan: a face's own error still wins over a later one.
    ("overflow before a stray token", "{\n{\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T 0 0 0 1 1e999\n}\n"
     "  oops\n}\n", 3, 41, "finite"),
    ("mixed forms before a stray token", "{\n{\n" + GOOD_FACE + "\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) "
     "T [ 1 0 0 0 ] [ 0 1 0 0 ] 0 1 1\n}\n}\nbar", 4, 1, "one face format"),
    ("header contradiction before an overflow", "// Format: Valve\n{\n{\n" + GOOD_FACE + "\n"
     "( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T 0 0 0 1 1e999\n}\n}\n", 4, 1, "'// Format:' header"),
    ("overflow before mixed forms", "{\n{\n" + GOOD_FACE + "\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T 0 0 "
     "0 1 1e999\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T [ 1 0 0 0 ] [ 0 1 0 0 ] 0 1 1\n}\n}\n", 4, 41,
     "finite"),
    ("stray token after non-ASCII text", '{\n"message" "caf\u00e9 \u00e0 la cr\u00e8me"\n{\n'
     + GOOD_FACE + "\n\u00e9 ( 0 0 0 ) ( 1 1 1 ) ( 2 2 2 ) T 0 0 0 1 1\n}\n}\n", 5, 1,
     "expected '(' starting a brush face"),
    ("missing entity brace", '{\n"classname" "worldspawn"\n{\n' + GOOD_FACE + '\n}\n{\n"classname" '
     '"light"\n}\n', 7, 1, "missing?"),
]


@pytest.mark.parametrize("name, text, line, column, message", MALFORMED,
                         ids=[case[0] for case in MALFORMED])
def test_malformed_input_reports_line_and_column(name, text, line, column, message):
    with pytest.raises(ParseError) as info:
        parse_map(text, "bad.map")
    error = info.value
    assert (error.line, error.column) == (line, column), str(error)
    assert message in error.detail
    assert str(error).startswith(f"bad.map:{line}:{column}: ")


SMALL_MAP = ('// Game: Quake\n{\n"classname" "worldspawn"\n"wad" "\\q\\id1.wad"\n{\n'
             '( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) {fence 0 0 0 1 1\n'
             '( 0 0 0 ) ( 0 1 0 ) ( 0 0 1 ) T 1.5 -2 90 1 1 0 0 0\n}\n}\n'
             '{\n"classname" "light"\n"origin" "0 0 24"\n}\n')


def _parse_or_parse_error(text):
    """Parse ``text``; any failure other than ParseError fails the test. Parsed maps must
    survive a write/parse round trip unchanged."""
    try:
        parsed = parse_map(text, "fuzz.map")
    except ParseError as error:
        assert error.line >= 1 and error.column >= 1
        return
    assert parse_map(write_map(parsed)) == parsed


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=list('{}()[]" \t\n\r/\\0123456789.-+eExyzTnaif#\x00\u00e9'),
               max_size=120))
def test_arbitrary_text_parses_or_raises_parse_error(text):
    _parse_or_parse_error(text)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_mutated_maps_parse_or_raise_parse_error(data):
    text = SMALL_MAP
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 4))
        insert = data.draw(st.text(alphabet=list('{}()[]" \n/\\0.-9Ttnan'), max_size=3))
        text = text[:at] + insert + text[at + cut:]
    _parse_or_parse_error(text)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_parse_or_raise_parse_error(data):
    _parse_or_parse_error(data)


def test_nearly_collinear_points_still_define_a_plane():
    face = _face("( 0 0 0 ) ( 1000000 0 0 ) ( 1000000 1 0 ) T 0 0 0 1 1")  # sine 1e-6
    assert face.points[2] == (1000000, 1, 0)
    with pytest.raises(ParseError, match="collinear"):  # sine 5e-13: numerical noise
        _face("( 0 0 0 ) ( 1000000 0 0 ) ( 2000000 0.000001 0 ) T 0 0 0 1 1")


def test_read_map_errors_name_the_file(tmp_path):
    path = tmp_path / "e1m1.map"
    path.write_text("{\n{\n}\n")
    with pytest.raises(ParseError, match=re.escape(f"{path}:1:1: unterminated entity")):
        read_map(path)


# ------------------------------------------------------------------------------------------
# Writing

def test_writer_output_is_trenchbroom_style_with_minimal_numbers():
    m = parse_map("// Game: Quake\n// Format: Standard\n{\n\"classname\" \"worldspawn\"\n{\n"
                  "( 0 0 64.000000 ) ( 1 0 64 ) ( 0 1 64 ) METAL1_3 0.500000 -16 0 1.000000 "
                  "0.1\n}\n}\n{\n\"classname\" \"light\"\n}\n")
    assert write_map(m) == (
        "// Game: Quake\n// Format: Standard\n// entity 0\n{\n\"classname\" \"worldspawn\"\n"
        "// brush 0\n{\n( 0 0 64 ) ( 1 0 64 ) ( 0 1 64 ) METAL1_3 0.5 -16 0 1 0.1\n}\n}\n"
        "// entity 1\n{\n\"classname\" \"light\"\n}\n")


def test_writer_writes_valve_form():
    m = parse_map("{\n{\n( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T [ 1 0 0 8 ] [ 0 -1 0 -4 ] 0 1 1\n}\n}\n")
    assert "T [ 1 0 0 8 ] [ 0 -1 0 -4 ] 0 1 1" in write_map(m)


_finite = st.floats(allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(numbers=st.lists(_finite, min_size=14, max_size=14),
       key=st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=12),
       value=st.text(st.sampled_from('ab\\" /{}'), max_size=12))
def test_any_finite_numbers_and_strings_round_trip_exactly(numbers, key, value):
    points = ((1.0, 2.0, 3.0), (7.0, 5.0, 3.0), (2.0, 9.0, 4.0))  # never collinear
    face = MapFace(points, "T", (numbers[0], numbers[1]), numbers[2], (numbers[3], numbers[4]),
                   tuple(numbers[5:8]), tuple(numbers[8:11]))
    m = MapFile([MapEntity([(key, value)], [MapBrush([face])])], "valve220", ["// Format: Valve"])
    back = parse_map(write_map(m))
    assert back == m
    got = back.entities[0].brushes[0].faces[0]
    # Exact bit patterns, signed zeros included.
    for a, b in zip((*got.offset, got.rotation, *got.scale, *got.u_axis, *got.v_axis), numbers):
        assert math.copysign(1.0, a) == math.copysign(1.0, b) and a == b


def test_writer_rejects_what_cannot_be_read_back():
    face = MapFace(((0, 0, 0), (1, 0, 0), (0, 1, 0)), "T", (0, 0), math.nan, (1, 1))
    with pytest.raises(ValueError, match="entity 0, brush 0, face 0: .*NaN"):
        write_map(MapFile([MapEntity([], [MapBrush([face])])]))
    with pytest.raises(ValueError, match="no texture axes"):
        write_map(MapFile([MapEntity([], [MapBrush([face])])], "valve220"))
    with pytest.raises(ValueError, match="line break"):
        write_map(MapFile([MapEntity([("message", "two\nlines")], [])]))
    with pytest.raises(ValueError, match="unknown map format"):
        write_map(MapFile([], "quake3"))


def test_writer_corrects_a_contradicting_format_header():
    m = MapFile([], "valve220", ["// Game: Quake", "// Format: Standard"])
    assert write_map(m) == "// Game: Quake\n// Format: Valve\n"


# ------------------------------------------------------------------------------------------
# Atomic save

def _small_map() -> MapFile:
    return parse_map('{\n"classname" "worldspawn"\n{\n' + GOOD_FACE + "\n}\n}\n")


def test_save_writes_a_file_that_reads_back(tmp_path):
    path = tmp_path / "out.map"
    path.write_text("old")
    path.chmod(0o640)
    save_map(_small_map(), path)
    assert read_map(path) == _small_map()
    assert (path.stat().st_mode & 0o777) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["out.map"]


def test_failed_save_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "level.map"
    original = "// the previous version\n{\n\"classname\" \"worldspawn\"\n}\n"
    path.write_text(original)
    written_before_failure = []

    def write_half_then_fail(handle, data):
        handle.write(data[: len(data) // 2])
        written_before_failure.append(len(data) // 2)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(syntax, "_write_bytes", write_half_then_fail)
    with pytest.raises(OSError, match="No space left"):
        save_map(_small_map(), path)
    assert written_before_failure and written_before_failure[0] > 0
    assert path.read_text() == original
    assert sorted(os.listdir(tmp_path)) == ["level.map"]
