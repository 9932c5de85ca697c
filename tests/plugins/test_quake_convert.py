"""Quake .map files to scenes and back, on the real levels in ../shared/data/quake."""
from __future__ import annotations

import re

import numpy as np
import pytest

from editor.model.demo import build_demo_scene
from editor.model.stats import scene_counts
from plugins.quake_map.convert import (
    load_map,
    mapfile_to_scene,
    quake_texture_axes,
    save_map_scene,
    scene_to_mapfile,
)
from plugins.quake_map.syntax import MapFile, parse_map, read_map, write_map
from spatial.brush import is_closed_convex
from spatial.errors import ParseError, PartitionStudioWarning
from spatial.registry import Registry
from tests.conftest import SHARED_DATA, shared_file


def _license_table() -> dict[str, tuple[int, int, int]]:
    """``file -> (brushes, faces, entities)`` from the data folder's LICENSES.md."""
    text = shared_file("quake", "LICENSES.md").read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\|\s*(\S+\.map)\s*\|.*\|\s*(\d+)\s*/\s*(\d+)\s*/\s*(\d+)\s*\|\s*$", line)
        if m:
            rows[m.group(1)] = tuple(int(g) for g in m.group(2, 3, 4))
    return rows


MAPS = sorted(p.name for p in (SHARED_DATA / "quake").glob("*.map")) or ["(no data)"]


@pytest.mark.slow
@pytest.mark.parametrize("name", MAPS)
def test_real_map_imports_with_the_documented_counts_and_closed_brushes(name):
    table = _license_table()
    path = shared_file("quake", name)
    assert name in table, f"{name} is not described in LICENSES.md"
    brushes, faces, entities = table[name]
    scene = load_map(path)
    counts = scene_counts(scene)
    assert (counts["brushes"], counts["faces"], counts["entities"]) == (brushes, faces, entities)
    assert counts["objects"] == brushes + len(scene.point_entity_ids())
    for oid in scene.brush_ids():
        assert is_closed_convex(scene[oid].solid), f"{name}: brush {oid} is not closed and convex"


@pytest.mark.slow
@pytest.mark.parametrize("name", MAPS)
def test_map_scene_map_scene_is_identical(name, tmp_path):
    path = shared_file("quake", name)
    first = load_map(path)
    out = tmp_path / name
    save_map_scene(first, out)
    second = load_map(out)
    assert second.state() == first.state()
    assert sorted(second.objects) == sorted(first.objects)  # same ids
    assert write_map(read_map(out)) == write_map(read_map(path))  # same file content


def test_layers_and_groups_survive_verbatim():
    path = shared_file("quake", "librequake_e3m4_valve220.map")
    scene = load_map(path)
    groups = scene.find_entities(_tb_type="_tb_group")  # this map has groups, no extra layers
    assert len(groups) == 69
    assert all(scene[e].classname == "func_group" and not scene[e].is_point for e in groups)
    assert sum(len(scene.brushes_of(e)) for e in groups) > 0
    group_ids = {scene[e].get("_tb_id") for e in groups}
    members = [e for e in scene.entity_ids() if scene[e].get("_tb_group") is not None]
    assert members and all(scene[e].get("_tb_group") in group_ids for e in members)
    mapfile = scene_to_mapfile(scene)
    assert mapfile.format == "valve220" and mapfile.header == read_map(path).header


def test_the_plugin_registers_importer_and_exporter():
    import plugins.quake_map as plugin
    registry = Registry()
    registry.load_module(plugin, "plugins.quake_map", "builtin")
    assert registry.importer_for("E1M1.MAP").name == "quake-map"
    assert registry.exporter_for("out.map").name == "quake-map"


def test_demo_exports_to_map_and_back(tmp_path):
    scene = build_demo_scene()  # it has a TrenchBroom layer and a group
    out = tmp_path / "demo.map"
    save_map_scene(scene, out)
    again = load_map(out)
    assert again.state()[0] == scene.state()[0]
    assert again.settings.metadata == scene.settings.metadata


BOX = """{
"classname" "worldspawn"
{
( 0 0 0 ) ( 0 1 0 ) ( 0 0 1 ) rock 0 0 0 1 1
( 64 0 0 ) ( 64 0 1 ) ( 64 1 0 ) rock 0 0 0 1 1
( 0 0 0 ) ( 0 0 1 ) ( 1 0 0 ) rock 0 0 0 1 1
( 0 64 0 ) ( 1 64 0 ) ( 0 64 1 ) rock 0 0 0 1 1
( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) rock 0 0 90 1 1
%s
}
}
{
"classname" "light"
"origin" "32 32 80"
}
"""


def test_an_open_brush_is_reported_at_its_line_or_skipped():
    text = BOX % ""  # no top face: the brush is open
    with pytest.raises(ParseError) as info:
        mapfile_to_scene(parse_map(text, "open.map"), "open.map")
    assert info.value.line == 3 and "open" in str(info.value)
    with pytest.warns(PartitionStudioWarning, match="open.map:3:1: brush kept as written, not indexed"):
        scene = mapfile_to_scene(parse_map(text, "open.map"), "open.map", on_bad_brush="skip")
    assert scene_counts(scene)["brushes"] == 0 and scene_counts(scene)["entities"] == 2


def test_standard_faces_get_quake_axes_in_a_valve_export():
    scene = mapfile_to_scene(parse_map(BOX % "( 0 0 16 ) ( 0 1 16 ) ( 1 0 16 ) rock 0 0 0 1 1"))
    light = scene.find_entities(classname="light")[0]
    np.testing.assert_array_equal(scene[light].lo, [24, 24, 72])
    valve = scene_to_mapfile(scene, "valve220")
    faces = valve.entities[0].brushes[0].faces
    assert faces[5].u_axis == (1.0, 0.0, 0.0) and faces[5].v_axis == (0.0, -1.0, 0.0)  # floor/ceiling
    assert faces[0].u_axis == (0.0, 1.0, 0.0) and faces[0].v_axis == (0.0, 0.0, -1.0)  # x wall
    # the bottom face, rotated 90 degrees as qbsp rotates: s = cos*s - sin*t, t = sin*s + cos*t
    assert faces[4].u_axis == (0.0, 1.0, 0.0) and faces[4].v_axis == (1.0, 0.0, 0.0)
    assert quake_texture_axes(((0, 0, 0), (1, 0, 0), (0, 1, 0)), 0) == ((1.0, 0.0, 0.0), (0.0, -1.0, 0.0))
    reread = mapfile_to_scene(parse_map(write_map(valve)))
    assert scene_counts(reread) == scene_counts(scene)


def _cube_map(**changes) -> MapFile:
    """A one-brush map built in code; ``changes`` replace attributes of its first face."""
    from plugins.quake_map.syntax import MapBrush, MapEntity, MapFace, MapFile

    corners = [((0, 0, 0), (0, 1, 0), (0, 0, 1)), ((8, 0, 0), (8, 0, 1), (8, 1, 0)),
               ((0, 0, 0), (0, 0, 1), (1, 0, 0)), ((0, 8, 0), (1, 8, 0), (0, 8, 1)),
               ((0, 0, 0), (1, 0, 0), (0, 1, 0)), ((0, 0, 8), (0, 1, 8), (1, 0, 8))]
    faces = [MapFace(list(map(list, pts)), "T", [0, 0], 0, [1, 1], [1, 0, 0], [0, -1, 0], ["7"],
                     line=3 + k, column=1) for k, pts in enumerate(corners)]
    for name, value in changes.items():
        setattr(faces[0], name, value)
    return MapFile([MapEntity([("classname", "worldspawn")], [MapBrush(faces, 2, 1)], 1, 1)],
                   "valve220")


def test_a_map_built_in_code_becomes_float_tuples():
    scene = mapfile_to_scene(_cube_map(), "code.map")
    (bid,) = scene.brush_ids()
    face = scene[bid].faces[1]
    assert face.points == ((8.0, 0.0, 0.0), (8.0, 0.0, 1.0), (8.0, 1.0, 0.0))
    assert all(type(c) is float for p in face.points for c in p)
    assert (face.offset, face.rotation, face.scale) == ((0.0, 0.0), 0.0, (1.0, 1.0))
    assert type(face.rotation) is float and type(face.offset) is tuple
    assert (face.u_axis, face.v_axis, face.extra) == ((1.0, 0.0, 0.0), (0.0, -1.0, 0.0), ("7",))
    hash(face)  # tuples throughout
    np.testing.assert_array_equal(scene[bid].lo, [0, 0, 0])
    np.testing.assert_array_equal(scene[bid].hi, [8, 8, 8])


@pytest.mark.parametrize("changes, message", [
    ({"points": ((0, 0, 0), (0, 1, 0))}, "expected 3 plane points"),
    ({"points": ((0, 0, 0), (0, 1, 0), (0, 0))}, "a plane point of 3 numbers"),
    ({"points": ((0, 0, 0), (0, float("nan"), 0), (0, 0, 1))}, "must be finite"),
    ({"scale": (1.0,)}, "a texture scale of 2 numbers"),
    ({"rotation": float("inf")}, "a texture rotation must be finite"),
    ({"u_axis": (1.0, 0.0)}, "a texture U axis of 3 numbers"),
])
def test_a_malformed_face_built_in_code_is_named_by_its_position(changes, message):
    with pytest.raises(ParseError, match=re.escape("code.map:3:1: face: ") + ".*" + message):
        mapfile_to_scene(_cube_map(**changes), "code.map")


def test_a_parsed_map_changed_in_code_is_converted_from_its_new_values():
    text = write_map(_cube_map())
    untouched = mapfile_to_scene(parse_map(text, "a.map"), "a.map")
    changed = parse_map(text, "a.map")
    face = changed.entities[0].brushes[0].faces[1]
    face.points = [[16, 0, 0], [16, 0, 1], [16, 1, 0]]  # a list of lists, and ints
    face.texture = "OTHER"
    scene = mapfile_to_scene(changed, "a.map")
    (bid,) = scene.brush_ids()
    assert scene[bid].faces[1].points == ((16.0, 0.0, 0.0), (16.0, 0.0, 1.0), (16.0, 1.0, 0.0))
    assert scene[bid].faces[1].texture == "OTHER"
    np.testing.assert_array_equal(scene[bid].hi, [16, 8, 8])
    (before,) = untouched.brush_ids()
    assert scene[bid].faces[2:] == untouched[before].faces[2:]
    assert all(type(c) is float for f in scene[bid].faces for p in f.points for c in p)


def test_a_parsed_map_with_a_brush_removed_in_code_converts_the_rest():
    mapfile = parse_map(write_map(_cube_map()), "b.map")
    brushes = mapfile.entities[0].brushes
    brushes.append(brushes[0])
    brushes[0] = type(brushes[0])(brushes[0].faces[:3], 2, 1)  # too few faces: skipped
    with pytest.warns(PartitionStudioWarning, match="at least 4 faces"):
        scene = mapfile_to_scene(mapfile, "b.map", on_bad_brush="skip")
    (bid,) = scene.brush_ids()
    np.testing.assert_array_equal(scene[bid].hi, [8, 8, 8])
