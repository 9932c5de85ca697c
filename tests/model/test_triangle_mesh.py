"""Meshes held as arrays in the scene: each triangle is still an object under its own id."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model import Edit, RemoveObjects, SceneEditError, SetSelection, UndoStack, point_entity
from editor.model.index_input import index_input
from editor.model.level_geometry import Triangle, TriangleMesh
from editor.model.scene import Scene
from spatial.errors import GeometryError


def _corners(count: int) -> np.ndarray:
    """``count`` triangles in a row along x, each a unit right triangle at height k."""
    k = np.arange(count, dtype=float)
    v0 = np.stack([k * 10, np.zeros(count), k], axis=1)
    return np.stack([v0, v0 + [4, 0, 0], v0 + [0, 4, 0]], axis=1)


def _mesh_scene(count: int = 5, *, with_entity: bool = True):
    scene = Scene()
    stack = UndoStack(scene)
    extra = {}
    if with_entity:
        eid = scene.allocate_ids(1)[0]
        extra = {eid: point_entity("info_player_start", (0, 0, 64))}
    first = scene.next_id
    scene.reserve_ids_below(first + count)
    mesh = TriangleMesh(first, _corners(count), ["a", "b"], np.arange(count) % 2)
    scene.apply(Edit(objects=extra, meshes=(mesh,)))
    return scene, stack, mesh


def test_mesh_triangles_are_scene_objects_under_their_ids():
    scene, _, mesh = _mesh_scene()
    ids = mesh.ids.tolist()
    assert scene.triangle_ids() == ids
    assert len(scene) == 6 and all(i in scene for i in ids)
    third = scene[ids[2]]
    assert third == Triangle((20, 0, 2), (24, 0, 2), (20, 4, 2), "a")
    assert scene.objects[ids[1]].group == "b"
    assert sorted(scene.objects) == [0] + ids
    assert scene.indexed_ids().tolist() == [0] + ids
    lo, hi = scene.bounds_of(ids)
    np.testing.assert_array_equal(lo[2], [20, 0, 2])
    np.testing.assert_array_equal(hi[2], [24, 4, 2])
    with pytest.raises(SceneEditError, match="no object with id 99"):
        scene[99]


def test_the_index_record_reads_the_mesh_arrays():
    scene, _, mesh = _mesh_scene()
    record = index_input(scene, counts=True)
    assert record.counts["triangles"] == 5 and record.counts["objects"] == 6
    assert record.dynamic.tolist() == [True] + [False] * 5
    np.testing.assert_array_equal(record.triangles.ids, mesh.ids)
    np.testing.assert_array_equal(record.triangles.v1, mesh.corners[:, 1])


def test_deleting_mesh_triangles_is_undone_exactly():
    scene, stack, mesh = _mesh_scene()
    before = scene.state()
    gone = [mesh.first_id + 1, mesh.first_id + 3]
    stack.push(SetSelection(gone))
    stack.push(RemoveObjects(gone))
    assert scene.triangle_ids() == [mesh.first_id, mesh.first_id + 2, mesh.first_id + 4]
    assert gone[0] not in scene and scene.get(gone[0]) is None and not scene.selection
    assert len(scene.indexed_ids()) == 4
    ids, corners = scene.triangle_arrays()
    np.testing.assert_array_equal(corners, mesh.corners[[0, 2, 4]])
    stack.undo()
    stack.undo()
    assert scene.state() == before
    stack.redo()
    stack.redo()
    assert scene.triangle_ids() == ids.tolist()


def test_a_replaced_triangle_is_kept_on_its_own_and_restored_into_its_mesh():
    scene, _, mesh = _mesh_scene()
    oid = mesh.first_id + 2
    moved = Triangle((0, 0, 50), (1, 0, 50), (0, 1, 50), "a")
    inverse = scene.apply(Edit({oid: moved}))
    assert scene[oid] == moved
    ids, corners = scene.triangle_arrays()
    assert ids.tolist() == mesh.ids.tolist()
    np.testing.assert_array_equal(corners[2], moved.corners)
    assert scene.bounds_of([oid])[0].tolist() == [[0, 0, 50]]
    scene.apply(inverse)
    assert scene[oid] == mesh.triangle(oid)
    assert scene.triangle_arrays()[1] is mesh.corners  # whole again: the mesh's own array


def test_a_mesh_added_and_dropped_through_edits_round_trips():
    scene = Scene()
    first = scene.next_id
    scene.reserve_ids_below(3)
    mesh = TriangleMesh(first, _corners(3), ["m"], np.zeros(3))
    seen = []
    scene.did_change.connect(lambda ids, kind: seen.append(sorted(ids)))
    undo_add = scene.apply(Edit(meshes=(mesh,)))
    assert seen == [[0, 1, 2]] and undo_add.drop_meshes == (0,)
    scene.apply(Edit({1: None}))
    undo_drop = scene.apply(Edit(drop_meshes=(0,)))
    assert len(scene) == 0
    scene.apply(undo_drop)
    assert scene.triangle_ids() == [0, 2]


def test_bad_meshes_are_refused_before_anything_changes():
    scene, _, mesh = _mesh_scene()
    before = scene.state()
    with pytest.raises(SceneEditError, match="overlap"):
        scene.apply(Edit(meshes=(TriangleMesh(mesh.first_id, _corners(2), ["x"], [0, 0]),)))
    with pytest.raises(SceneEditError, match="never allocated"):
        scene.apply(Edit(meshes=(TriangleMesh(scene.next_id, _corners(2), ["x"], [0, 0]),)))
    with pytest.raises(SceneEditError, match="no mesh starts at id 0"):
        scene.apply(Edit(drop_meshes=(0,)))
    assert scene.state() == before
    bad = _corners(2)
    bad[1, 2, 0] = np.inf
    with pytest.raises(GeometryError, match="triangle 1"):
        TriangleMesh(0, bad, ["x"], [0, 0])
    with pytest.raises(GeometryError, match="group"):
        TriangleMesh(0, _corners(2), ["x"], [0, 1])


def test_a_copy_is_independent():
    scene, _, mesh = _mesh_scene()
    other = scene.copy()
    other.apply(Edit({mesh.first_id: None}))
    assert mesh.first_id in scene and mesh.first_id not in other


def test_opening_a_mesh_reports_its_stages_in_order(tmp_path):
    from editor.model.loading import open_level

    path = tmp_path / "two.obj"
    path.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n")
    stages = []
    loaded = open_level(path, progress=lambda fraction, text: stages.append((fraction, text)))
    assert loaded.document.triangle_ids() == [0, 1]
    texts = [text for _, text in stages]
    assert any("4 vertices" in t for t in texts) and any("2 faces" in t for t in texts)
    assert any("Checking 2 triangles" in t for t in texts)
    fractions = [fraction for fraction, _ in stages]
    assert fractions == sorted(fractions) and 0 < fractions[0] and fractions[-1] < 1


@pytest.mark.parametrize("backend", ["triangle_octree", "octree"])
def test_the_live_index_follows_deleted_and_restored_mesh_triangles(backend):
    from editor.model import IndexSync, SetSettings

    from .helpers import assert_index_matches

    scene, stack, mesh = _mesh_scene(40)
    stack.push(SetSettings(backend=backend))
    sync = IndexSync(scene)
    gone = mesh.ids[::3].tolist()
    stack.push(RemoveObjects(gone))
    assert len(sync.index) == 1 + 40 - len(gone)
    assert not set(sync.index.query_box([-1e3] * 3, [1e4] * 3).ids.tolist()) & set(gone)
    assert_index_matches(sync)
    stack.undo()
    assert len(sync.index) == 41
    assert_index_matches(sync)
