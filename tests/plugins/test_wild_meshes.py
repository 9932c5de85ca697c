"""Meshes exported by other tools (tests/fixtures/wild/, see its README for source and licence)
open through the one path from a file to a document, or are refused in one line naming the
file and the record."""
from __future__ import annotations

from pathlib import Path

import pytest

from editor.model.loading import open_level
from spatial.errors import PartitionStudioError

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild"

# file: (triangles, groups, warning text or None)
OPENS = {
    "box.obj": (12, ["1"], None),
    "box_UTF16BE.obj": (12, ["1"], None),
    "box_without_lineending.obj": (12, ["1"], None),
    "box_longline.obj": (5 * 2 + 934, ["1"], None),  # five quads and one 936-corner face
    "concave_polygon.obj": (64, ["default"], None),
    "cube_mtllib_after_g.obj": (12, ["Object"], None),
    "cube_with_vertexcolors.obj": (12, ["cube"], None),
    "multiple_spaces.obj": (1, ["multiple_spaces.obj"], None),
    "regr_3429812.obj": (4, ["rectangle", "triangle1", "triangle2"], None),
    "testmixed.obj": (12, ["testmixed.obj"], "skipped 6 loose edges (6 'l' lines; the first at line 15)"),
    "cube.ply": (12, ["cube.ply"], None),
    "cube_binary.ply": (12, ["cube_binary.ply"], None),
    "cube_uv.ply": (12, ["cube_uv.ply"], None),
    "float-color.ply": (1, ["float-color.ply"], None),
    "box_textured_embedded.gltf": (12, ["1"], None),
    "BoxTextured.glb": (12, ["1"], None),
    "simple_skin.gltf": (8, ["0"], None),
}

# file: what the one refusal line says after the file's name
REFUSED = {
    "number_formats.obj": ":11:14: vertex coordinate '3.1+e2' is not a number",
    "issue623.ply": ": the file holds no triangle mesh",
    "BoxWithInfinites.glb": ": vertex 0 (part 'nodes_1') has a coordinate that is not finite",
    "IndexOutOfRange.gltf": ": face 0 (part '1') uses vertex index 255, out of range",
}


def test_every_wild_file_is_listed_here():
    files = {p.name for p in WILD.iterdir() if p.suffix not in (".md", ".bin")}
    assert files == set(OPENS) | set(REFUSED)


@pytest.mark.parametrize("name", sorted(OPENS))
def test_a_wild_mesh_opens(name):
    triangles, groups, warning = OPENS[name]
    loaded = open_level(WILD / name)
    ids, corners = loaded.document.triangle_arrays()
    assert len(ids) == len(corners) == triangles
    assert loaded.document.settings.metadata["groups"] == groups
    if warning is None:
        assert loaded.warnings == []
    else:
        assert len(loaded.warnings) == 1
        assert loaded.warnings[0].startswith(f"{WILD / name}: {warning}")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_broken_wild_mesh_is_refused_in_one_line(name):
    with pytest.raises(PartitionStudioError) as caught:
        open_level(WILD / name)
    message = str(caught.value)
    assert message.startswith(f"{WILD / name}{REFUSED[name]}")
    assert "\n" not in message
