"""The Pairs dock: the displayed frame's overlapping pairs with the node that tested each, and
the pairs a chosen hot cell compares; a click selects the pair's level objects."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt

from editor.model.hotspot_pairs import find_cell


def _step(window, qtbot, frames: int) -> None:
    for _ in range(frames):
        window.act_step.trigger()  # Simulation ▸ Step one frame (F10)
    qtbot.waitUntil(lambda: window.timeline.frame >= frames, timeout=60_000)


def test_the_frames_pairs_are_listed_with_their_node(window, qtbot):
    _step(window, qtbot, 12)
    c, panel = window.timeline, window.pair_panel
    window.docks["pairs"].raise_()
    qtbot.waitUntil(lambda: panel.listed.total == len(c.shown_pairs().pairs), timeout=10_000)
    pairs = {tuple(sorted(p)) for p in c.shown_pairs().pairs.tolist()}
    shown = {(r.a, r.b) for r in panel.listed.rows}
    assert shown <= pairs and len(shown) == min(len(pairs), panel.tree.topLevelItemCount())
    nodes = c.shown_nodes()
    for k, r in enumerate(panel.listed.rows):
        item = panel.tree.topLevelItem(k)
        assert item.text(1) == "yes" and item.text(2) == str(int(nodes.depth[r.node]))
        assert item.text(3) == f"{int(nodes.pair_tests[r.node]):,}"
    assert panel.listed.rows, "the demo's monsters meet the level by frame 12"
    first = panel.listed.rows[0]  # a click selects the pair's level objects
    tree = panel.tree
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton,
                     pos=tree.visualItemRect(tree.topLevelItem(0)).center())
    doc = window.document
    assert set(doc.selection) == {i for i in (first.a, first.b) if i in doc.scene} != set()
    assert not doc.is_dirty()


def test_choosing_a_hot_cell_lists_what_it_compares(window, qtbot):
    _step(window, qtbot, 12)
    c, hot, panel = window.timeline, window.hotspot_panel, window.pair_panel
    window.docks["hotspots"].raise_()
    hot.refresh()
    assert hot.tree.topLevelItemCount() > 0
    top = hot.tree.topLevelItem(0)
    hot.tree.setCurrentItem(top)  # what a click on the row does first
    assert panel.mode.currentData() == "cell"
    nodes, index = c.shown_nodes(), c.shown_index()
    row = find_cell(nodes, np.array(hot.hotspots[0].lo), np.array(hot.hotspots[0].hi))
    stored = set(index.node_objects(row).tolist())
    assert panel.listed.rows and all(r.node == row for r in panel.listed.rows)
    for r in panel.listed.rows:
        assert r.a in stored or r.b in stored
        slots = index.objects.slots_of(np.array([r.a, r.b]))
        lo, hi = index.objects.lo[slots], index.objects.hi[slots]
        assert r.overlap == bool(np.all((lo[0] <= hi[1]) & (lo[1] <= hi[0])))
    assert "compares" in panel.summary.text()


def test_while_playing_the_list_waits_for_a_still_frame(window, qtbot):
    c, panel = window.timeline, window.pair_panel
    window.act_play.trigger()
    qtbot.waitUntil(lambda: c.frame >= 3, timeout=60_000)
    panel.refresh()
    assert "pause" in panel.summary.text()
    window.act_play.trigger()  # pause
    qtbot.waitUntil(lambda: c.play_state == c.PAUSED, timeout=10_000)
    qtbot.waitUntil(lambda: "overlapping pairs" in panel.summary.text(), timeout=10_000)
