"""Compare mode on freedoom1 E1M1: ours against the shipped BSP, linked views, the CLI's numbers."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from editor.cli import run_cli
from editor.model.compare.report import FIGURES
from tests.qt.conftest import _send, view_pos

FREEDOOM1 = Path("/usr/share/games/doom/freedoom1.wad")
E1M1 = f"{FREEDOOM1}:E1M1"
#: figures read from counters (the others are wall-clock times and differ run to run)
COUNTED = [key for key, _ in FIGURES if not key.endswith("_ms")]


def pan(view, start, end, steps: int = 6) -> None:
    """Drag with the middle button (pans the view) from world ``start`` to world ``end``."""
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtTest import QTest

    p0, p1 = view_pos(view, *start), view_pos(view, *end)
    _send(view, QEvent.MouseButtonPress, p0, Qt.MiddleButton, Qt.MiddleButton, Qt.NoModifier)
    for k in range(1, steps + 1):
        QTest.qWait(11)  # pyqtgraph's mouse-move rate limit
        _send(view, QEvent.MouseMove, p0 + (p1 - p0) * (k / steps), Qt.NoButton, Qt.MiddleButton,
              Qt.NoModifier)
    _send(view, QEvent.MouseButtonRelease, p1, Qt.MiddleButton, Qt.NoButton, Qt.NoModifier)


def open_compare(window, qtbot):
    window.act_compare.trigger()
    compare = window.compare_window
    qtbot.waitExposed(compare)
    qtbot.waitUntil(lambda: compare.comparison is not None, timeout=600_000)
    return compare


@pytest.mark.slow
def test_compare_mode_on_e1m1(window, qtbot, capsys):
    if not FREEDOOM1.exists():
        pytest.skip(f"{FREEDOOM1} is absent: install the Debian package 'freedoom'")
    assert window.open_file(E1M1, background=False)
    window.state.flush()
    compare = open_compare(window, qtbot)
    a, b = compare.sides
    assert (a.index.name, b.index.name) == ("bsp", "shipped_bsp")
    assert a.node_table is not None and len(a.node_table) != len(b.node_table)

    # the camera: panning view A moves view B the same way
    view_a, view_b = compare.views
    before_b = view_b.vb.viewRange()
    (x0, x1), (y0, y1) = view_a.vb.viewRange()
    centre = ((x0 + x1) / 2, (y0 + y1) / 2)
    pan(view_a, centre, (centre[0] + (x1 - x0) / 4, centre[1]))
    qtbot.waitUntil(lambda: view_b.vb.viewRange() != before_b)
    assert view_b.vb.viewRange()[0] == pytest.approx(view_a.vb.viewRange()[0])
    assert view_b.vb.viewRange()[0][0] < before_b[0][0]  # dragged right: the view moved left

    # one colour scale for both overlays
    assert a.overlay.vmax == b.overlay.vmax == max(a.raw_overlay.vmax, b.raw_overlay.vmax)

    # the table shows the command line's numbers
    shown = compare.table.values()
    assert run_cli(["compare", E1M1, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in COUNTED:
        assert shown[key][:2] == pytest.approx(
            (_figure(report["a"], key), _figure(report["b"], key))), key
    assert compare.costliest.count() > 0 and " bsp node" in compare.costliest.item(0).text()

    # choosing an object in the list selects it in the document both views show
    from PySide6.QtCore import Qt

    costly = compare.costliest
    rect = costly.visualItemRect(costly.item(0))
    qtbot.mouseClick(costly.viewport(), Qt.LeftButton, pos=rect.center())
    assert window.document.selection == {costly.costs[0].oid}
    assert a.document.selection == b.document.selection == window.document.selection


def _figure(side, key):
    if "." in key:
        kind, name = key.split(".")
        return side["queries"][kind][name]
    return side[key]


def wall_adjacent_thing(scene) -> int:
    """A point entity within 32 units of a wall segment's box (in the top view)."""
    walls = [scene.segment(i) for i in scene.segment_ids()]
    lo = np.array([np.minimum(w.a, w.b) for w in walls]) - 32
    hi = np.array([np.maximum(w.a, w.b) for w in walls]) + 32
    for oid in scene.point_entity_ids():
        x, y = scene.entity(oid).origin[:2]
        if ((lo[:, 0] <= x) & (x <= hi[:, 0]) & (lo[:, 1] <= y) & (y <= hi[:, 1])).any():
            return oid
    raise AssertionError("no thing stands next to a wall")


@pytest.mark.slow
def test_edit_next_to_a_wall_lists_the_tree_diff(window, qtbot):
    from PySide6.QtCore import Qt

    from editor.model.commands import SetSelection

    if not FREEDOOM1.exists():
        pytest.skip(f"{FREEDOOM1} is absent: install the Debian package 'freedoom'")
    assert window.open_file(E1M1, background=False)
    window.state.flush()
    compare = open_compare(window, qtbot)
    doc = window.document
    thing = wall_adjacent_thing(doc.scene)
    doc.push(SetSelection([thing]))
    top = window.views2d["Top"]
    top.setFocus()
    qtbot.keyClick(top, Qt.Key_BracketRight)  # a coarser grid: each nudge moves further
    qtbot.keyClick(top, Qt.Key_BracketRight)
    tracker = window.tree_diff
    history = window.history_panel.list
    for _ in range(12):  # nudge until a step reshapes the tree
        qtbot.keyClick(top, Qt.Key_Right)
        if tracker.last is not None:
            break
    assert tracker.last is not None, "no nudge changed the tree"
    row = doc.stack.index
    entry = history.item(row).text()
    assert entry.startswith("Move") and tracker.last.summary() in entry
    assert tracker.highlighted() == len(window.views2d) + len(compare.views)
    qtbot.waitUntil(lambda: tracker.highlighted() == 0, timeout=5000)  # for a moment only
    # a later step that leaves the tree alone (clearing the selection) keeps the entry's list
    window.act_select_none.trigger()
    assert doc.stack.index == row + 1 and not doc.selection
    assert tracker.last.summary() in history.item(row).text()


@pytest.mark.slow
def test_first_use_of_a_side_backend_is_prepared_off_the_window(window, qtbot, monkeypatch):
    import editor.warmup as warmup

    monkeypatch.setattr(warmup, "needs_warm_up", lambda name: name == "bsp")
    window.act_compare.trigger()
    compare = window.compare_window
    assert "preparing bsp" in compare.status.text()
    assert compare.sides[0].document is None  # nothing built before the kernels are ready
    qtbot.waitUntil(lambda: compare.comparison is not None, timeout=600_000)
    assert [s.index.name for s in compare.sides] == ["octree", "bsp"]


@pytest.mark.slow
def test_simulated_frames_are_the_compared_motion(window, qtbot):
    for _ in range(5):  # Simulation → Step one frame, five times: a recording of the run
        window.act_step.trigger()
    qtbot.waitUntil(lambda: window.timeline.frame == 5, timeout=60_000)
    recording = window.timeline.recording
    assert recording is not None and len(recording) > 1
    compare = open_compare(window, qtbot)
    report = compare.table.report
    assert report["workload"]["motion"].startswith("recording")
    frames_a, frames_b = report["a"]["frames"], report["b"]["frames"]
    assert len(frames_a) == len(frames_b) == len(recording) - 1
    assert [f["overlapping"] for f in frames_a] == [f["overlapping"] for f in frames_b]
    x, y = compare.frame_plot.curves["a"].getData()
    assert list(y) == [f["candidates"] for f in frames_a]


def test_a_bad_parameter_is_one_line_and_keeps_the_sides(window, qtbot):
    from PySide6.QtCore import Qt

    compare = open_compare(window, qtbot)
    shown = compare.sides[1].index
    params = compare.findChild(type(compare.controls[1].params), "compare_params_b")
    params.setText("max_depth=oops")
    qtbot.mouseClick(compare.measure_button, Qt.LeftButton)
    assert compare.status.text().startswith("B: ") and "max_depth" in compare.status.text()
    assert compare.sides[1].index is shown
    params.setText("max_depth=3")
    qtbot.mouseClick(compare.measure_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: compare.table.values()["max_depth"][1] == compare.sides[1].index.stats()["max_depth"] <= 3,
                    timeout=600_000)
    assert compare.views[1].title.toPlainText() == f"B: {compare.sides[1].spec.label()}"


def test_a_side_over_the_memory_budget_is_one_line(window, qtbot, monkeypatch):
    from PySide6.QtCore import Qt

    compare = open_compare(window, qtbot)
    monkeypatch.setenv("PARTITION_STUDIO_MEMORY_BUDGET_MB", "1")
    controls = compare.controls[0]
    controls.backend.setCurrentIndex(controls.backend.findData("quadtree"))
    controls.params.setText("max_depth=24 max_objects=1 max_duplication=4")
    shown = compare.sides[0].index
    qtbot.mouseClick(compare.measure_button, Qt.LeftButton)
    assert compare.status.text().startswith("A: ") and "memory budget" in compare.status.text()
    assert compare.sides[0].index is shown and compare.sides[0].document is window.document
