"""Editor defects a new user meets on the first day, each driven through the real window."""
from __future__ import annotations

from PySide6.QtCore import Qt

from .conftest import drag


def _top(window):
    return window.views2d["Top"]


def test_the_brush_tool_makes_a_brush_with_every_drag(window):
    """The new brush is selected after a drag; the next drag elsewhere still makes a brush."""
    doc = window.document
    window.state.set_tool("brush")
    before = set(doc.scene.brush_ids())
    drag(_top(window), (-203, -205), (-124, -146))
    first = set(doc.scene.brush_ids()) - before
    assert len(first) == 1 and doc.selection == first
    drag(_top(window), (-83, -205), (-4, -146))
    second = set(doc.scene.brush_ids()) - before - first
    assert len(second) == 1, "the second drag made no brush"
    assert doc.selection == second
    drag(_top(window), (-203, -85), (-124, -26))
    assert len(set(doc.scene.brush_ids()) - before) == 3


def test_ctrl_y_redoes(window, qtbot):
    doc = window.document
    window.state.set_tool("brush")
    before = set(doc.scene.brush_ids())
    drag(_top(window), (-203, -205), (-124, -146))
    made = set(doc.scene.brush_ids()) - before
    window.activateWindow()  # the shortcuts are the window's: they act while it is active
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    qtbot.keyClick(window, Qt.Key_Z, Qt.ControlModifier)
    assert not made & set(doc.scene.brush_ids())
    qtbot.keyClick(window, Qt.Key_Y, Qt.ControlModifier)
    assert made <= set(doc.scene.brush_ids())



SMALL_MAP = """// saved by Partition Studio: the BVH is the level's choice
{
"classname" "worldspawn"
"_ps_backend" "bvh"
{
( -64 -64 0 ) ( -64 -63 0 ) ( -64 -64 1 ) base 0 0 0 1 1
( 64 -64 0 ) ( 64 -64 1 ) ( 64 -63 0 ) base 0 0 0 1 1
( -64 -64 0 ) ( -64 -64 1 ) ( -63 -64 0 ) base 0 0 0 1 1
( -64 64 0 ) ( -63 64 0 ) ( -64 64 1 ) base 0 0 0 1 1
( -64 -64 0 ) ( -63 -64 0 ) ( -64 -63 0 ) base 0 0 0 1 1
( -64 -64 16 ) ( -64 -63 16 ) ( -63 -64 16 ) base 0 0 0 1 1
}
}
{
"classname" "info_player_start"
"origin" "0 0 40"
}
"""


def _open_map(window, qtbot, path):
    window.open_file(str(path))
    qtbot.waitUntil(lambda: window.document is not None and window.document.path == str(path)
                    and window.files.load_worker is None and not window.document.rebuilding, timeout=120_000)


def test_a_backend_choice_alone_never_asks_before_a_reload(window, qtbot, tmp_path):
    """Another editor saves the .map while the only unsaved change is the backend choice:
    the file is reloaded without a question and the choice applied again, saying so."""
    from .conftest import switch_backend

    path = tmp_path / "level.map"
    path.write_text(SMALL_MAP)
    _open_map(window, qtbot, path)
    assert window.document.index.name == "bvh"
    switch_backend(window, qtbot, "kdtree")
    doc = window.document
    assert doc.is_dirty(), "the choice is the document's: Save stores it in the .map"
    asked = []
    window.ask_reload = lambda: asked.append(1) or False
    qtbot.wait(1100)  # past the window's own-save guard and the file's time stamp
    path.write_text(SMALL_MAP.replace('"0 0 40"', '"32 0 40"'))  # TrenchBroom saves
    qtbot.waitUntil(lambda: window.document is not doc, timeout=60_000)
    again = window.document
    qtbot.waitUntil(lambda: again.index.name == "kdtree" and not again.rebuilding, timeout=120_000)
    assert asked == [], "a backend choice alone must not ask"
    player = next(i for i in again.scene.point_entity_ids())
    assert again.scene[player].origin[0] == 32, "the other editor's change is in"
    assert again.scene.settings.backend == "kdtree" and again.is_dirty()
    assert "applied your kdtree backend" in window.statusBar().currentMessage()
    again.stack.undo()  # the re-applied choice is one step: undo gives the file's own choice
    qtbot.waitUntil(lambda: again.index.name == "bvh" and not again.rebuilding, timeout=120_000)
    assert not again.is_dirty()


def test_a_real_edit_still_asks_before_a_reload(window, qtbot, tmp_path):
    path = tmp_path / "level.map"
    path.write_text(SMALL_MAP)
    _open_map(window, qtbot, path)
    doc = window.document
    window.state.set_tool("brush")
    drag(_top(window), (-43, -45), (-4, -6))
    assert doc.is_dirty()
    asked = []
    window.ask_reload = lambda: asked.append(1) or False
    window.files.reload_from_watch()
    assert asked == [1] and window.document is doc


def test_nothing_stale_is_shown_before_the_first_level_is_open(qtbot, settings):
    """The window is up while the first level loads: no backend is claimed, the axes read in
    level units and there is nothing to undo."""
    from editor.qt.main_window import MainWindow

    window = MainWindow(settings=settings, use_gl=False)
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    combo = window.params_panel.backend_combo
    assert not combo.isEnabled() and combo.currentData() is None
    assert "loading" in combo.currentText()
    assert not window.act_undo.isEnabled() and not window.act_redo.isEnabled()
    for view in window.views2d.values():
        for side in ("bottom", "left"):
            assert "x0.001" not in view.getAxis(side).labelString()
    assert window.open_file(None, background=False)
    window.state.flush()
    assert combo.isEnabled() and combo.currentData() == window.document.index.name
    assert not window.act_undo.isEnabled()
    top = window.views2d["Top"]
    assert all("(x" not in top.getAxis(side).labelString() for side in ("bottom", "left"))


def _box(lo, hi) -> str:
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    faces = [(x0, y0, z0, x0, y0 + 1, z0, x0, y0, z0 + 1), (x1, y0, z0, x1, y0, z0 + 1, x1, y0 + 1, z0),
             (x0, y0, z0, x0, y0, z0 + 1, x0 + 1, y0, z0), (x0, y1, z0, x0 + 1, y1, z0, x0, y1, z0 + 1),
             (x0, y0, z0, x0 + 1, y0, z0, x0, y0 + 1, z0), (x0, y0, z1, x0, y0 + 1, z1, x0 + 1, y0, z1)]
    rows = ["( {} {} {} ) ( {} {} {} ) ( {} {} {} ) base 0 0 0 1 1".format(*f) for f in faces]
    return "{\n" + "\n".join(rows) + "\n}\n"


#: a ground floor, an upper storey over the middle and a roof over all; the player starts on
#: the ground floor
TWO_STOREYS = ('{\n"classname" "worldspawn"\n' + _box((-512, -512, -16), (512, 512, 0))
               + _box((-128, -128, 200), (128, 128, 216)) + _box((-512, -512, 400), (512, 512, 416))
               + '}\n{\n"classname" "info_player_start"\n"origin" "256 256 24"\n}\n')


def test_entities_placed_from_the_top_land_on_the_working_floor_shown_before_the_click(
        window, qtbot, tmp_path):
    """From the top view an entity lands on the floor below the working height (the player
    start's level here), not on the upper storey or the roof; the status bar says where
    before the click."""
    from PySide6.QtCore import QEvent

    from editor.model.entity_classes import class_box

    from .conftest import _send, click, view_pos

    path = tmp_path / "storeys.map"
    path.write_text(TWO_STOREYS)
    _open_map(window, qtbot, path)
    doc, top = window.document, _top(window)
    window.state.entity_class = "monster_army"
    window.tool_actions["entity"].trigger()
    stand = -float(class_box("monster_army")[0][2])  # origin above the floor it stands on
    _send(top, QEvent.MouseMove, view_pos(top, 3, -2), Qt.NoButton, Qt.NoButton, Qt.NoModifier)
    qtbot.waitUntil(lambda: "lands at" in window.statusBar().currentMessage(), timeout=5000)
    assert f"lands at (0, 0, {stand:g})" in window.statusBar().currentMessage()
    before = set(doc.scene.point_entity_ids())
    click(top, (3, -2))  # over the upper storey: still the ground floor, where the player is
    placed = (set(doc.scene.point_entity_ids()) - before).pop()
    assert tuple(doc.scene[placed].origin) == (0, 0, stand)
    window.state.set_ray_height(230.0)  # the Queries panel's ray height: the upper storey
    click(top, (-30, 18))
    upper = (set(doc.scene.point_entity_ids()) - before - {placed}).pop()
    assert tuple(doc.scene[upper].origin) == (-32, 16, 216 + stand)
