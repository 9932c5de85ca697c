"""Readable big trees: the focused subtree and the automatic depth limit."""
from __future__ import annotations

import numpy as np

from editor.model.compare.readable import auto_depth_limit, dim_outside_focus, subtree_mask
from editor.model.demo import build_demo_scene
from editor.model.index_sync import IndexSync


def test_subtree_mask_follows_parents():
    table = IndexSync(build_demo_scene(), "bsp").index.nodes()
    child = int(np.flatnonzero(table.parent == 0)[0])
    mask = subtree_mask(table.parent, child)
    assert mask[child] and not mask[0]
    for row in np.flatnonzero(mask):  # every marked row's parent is marked, up to the focus
        assert row == child or mask[table.parent[row]]
    assert subtree_mask(table.parent, 0).all()
    assert not subtree_mask(table.parent, -1).any()


def test_auto_depth_limit_bounds_the_drawn_count():
    depth = np.repeat(np.arange(8), [1, 2, 4, 8, 16, 32, 64, 128])
    assert auto_depth_limit(depth, budget=1000) is None
    limit = auto_depth_limit(depth, budget=40)
    assert limit == 4 and (depth <= limit).sum() <= 40 < (depth <= limit + 1).sum()


def test_dimming_leaves_the_focus_bright():
    table = IndexSync(build_demo_scene(), "bsp").index.nodes()
    rows = np.arange(len(table))
    colours = np.ones((len(rows), 4), dtype=np.float32)
    bins = np.full(len(rows), 9)
    focus = int(np.flatnonzero(table.parent == 0)[0])
    focused = dim_outside_focus(table, rows, focus, colours, bins)
    assert (bins[focused] == 9).all() and (bins[~focused] == 0).all()
    assert (colours[focused] == 1).all() and (colours[~focused, 3] < 0.5).all()
