"""The views' level geometry (mesh triangles, wall segments) follows edits of its objects,
deleted ones included (the scene no longer knows what a deleted id was)."""
from __future__ import annotations

from editor.model import RemoveObjects, SetSelection
from editor.qt.scene_geometry import SceneGeometry
from tests.model.test_triangle_mesh import _mesh_scene


def test_deleting_a_mesh_triangle_redraws_the_level_and_undo_brings_it_back():
    scene, stack, mesh = _mesh_scene(with_entity=False)
    geometry = SceneGeometry()
    before = geometry.build(scene)
    assert len(before.level.triangle_ids) == 5
    gone = [mesh.first_id + 2]
    stack.push(SetSelection(gone))
    stack.push(RemoveObjects(gone))
    after = geometry.update(scene, gone)
    assert after.level_changed
    assert gone[0] not in after.level.triangle_ids.tolist() and len(after.level.triangle_ids) == 4
    stack.undo()
    restored = geometry.update(scene, gone)
    assert restored.level_changed and len(restored.level.triangle_ids) == 5


def test_an_edit_of_other_ids_leaves_the_level_alone():
    scene, stack, mesh = _mesh_scene()
    geometry = SceneGeometry()
    geometry.build(scene)
    outside = [mesh.first_id + 100]  # never a triangle of this level
    assert not geometry.update(scene, outside).level_changed
