"""Dragging a brush on a big level touches what the brush touched, not the level: each mouse
move re-rasterises only the chunks around the brush (the others are blitted from caches that
stay in Qt's pixmap cache), the tree diff of the history reads the whole node table once
per gesture, not once per mouse move, and the press picks without walking every object."""
from __future__ import annotations

import numpy as np
import pytest

from benchmarks.big_map import write_map

#: brushes of the generated level: enough chunk caches to outgrow Qt's default pixmap cache
BRUSHES = 6000


@pytest.fixture(scope="module")
def big_map(tmp_path_factory):
    path = tmp_path_factory.mktemp("drag") / "boxes.map"
    write_map(str(path), BRUSHES)
    return str(path)


def _open_and_select(window, qtbot, path):
    """Open ``path`` as File → Open does, then select its biggest brush with a click in the
    Top view, zoomed so the brush is bigger than its resize handles. Returns the brush id,
    a point on the brush away from its handles and the grid step."""
    from tests.qt.conftest import click
    old = window.document
    assert window.open_file(path, background=True)
    qtbot.waitUntil(lambda: window.document is not old and not window.document.rebuilding,
                    timeout=120_000)
    qtbot.waitUntil(window.tools.ready, timeout=300_000)
    window.state.flush()
    doc, top = window.document, window.views2d["Top"]
    ids = doc.scene.brush_ids()
    lo, hi = doc.scene.bounds_of(ids)
    k = int(np.argmax((hi - lo).prod(axis=1)))
    oid = int(ids[k])
    window.frame_all()
    # zoomed in just enough that a press on the brush misses its resize handles
    extent = (hi[k] - lo[k])[:2]
    from PySide6.QtCore import QRectF
    centre = (lo[k] + hi[k])[:2] / 2
    span = max(8 * float(extent.max()), 1.0)
    top.vb.setRange(QRectF(centre[0] - span / 2, centre[1] - span / 2, span, span), padding=0)
    window.tool_actions["select"].trigger()
    qtbot.wait(300)
    click(top, tuple(centre))
    qtbot.waitUntil(lambda: doc.selection == {oid}, timeout=5000)
    qtbot.wait(300)  # every view painted, every chunk cached
    grab = centre + extent / 4  # between the centre and a corner: on the brush, off its handles
    return oid, grab, 4.0 * window.state.grid_size  # a move of a few pixels, on the grid


def _press_move_release(window, qtbot, top, start, steps, on_move):
    from PySide6.QtCore import QEvent, Qt

    from tests.qt.conftest import _send, view_pos
    p0 = view_pos(top, *start)
    _send(top, QEvent.MouseButtonPress, p0, Qt.LeftButton, Qt.LeftButton, Qt.NoModifier)
    for k, point in enumerate(steps):
        qtbot.wait(15)  # pyqtgraph drops moves closer than 10 ms apart
        _send(top, QEvent.MouseMove, view_pos(top, *point), Qt.NoButton, Qt.LeftButton,
              Qt.NoModifier)
        window.state.flush()
        for view in window.views2d.values():
            view.viewport().repaint()  # the frame this move paints
        on_move(k)
    _send(top, QEvent.MouseButtonRelease, view_pos(top, *steps[-1]), Qt.LeftButton,
          Qt.NoButton, Qt.NoModifier)


def test_a_drag_step_rerasterises_only_the_dragged_brushs_chunks(window, qtbot, big_map):
    oid, centre, grid = _open_and_select(window, qtbot, big_map)
    doc, top = window.document, window.views2d["Top"]
    chunk_items = sum(len(v.brushes.items()) for v in window.views2d.values())
    assert chunk_items > 600  # a level of many chunks
    x0 = float(doc.scene[oid].lo[0])
    painted = []

    def count(_k):
        painted.append(sum(item.paints for v in window.views2d.values()
                           for item in v.brushes.items()))

    count(-1)
    steps = [centre + [grid * (k + 1), 0.0] for k in range(5)]
    _press_move_release(window, qtbot, top, centre, steps, count)
    assert doc.scene[oid].lo[0] == x0 + 5 * grid, "each move moved the brush"
    per_move = np.diff(painted)
    # each move redraws the chunk the brush left and the one it entered, fills and edges, in
    # each of three views: never the thousands of chunks around it
    assert per_move.max() <= 3 * 2 * 2, per_move.tolist()


def test_a_drag_diffs_the_tree_once_when_it_rests(window, qtbot, big_map, monkeypatch):
    from editor.qt.compare import tree_diff_view

    calls = []
    real = tree_diff_view.tree_diff

    def counted(old, new):
        calls.append(len(new))
        return real(old, new)

    monkeypatch.setattr(tree_diff_view, "tree_diff", counted)
    oid, centre, grid = _open_and_select(window, qtbot, big_map)
    doc, top = window.document, window.views2d["Top"]
    calls.clear()
    during = []
    steps = [centre + [0.0, grid * (k + 1)] for k in range(5)]
    _press_move_release(window, qtbot, top, centre, steps, lambda k: during.append(len(calls)))
    assert during == [0] * 5, "the node table was read and diffed on a mouse move"
    row = doc.stack.index
    assert doc.stack.history[row - 1].startswith("Move")
    qtbot.waitUntil(lambda: len(calls) == 1, timeout=5000)  # once, when the gesture rests
    qtbot.wait(tree_diff_view.GESTURE_REST_MS + 100)
    assert len(calls) == 1
    # an undo right after a drag diffs the drag first (before its edit), then the undo
    steps = [centre + [0.0, grid * (k + 6)] for k in range(2)]
    calls.clear()
    _press_move_release(window, qtbot, top, steps[0] - [0.0, grid], steps, lambda k: None)
    window.act_undo.trigger() if hasattr(window, "act_undo") else doc.stack.undo()
    assert len(calls) == 2, calls



def test_a_drag_picks_without_walking_the_scene_after_an_edit(window, qtbot, monkeypatch):
    """The press of a drag picks along the view axis from above the index's highest object,
    read from its object table: the scene's bounds, dropped by every edit, are not walked
    again (a third of a second on 50,000 brushes), and the same objects are picked as from
    above the scene's bounds."""
    from PySide6.QtCore import QPointF

    from editor.model import SetSelection
    from editor.model.scene import Scene
    from editor.qt.tools import edit_tools
    from tests.qt.conftest import drag
    doc, top = window.document, window.views2d["Top"]
    qtbot.waitUntil(window.tools.ready, timeout=300_000)
    window.tool_actions["select"].trigger()
    lo, hi = doc.scene.bounds()
    points = [QPointF(*(lo[:2] + (hi - lo)[:2] * f)) for f in np.linspace(0.1, 0.9, 9)]
    picked = [edit_tools.pick_in_view(window.state, top, p) for p in points]
    with monkeypatch.context() as m:
        m.setattr(edit_tools, "_top_of_index", lambda d, axis: float(d.scene.bounds()[1][axis]))
        assert picked == [edit_tools.pick_in_view(window.state, top, p) for p in points]
    assert sum(map(len, picked)) > 9, "the points hit the level"
    walks = []
    real = Scene._walk_bounds
    monkeypatch.setattr(Scene, "_walk_bounds", lambda self: walks.append(1) or real(self))
    brush = next(int(i) for i in window.state.scene_arrays.brush_ids
                 if np.all(doc.scene[int(i)].hi[:2] - doc.scene[int(i)].lo[:2] >= 64))
    doc.push(SetSelection([brush]))
    x0 = float(doc.scene[brush].lo[0])
    for k in range(2):  # the first drag's moves are edits: the second press follows them
        centre = (doc.scene[brush].lo[:2] + doc.scene[brush].hi[:2]) / 2
        drag(top, tuple(centre), tuple(centre + [128.0, 0.0]))
        window.state.flush()
        assert float(doc.scene[brush].lo[0]) == x0 + 128.0 * (k + 1), "the drag moved the brush"
    assert walks == []
