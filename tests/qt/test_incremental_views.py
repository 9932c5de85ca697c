"""Edits redraw only what they touched: the arrays of untouched brushes stay as they were, and
after any sequence of edits the drawn arrays and 2D outlines equal a build from scratch."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from editor.model import AddObjects, RemoveObjects, Scene, SetSelection, Transform, brush_entity
from editor.model.brushes import build_solids
from editor.model.scene import Edit
from editor.model.shapes import box_brush
from editor.qt.scene_geometry import SceneGeometry
from editor.qt.views.brush_outlines import CHUNK_SIZE, BrushOutlines


def _box_scene(n: int, seed: int = 3) -> Scene:
    """``n`` box brushes on a 16-unit lattice (several outline chunks' worth)."""
    rng = np.random.default_rng(seed)
    scene = Scene()
    world = scene.allocate_ids(1)[0]
    objects = {world: brush_entity("worldspawn")}
    for oid in scene.allocate_ids(n):
        lo = rng.integers(-64, 64, size=3).astype(float) * 16
        objects[oid] = box_brush(world, lo, lo + rng.integers(1, 6, size=3) * 16)
    build_solids([o for o in objects.values() if not hasattr(o, "classname")])
    scene.apply(Edit(objects))
    return scene


def _per_brush(arrays) -> dict:
    """Brush id -> (mesh vertices, mesh colours, edge lines) read through the offsets."""
    out = {}
    for k, oid in enumerate(arrays.brush_ids):
        m0, m1 = arrays.mesh_offsets[k], arrays.mesh_offsets[k + 1]
        e0, e1 = arrays.edge_offsets[k], arrays.edge_offsets[k + 1]
        out[int(oid)] = (arrays.mesh_vertices[m0:m1].copy(), arrays.mesh_colours[m0:m1].copy(),
                         arrays.edge_lines[2 * e0:2 * e1].copy())
    return out


def _assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for oid in a:
        for x, y in zip(a[oid], b[oid]):
            np.testing.assert_array_equal(x, y)


def _random_edit(scene, stack, rng, world) -> None:
    ids = scene.brush_ids()
    roll = rng.random()
    if roll < 0.45:
        pick = rng.choice(ids, size=int(rng.integers(1, 4)), replace=False).tolist()
        stack.push(Transform(pick, delta=rng.integers(-2, 3, size=3) * 16.0))
    elif roll < 0.6:  # a resize: same vertex counts, other positions
        oid = int(rng.choice(ids))
        stack.push(Transform([oid], factors=(2.0, 1.0, 1.0), anchor=scene[oid].lo))
    elif roll < 0.75:
        lo = rng.integers(-64, 64, size=3) * 16.0
        new = scene.allocate_ids(1)[0]
        stack.push(AddObjects({new: box_brush(world, lo, lo + 32)}))
    elif roll < 0.9:
        stack.push(RemoveObjects(rng.choice(ids, size=2, replace=False).tolist()))
    elif stack.can_undo():
        stack.undo()


def test_random_edits_patch_the_arrays_to_a_from_scratch_build():
    from editor.model import UndoStack
    scene = _box_scene(3 * CHUNK_SIZE + 10)
    world = scene.worldspawn_id()
    stack = UndoStack(scene)
    geometry = SceneGeometry()
    arrays = geometry.build(scene)
    outlines = {axes: BrushOutlines(axes) for axes in ((0, 1), (0, 2), (1, 2))}
    for o in outlines.values():
        o.update(arrays)
    touched: set = set()
    scene.did_change.connect(lambda ids, kind: touched.update(ids))
    rng = np.random.default_rng(7)
    for _ in range(40):
        before = _per_brush(arrays)
        touched.clear()
        _random_edit(scene, stack, rng, world)
        arrays = geometry.update(scene, set(touched))
        after = _per_brush(arrays)
        # untouched brushes keep their values; only the edit's brushes were redone
        assert arrays.changed <= set(touched) | {world}
        for oid in set(before) & set(after) - arrays.changed:
            for x, y in zip(before[oid], after[oid]):
                np.testing.assert_array_equal(x, y)
        _assert_same(after, _per_brush(SceneGeometry().build(scene)))
        np.testing.assert_array_equal(np.sort(arrays.edge_ids),
                                      np.sort(SceneGeometry().build(scene).edge_ids))
        for o in outlines.values():
            o.update(arrays)
            # a moved brush may change chunk: its old one and its new one
            assert o.rebuilt_chunks <= 2 * max(1, len(arrays.changed))
    fresh = SceneGeometry().build(scene)
    for axes, o in outlines.items():
        scratch = BrushOutlines(axes)
        scratch.update(fresh)
        drawn, expected = o.outline_segments(), scratch.outline_segments()
        assert drawn.keys() == expected.keys()
        for oid in drawn:
            np.testing.assert_array_equal(drawn[oid], expected[oid])


def test_a_move_rewrites_the_arrays_in_place():
    scene = _box_scene(50)
    geometry = SceneGeometry()
    arrays = geometry.build(scene)
    vertices = arrays.mesh_vertices
    oid = scene.brush_ids()[10]
    scene.apply(Edit({oid: scene[oid].translated(np.array([16.0, 0, 0]))}))
    patched = geometry.update(scene, {oid})
    assert patched.mesh_vertices is vertices, "same counts: the big array is written in place"
    assert patched.changed == {oid}


def test_arrow_key_nudge_redraws_one_outline_chunk(window, qtbot):
    from editor.model.loading import LoadResult
    window.files.adopt_loaded(LoadResult(_box_scene(4 * CHUNK_SIZE), None))
    window.state.flush()
    doc = window.document
    top = window.views2d["Top"]
    oid = doc.scene.brush_ids()[2 * CHUNK_SIZE + 5]
    doc.push(SetSelection([oid]))
    lo = doc.scene[oid].lo.copy()
    window.activateWindow()
    qtbot.waitActive(window)
    top.setFocus()
    qtbot.keyClick(top, Qt.Key_Right)
    window.state.flush()
    assert doc.scene[oid].lo[0] > lo[0]
    for view in window.views2d.values():
        assert view.outlines.rebuilt_chunks == 1, "only the chunk holding the moved brush"
        scratch = BrushOutlines(view.axes)
        scratch.update(SceneGeometry().build(doc.scene))
        np.testing.assert_array_equal(view.outlines.outline_segments()[oid],
                                      scratch.outline_segments()[oid])
    assert window.state.scene_arrays.changed == {oid}


@pytest.mark.parametrize("n", [CHUNK_SIZE + 1])
def test_delete_and_undo_in_the_window_match_a_fresh_build(window, qtbot, n):
    from editor.model.loading import LoadResult
    window.files.adopt_loaded(LoadResult(_box_scene(n), None))
    window.state.flush()
    doc = window.document
    victims = doc.scene.brush_ids()[:3]
    doc.push(SetSelection(victims))
    window.act_delete.trigger()
    window.state.flush()
    assert not set(victims) & set(window.views2d["Top"].outlines.outline_segments())
    window.act_undo.trigger()
    window.act_undo.trigger()
    window.state.flush()
    _assert_same(_per_brush(window.state.scene_arrays), _per_brush(SceneGeometry().build(doc.scene)))
    assert set(window.views2d["Side"].outlines.outline_segments()) == set(doc.scene.brush_ids())


def test_background_open_prepares_the_views_on_the_loading_thread(window, qtbot):
    from tests.conftest import shared_file
    path = str(shared_file("quake", "quake_id1_e1m1.map"))
    old = window.document
    assert window.open_file(path, background=True)
    qtbot.waitUntil(lambda: window.document is not old, timeout=60000)
    window.state.flush()
    geometry = window.state._geometry
    assert geometry.hulls is not None, "hulls came with the loaded level"
    doc = window.document
    fresh = SceneGeometry().build(doc.scene)
    _assert_same(_per_brush(window.state.scene_arrays), _per_brush(fresh))
    for view in window.views2d.values():
        scratch = BrushOutlines(view.axes)
        scratch.update(fresh)
        drawn, expected = view.outlines.outline_segments(), scratch.outline_segments()
        assert drawn.keys() == expected.keys() == set(doc.scene.brush_ids())
        for oid in list(drawn)[:200]:
            np.testing.assert_array_equal(drawn[oid], expected[oid])
