"""Hypothesis strategies that write whole level files, valid or subtly broken.

Each strategy draws a structured file (entities and brushes, a lump directory and a node graph,
vertices and faces, a JSON document, a zip of arrays) rather than random bytes, so most examples
get deep into a reader before they go wrong, and then go wrong the ways real files do: a missing
final newline, another line ending, a huge token, a cycle, an index past the end, extreme
nesting or numbers, a truncated archive.
"""
from __future__ import annotations

import json
import struct

from hypothesis import strategies as st

from plugins.quake_map.syntax import MAX_TOKEN_CHARS
from spatial.bounded_json import MAX_JSON_DEPTH, MAX_NUMBER_CHARS
from tests.plugins.test_doom_formats import square_room

LINE_ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])



def rarely(unusual, usual, one_in: int):
    """``usual`` most of the time, ``unusual`` about once in ``one_in`` draws."""
    return st.integers(1, one_in).flatmap(lambda k: unusual if k == 1 else usual)


# Numbers as a level editor writes them, and now and then as a careless script or a hostile
# file would.
NUMBER_TEXT = rarely(
    st.sampled_from(["nan", "inf", "-inf", "1e999", "1.5e-320", "-0", ".5", "7.", "1e", "--1",
                     "0x10", "1" * 400, "9" * 5000]),
    st.one_of(st.integers(-4096, 4096).map(str), st.floats(-1e6, 1e6, allow_nan=False).map(repr)),
    one_in=60)
VALUE_TEXT = rarely(st.text(max_size=8), st.text(alphabet="abc xyz*0123456789_-", max_size=8),
                    one_in=10)
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_*+{0123456789", min_size=1, max_size=12)


def _quake_face(draw) -> str:
    point = st.tuples(NUMBER_TEXT, NUMBER_TEXT, NUMBER_TEXT).map(lambda p: "( " + " ".join(p) + " )")
    points = " ".join(draw(st.lists(point, min_size=2, max_size=4)))
    texture = draw(st.one_of(WORD, WORD.map(lambda w: f'"{w} x"')))
    if draw(st.booleans()):
        axis = st.lists(NUMBER_TEXT, min_size=4, max_size=4).map(lambda a: "[ " + " ".join(a) + " ]")
        tail = f"{draw(axis)} {draw(axis)} " + " ".join(draw(st.lists(NUMBER_TEXT, min_size=2,
                                                                        max_size=3)))
    else:
        tail = " ".join(draw(st.lists(NUMBER_TEXT, min_size=4, max_size=6)))
    return f"{points} {texture} {tail}"


@st.composite
def quake_maps(draw) -> tuple[list[str], bool]:
    """``(lines, final_newline)`` of a ``.map``: entities, key/values, brushes, comments."""
    lines = []
    if draw(st.booleans()):
        lines.append(draw(st.sampled_from(["// Game: Quake", "// Format: Valve", "// Format: Standard"])))
    for _ in range(draw(st.integers(0, 3))):
        lines.append("{")
        for _ in range(draw(st.integers(0, 3))):
            lines.append(f'"{draw(WORD)}" "{draw(VALUE_TEXT)}"'.replace("\n", " "))
        for _ in range(draw(st.integers(0, 2))):
            lines.append("{")
            lines.extend(_quake_face(draw) for _ in range(draw(st.integers(0, 5))))
            if draw(st.integers(0, 9)):
                lines.append("}")
        if draw(st.integers(0, 9)):
            lines.append("}")
        if draw(st.integers(0, 4)) == 0:
            lines.append("// " + draw(st.text(max_size=10)).replace("\n", " ").replace("\r", " "))
    if draw(st.integers(0, 5)) == 0:  # a token around the limit, anywhere
        at = draw(st.integers(0, len(lines)))
        size = draw(st.sampled_from([MAX_TOKEN_CHARS - 2, MAX_TOKEN_CHARS + 1, 3 * MAX_TOKEN_CHARS]))
        lines.insert(at, draw(st.sampled_from(['"k" "', "", "( 0 0 "])) + "a" * size)
    return lines, draw(st.booleans())


def _node(right: int, left: int, x: int = 64, dy: int = 128) -> bytes:
    box = (128, 0, 0, 128)
    return struct.pack("<hhhh4h4hHH", x, 0, 0, dy, *box, *box, right, left)


@st.composite
def wad_files(draw) -> bytes:
    """A WAD holding a square room with a random node build, then a damaged directory."""
    lumps = square_room(draw(st.booleans()))
    if draw(st.booleans()):
        n_nodes = draw(st.integers(0, 6))
        n_subs = draw(st.integers(0, 3))
        child = st.one_of(st.integers(0, n_nodes + 1),
                          st.integers(0, n_subs + 1).map(lambda s: s | 0x8000),
                          st.sampled_from([0xFFFF, 0x7FFF]))
        nodes = b"".join(_node(draw(child), draw(child), draw(st.integers(-200, 200)),
                               draw(st.integers(-2, 2))) for _ in range(n_nodes))
        segs = b"".join(struct.pack("<HHhHhh", draw(st.integers(0, 5)), draw(st.integers(0, 5)), 0,
                                    draw(st.integers(0, 5)), draw(st.integers(-1, 2)), 0)
                        for _ in range(draw(st.integers(0, 6))))
        subs = b"".join(struct.pack("<HH", draw(st.integers(0, 3)), draw(st.integers(0, 6)))
                        for _ in range(n_subs))
        lumps = lumps + [("SEGS", segs), ("SSECTORS", subs), ("NODES", nodes)]
    data = b""
    entries = []
    offset = 12
    for name, payload in lumps:
        if draw(st.integers(0, 15)) == 0:
            payload = payload[:draw(st.integers(0, len(payload)))]
        entries.append([offset, len(payload), name])
        data += payload
        offset += len(payload)
    for entry in entries:
        if draw(st.integers(0, 20)) == 0:
            entry[draw(st.integers(0, 1))] = draw(st.integers(-2**31, 2**31 - 1))
    count = len(entries)
    if draw(st.integers(0, 15)) == 0:
        count = draw(st.integers(-2**31, 2**31 - 1))
    directory = b"".join(struct.pack("<ii8s", o, s, n.encode().ljust(8, b"\0")) for o, s, n in entries)
    whole = struct.pack("<4sii", b"PWAD", count, offset) + data + directory
    if draw(st.integers(0, 10)) == 0:
        whole = whole[:draw(st.integers(0, len(whole)))]
    return whole


VERTEX_COORD = rarely(st.sampled_from(["nan", "inf", "1e999", "x", "9" * 5000]),
                      st.integers(-100, 100).map(str), one_in=15)


@st.composite
def obj_files(draw) -> str:
    """OBJ text with vertices, faces (indices in and out of range, slashes), groups."""
    n = draw(st.integers(0, 6))
    lines = [f"v {draw(VERTEX_COORD)} {draw(VERTEX_COORD)} {draw(VERTEX_COORD)}" for _ in range(n)]
    index = st.integers(-n - 2, n + 2).map(str)
    corner = st.tuples(index, st.sampled_from(["", "/1", "//1", "/1/1"])).map("".join)
    for _ in range(draw(st.integers(0, 5))):
        if draw(st.integers(0, 4)) == 0:
            lines.append(f"{draw(st.sampled_from(['o', 'g']))} {draw(WORD)}")
        lines.append("f " + " ".join(draw(st.lists(corner, min_size=1, max_size=5))))
    return draw(LINE_ENDINGS).join(lines) + draw(st.sampled_from(["", "\n"]))


@st.composite
def ply_files(draw) -> str:
    """ASCII PLY with random coordinates and face indices."""
    n = draw(st.integers(1, 5))
    faces = draw(st.lists(st.lists(st.integers(-2, n + 2), min_size=3, max_size=3), min_size=1,
                         max_size=4))
    head = ("ply\nformat ascii 1.0\n"
            f"element vertex {n}\nproperty float x\nproperty float y\nproperty float z\n"
            f"element face {len(faces)}\nproperty list uchar int vertex_indices\nend_header\n")
    body = "".join(f"{draw(VERTEX_COORD)} 0 0\n" for _ in range(n))
    body += "".join("3 " + " ".join(map(str, f)) + "\n" for f in faces)
    return head + body


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


EXTREME_JSON_VALUE = st.one_of(
    st.sampled_from([MAX_JSON_DEPTH - 2, MAX_JSON_DEPTH + 1, 1000, 100_000]).map(nested),
    st.sampled_from([20, MAX_NUMBER_CHARS, MAX_NUMBER_CHARS + 1, 400, 5000]).map(lambda n: "7" * n),
    st.sampled_from([20, 400]).map(lambda n: "0." + "3" * n),
    st.sampled_from(["1e400", "-1e400", "NaN", "Infinity", '"\\ud800"', '"x', "{", "[1,]"]),
    st.integers(-10, 10).map(str),
)


@st.composite
def native_scenes(draw) -> str:
    """A native scene document with one extreme value planted somewhere."""
    value = draw(EXTREME_JSON_VALUE)
    slot = draw(st.sampled_from(["next_id", "metadata", "params", "entities", "top"]))
    meta = value if slot == "metadata" else "{}"
    doc = ('{"format": "partition-studio-scene", "version": 1, '
           f'"next_id": {value if slot == "next_id" else 0}, '
           f'"settings": {{"backend": "brute", "params": {{}}, "metadata": {{"m": {meta}}}}}, '
           f'"entities": {"[" + value + "]" if slot == "entities" else "[]"}, "brushes": []'
           + (f', "x": {value}' if slot == "top" else "") + "}")
    return ("," + draw(LINE_ENDINGS)).join(doc.split(", "))


@st.composite
def frame_line_files(draw) -> str:
    """Frame lines, one of which carries an extreme value."""
    lines = ['{"meta": {"game": "fuzz"}}']
    for frame in range(draw(st.integers(0, 3))):
        lines.append(json.dumps({"frame": frame, "objects": [[1, 0, 0, 0, 1, 1, 1]]}))
    value = draw(EXTREME_JSON_VALUE)
    lines.insert(draw(st.integers(0, len(lines))),
                 '{"frame": 9, "objects": [[2, 0, 0, 0, 1, 1, ' + value + "]]}")
    return "\n".join(lines) + "\n"


@st.composite
def params_files(draw) -> str:
    value = draw(EXTREME_JSON_VALUE)
    return ('{"format": "partition-studio-params", "version": 1, "backend": "octree", '
            f'"params": {{"max_depth": {value}}}}}')
