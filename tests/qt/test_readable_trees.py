"""Readable big trees in the editor: automatic depth limit in the legend, focus on a subtree."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from editor.model.compare.readable import READABLE_NODES, subtree_mask
from tests.qt.conftest import click, switch_backend

FREEDOOM1 = Path("/usr/share/games/doom/freedoom1.wad")


@pytest.mark.slow
def test_big_bsp_gets_a_depth_limit_and_a_focus(window, qtbot):
    if not FREEDOOM1.exists():
        pytest.skip(f"{FREEDOOM1} is absent: install the Debian package 'freedoom'")
    assert window.open_file(f"{FREEDOOM1}:E1M1", background=False)
    switch_backend(window, qtbot, "bsp")
    st = window.state
    legend = window.readable_trees.legend
    qtbot.waitUntil(lambda: "automatic" in legend.text())
    assert not legend.isHidden()
    table = st.node_table
    assert len(table) > READABLE_NODES
    assert 0 < st.overlay.count <= READABLE_NODES and st.overlay.total == len(table)
    limit = window.overlay_panel.max_depth.value()
    assert f"Depth limit: {limit}, automatic" in legend.text()
    assert (table.depth <= limit).sum() == st.overlay.count

    # changed by hand: the legend says so and the whole tree can come back
    window.overlay_panel.max_depth.setValue(64)
    st.flush()
    assert st.overlay.count == len(table) and legend.isHidden()
    window.overlay_panel.max_depth.setValue(limit + 1)
    st.flush()
    assert "set by hand" in legend.text()

    # focus: inspect a shallow node with the inspector tool (the deepest drawn one under the
    # cursor: drawn to depth 3), focus on its subtree, then draw deeper again
    window.overlay_panel.max_depth.setValue(3)
    st.flush()
    st.set_tool("inspect")
    top = window.views2d["Top"]
    inner = np.flatnonzero((table.depth == 3) & ~table.is_leaf)
    target = inner[np.argmax(table.subtree_count[inner])]
    centre = (table.lo[target] + table.hi[target]) / 2
    click(top, (centre[0], centre[1]))
    row = st.inspected_node
    assert row > 0 and not table.is_leaf[row]
    window.readable_trees.act_focus.trigger()
    window.overlay_panel.max_depth.setValue(limit)
    st.flush()
    geom = st.overlay
    inside = subtree_mask(table.parent, row)[geom.rows]
    assert inside.any() and (~inside).any()
    assert (geom.bins[~inside] == 0).all()
    assert geom.colours[inside, 3].min() > geom.colours[~inside, 3].max()
    # split planes of the focused subtree only
    st.set_overlay_settings(show_planes=True)
    st.flush()
    focused_planes = len(st.overlay.plane_lines3d)
    window.readable_trees.act_focus.trigger()
    st.flush()
    assert 0 < focused_planes < len(st.overlay.plane_lines3d)
    assert np.all(st.overlay.colours[:, 3] == st.overlay.colours[0, 3])
