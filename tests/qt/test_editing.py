"""Editing through the window: every change is an undoable command of the model."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from editor.model import SetSelection

from .conftest import click, drag


def _top(window):
    return window.views2d["Top"]


def _document_and_top_view(window, tool=None):
    """The window's document and top view, with ``tool`` chosen first when given."""
    if tool is not None:
        window.state.set_tool(tool)
    return window.document, _top(window)


def _static_entity(doc, xy):
    """The demo's point entity at ``xy`` that has no motion (simulated movers change place)."""
    for i in doc.scene.point_entity_ids():
        ent = doc.scene[i]
        if np.allclose(ent.origin[:2], xy) and not any(k.startswith("_ps_") for k, _ in ent.properties):
            return i
    raise AssertionError(f"no static entity at {xy} in the demo level")


def test_drag_in_top_view_creates_a_brush_and_undo_redo_round_trip(window, qtbot):
    doc = window.document
    window.state.set_tool("brush")
    before = set(doc.scene.brush_ids())
    # corners off the midpoints between grid lines (-200 is as near -208 as -192): which way
    # a tie snaps would depend on the view's pixel rounding
    drag(_top(window), (-203, -205), (-124, -146))
    new = set(doc.scene.brush_ids()) - before
    assert len(new) == 1, "one drag makes one brush"
    bid = new.pop()
    lo, hi = doc.scene[bid].lo, doc.scene[bid].hi
    # snapped to the 16-unit grid in the view's plane
    np.testing.assert_allclose(lo[:2], [-208, -208])
    np.testing.assert_allclose(hi[:2], [-128, -144])
    assert hi[2] > lo[2]
    assert doc.selection == {bid}
    assert doc.is_dirty()
    doc.stack.undo()
    assert bid not in doc.scene
    doc.stack.redo()
    assert bid in doc.scene and np.allclose(doc.scene[bid].lo, lo)


def test_arrow_keys_move_the_selection_onto_the_grid(window, qtbot):
    doc, top = _document_and_top_view(window)
    ent = _static_entity(doc, (-384, 384))
    doc.push(SetSelection([ent]))
    lo0 = doc.scene[ent].lo.copy()   # origin -384 384 24, hull from -16: lo.x = -400 (off the 32 grid)
    window.state.set_grid_size(32)
    top.setFocus()
    qtbot.keyClick(top, Qt.Key_Right)
    lo1 = doc.scene[ent].lo
    assert lo1[0] == pytest.approx(-384.0)  # the next 32-unit grid line to the right of -400
    assert lo1[0] % 32 == 0
    qtbot.keyClick(top, Qt.Key_Up)
    lo2 = doc.scene[ent].lo
    assert lo2[1] % 32 == 0 and lo2[1] > lo1[1]
    assert lo2[2] == lo0[2], "arrows in the top view never move along z"
    doc.stack.undo()
    doc.stack.undo()
    np.testing.assert_allclose(doc.scene[ent].lo, lo0)


def test_click_selects_and_ctrl_click_toggles(window):
    doc, top = _document_and_top_view(window, tool="select")
    shambler = next(i for i in doc.scene.point_entity_ids() if doc.scene[i].classname == "monster_shambler")
    # origin (0, 384, 24): click its centre from above
    click(top, (0, 384))
    assert shambler in doc.selection
    click(top, (0, 384), Qt.ControlModifier)
    assert shambler not in doc.selection


def test_box_select_then_drag_moves_snapped_as_one_undo_step(window):
    doc, top = _document_and_top_view(window, tool="select")
    dog = _static_entity(doc, (384, -384))
    # zoomed in, so the press at its centre is well away from the resize handles
    top.vb.setRange(xRange=(284, 484), yRange=(-484, -284), padding=0)
    # a player start at (384, -384): a box around it selects only what lies fully inside
    drag(top, (334, -434), (434, -334))
    assert dog in doc.selection
    steps = doc.stack.index
    origin = doc.scene[dog].origin.copy()
    drag(top, (384, -384), (421, -384))
    moved = doc.scene[dog].origin - origin
    assert moved[0] % 16 == 0 and moved[0] > 0 and moved[1] == 0 and moved[2] == 0
    assert doc.stack.index == steps + 1, "one drag is one undo step"
    doc.stack.undo()
    np.testing.assert_allclose(doc.scene[dog].origin, origin)


def test_resize_handle_stretches_a_brush(window):
    doc, top = _document_and_top_view(window, tool="brush")
    drag(top, (-320, 160), (-256, 224))
    bid = next(iter(doc.selection))
    window.state.set_tool("select")
    window.state.flush()
    lo, hi = doc.scene[bid].lo.copy(), doc.scene[bid].hi.copy()
    # handle 4 is the (+u, +v) corner
    corner = top.handle_points[4]
    drag(top, tuple(corner), (corner[0] + 64, corner[1] + 32))
    lo2, hi2 = doc.scene[bid].lo, doc.scene[bid].hi
    np.testing.assert_allclose(lo2, lo)
    np.testing.assert_allclose(hi2[:2], hi[:2] + [64, 32])


def test_place_delete_duplicate_entity(window):
    doc, top = _document_and_top_view(window)
    window.state.entity_class = "item_health"
    window.state.set_tool("entity")
    before = set(doc.scene.point_entity_ids())
    click(top, (101, 37))
    new = set(doc.scene.point_entity_ids()) - before
    assert len(new) == 1
    eid = new.pop()
    assert doc.scene[eid].classname == "item_health"
    np.testing.assert_allclose(doc.scene[eid].origin[:2], [96, 32])
    window.act_duplicate.trigger()
    copies = set(doc.scene.point_entity_ids()) - before - {eid}
    assert len(copies) == 1 and doc.selection == copies
    window.act_delete.trigger()
    assert not (copies & set(doc.scene.point_entity_ids()))
    assert eid in doc.scene


def test_property_editor_pushes_set_properties(window):
    doc = window.document
    ogre = next(i for i in doc.scene.point_entity_ids() if doc.scene[i].classname == "monster_ogre")
    doc.push(SetSelection([ogre]))
    window.state.flush()
    panel = window.properties_panel
    assert panel.entity_id == ogre
    row = panel._keys.index("angle")
    panel.table.item(row, 1).setText("90")
    assert doc.scene[ogre].get("angle") == "90"
    assert doc.stack.undo_text().startswith("Set angle")
    doc.stack.undo()
    assert doc.scene[ogre].get("angle") == "270"
    assert panel.table.item(row, 1).text() == "270", "the table follows the model"


def test_history_panel_jumps_through_the_stack(window):
    doc = window.document
    window.state.set_tool("brush")
    # corners off the midpoints between grid lines (-200 is as near -208 as -192): which way
    # a tie snaps would depend on the view's pixel rounding
    drag(_top(window), (-203, -205), (-124, -146))
    drag(_top(window), (0, -300), (64, -240))
    hist = window.history_panel.list
    assert hist.count() == 1 + len(doc.stack.history)
    hist.setCurrentRow(0)
    assert doc.stack.index == 0
    hist.setCurrentRow(hist.count() - 1)
    assert doc.stack.index == len(doc.stack.history)


def test_edits_reach_the_index_and_the_overlay(window):
    doc, st = window.document, window.state
    window.params_panel.choose_backend("octree")
    st.flush()
    ent = _static_entity(doc, (-384, 384))
    doc.push(SetSelection([ent]))
    for _ in range(4):
        window.tools.nudge((1, 0, 0))
    st.flush()
    origin = doc.scene[ent].origin
    hits = st.pick(origin + (0, 0, 500), (0, 0, -1))
    assert ent in hits, "picking finds the entity where it now is"
    slot = doc.index.objects.slots_of(np.array([ent]))[0]
    np.testing.assert_allclose(doc.index.objects.lo[slot], doc.scene[ent].lo)
    assert st.overlay.total == len(doc.index.nodes())
