"""The pair browser: every overlapping pair of a frame once, the node that tested it, and the
pairs a cell compares overlapping or not — checked against brute force on several backends."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model.hotspots import HotspotWindow
from editor.model.pair_browser import _Holders, cell_pairs, frame_pairs
from spatial.geometry import boxes_overlap
from spatial.registry import default_registry
from spatial.scenegen import random_boxes


def _index(name: str, count: int = 400, seed: int = 3):
    ids, lo, hi = random_boxes(count, seed=seed, size_min=1.0, size_max=40.0, world=300.0)
    index = default_registry().backend(name)()
    index.build(ids, lo, hi)
    return index, ids, lo, hi


def _brute_pairs(ids, lo, hi) -> set[tuple[int, int]]:
    meets = boxes_overlap(lo[:, None, :], hi[:, None, :], lo[None, :, :], hi[None, :, :])
    a, b = np.nonzero(np.triu(meets, 1))
    return {(min(int(ids[i]), int(ids[j])), max(int(ids[i]), int(ids[j]))) for i, j in zip(a, b)}


def _subtree_holds(index, nodes, row: int, oid: int) -> bool:
    inside = {row}
    for r in range(row + 1, len(nodes)):
        if int(nodes.parent[r]) in inside:
            inside.add(r)
    return any(oid in index.node_objects(r).tolist() for r in inside)


@pytest.mark.parametrize("backend", ["octree", "grid", "bvh", "kdtree"])
def test_every_overlapping_pair_is_listed_once_with_the_node_that_tested_it(backend):
    index, ids, lo, hi = _index(backend)
    result = index.pairs("all")
    nodes = index.nodes()
    listed = frame_pairs(index, nodes, result.pairs, limit=10_000)
    assert listed.total == len(result.pairs)
    got = {(r.a, r.b) for r in listed.rows}
    assert got == _brute_pairs(ids, lo, hi) and len(got) == len(listed.rows)
    for row in listed.rows:
        assert row.overlap and 0 <= row.node < len(nodes)
        assert row.depth == nodes.depth[row.node] and row.node_tests == nodes.pair_tests[row.node]
        # the node stores one of them and the other lies in its subtree, or (a tree searched
        # two subtrees at a time) it is above both
        assert _subtree_holds(index, nodes, row.node, row.a) and \
            _subtree_holds(index, nodes, row.node, row.b)
    tests = [r.node_tests for r in listed.rows]
    assert tests == sorted(tests, reverse=True)


def test_a_limited_list_keeps_the_pairs_of_the_costliest_nodes():
    index, ids, lo, hi = _index("octree", 600)
    result = index.pairs("all")
    nodes = index.nodes()
    every = frame_pairs(index, nodes, result.pairs, limit=10_000).rows
    top = frame_pairs(index, nodes, result.pairs, limit=25)
    assert top.total == len(every) and len(top.rows) == 25
    holders = _Holders(index, nodes)
    heaviest = sorted((max(int(nodes.pair_tests[r]) for r in np.concatenate(
        [holders.rows_of(p.a), holders.rows_of(p.b)]).tolist()) for p in every), reverse=True)
    weights = [max(int(nodes.pair_tests[r]) for r in np.concatenate(
        [holders.rows_of(p.a), holders.rows_of(p.b)]).tolist()) for p in top.rows]
    assert sorted(weights, reverse=True) == heaviest[:25]


@pytest.mark.parametrize("backend", ["octree", "grid"])
def test_a_cell_lists_what_it_compares(backend):
    index, ids, lo, hi = _index(backend)
    index.pairs("all")
    nodes = index.nodes()
    row = int(np.argmax(nodes.pair_tests))
    listed = cell_pairs(index, nodes, row, limit=100_000)
    held = set(index.node_objects(row).tolist())
    boxes = {int(i): (box_lo, box_hi) for i, box_lo, box_hi in zip(ids, lo, hi)}
    assert listed.total == len(listed.rows) > 0 and not listed.bound
    assert len({(r.a, r.b) for r in listed.rows}) == len(listed.rows)  # each pair once
    few = cell_pairs(index, nodes, row, limit=3)
    assert [(r.a, r.b) for r in few.rows] == [(r.a, r.b) for r in listed.rows[:3]]
    if listed.total > 3:  # not all listed: the total is an upper bound of the comparisons
        assert few.bound and few.total >= listed.total
    for r in listed.rows:
        assert r.a < r.b and (r.a in held or r.b in held) and r.node == row
        assert r.overlap == bool(boxes_overlap(*boxes[r.a], *boxes[r.b]))
        other = r.b if r.a in held else r.a
        assert _subtree_holds(index, nodes, row, other)
    # every overlapping pair with a stored object whose partner is in the subtree is there
    found = {(r.a, r.b) for r in listed.rows if r.overlap}
    for a, b in _brute_pairs(ids, lo, hi):
        for mine, other in ((a, b), (b, a)):
            if mine in held and _subtree_holds(index, nodes, row, other):
                assert (a, b) in found


def test_the_window_counts_the_frames_a_pair_overlapped():
    window = HotspotWindow(3)
    index, ids, lo, hi = _index("octree", 50)
    nodes = index.nodes()
    for frame, pairs in enumerate([[[1, 2]], [[2, 1], [3, 4]], [[3, 4]], [[3, 4], [5, 6]]]):
        window.push(frame, nodes, None, np.array(pairs))
    counts = window.pair_frames(np.array([[1, 2], [4, 3], [5, 6], [7, 8]]))
    assert counts.tolist() == [1, 3, 1, 0]  # frame 0 left the three-frame window
