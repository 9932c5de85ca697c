"""Behaviour of the kd-tree backend beyond the shared oracle suite."""
from __future__ import annotations

import numpy as np
import pytest

from plugins.brute import BruteForce
from plugins.kdtree import KdTree
from spatial.scenegen import random_boxes
from tests.spatial.oracle import assert_validate_catches_tampering


def _split_planes(tree: KdTree) -> set[tuple[int, float]]:
    inner = tree._left >= 0
    return set(zip(tree._ni[inner, 6].tolist(), tree._nf[inner, 12].tolist()))


def test_median_and_sah_choose_different_planes_and_sah_costs_no_more():
    ids, lo, hi = random_boxes(3000, seed=4, layout="clustered", world=1000.0)
    median = KdTree(split="median", leaf_size=8)
    sah = KdTree(split="sah", leaf_size=8)
    median.build(ids, lo, hi)
    sah.build(ids, lo, hi)
    assert _split_planes(median) != _split_planes(sah)
    # the root cut differs too: SAH cuts empty space around clusters, not at the median
    assert (median._ni[0, 6], median._nf[0, 12]) != (sah._ni[0, 6], sah._nf[0, 12])
    assert sah.sah_cost() <= median.sah_cost()
    assert sah.stats()["sah_cost"] == pytest.approx(sah.sah_cost(), rel=1e-6)


@pytest.mark.parametrize("split", ["median", "sah"])
@pytest.mark.parametrize("leaf_size", [1, 4, 16])
def test_leaf_size_is_honoured_on_separable_scenes(split, leaf_size):
    # disjoint boxes near the points of a lattice: some plane always separates them
    rng = np.random.default_rng(9)
    centres = np.stack(np.meshgrid(*[np.arange(13) * 10.0] * 3, indexing="ij"), -1).reshape(-1, 3)
    centres += rng.uniform(-2, 2, centres.shape)
    half = rng.uniform(0.1, 2.0, centres.shape)
    ids, lo, hi = np.arange(len(centres)), centres - half, centres + half
    tree = KdTree(split=split, leaf_size=leaf_size, max_depth=64)
    tree.build(ids, lo, hi)
    table = tree.nodes()
    assert table.own_count[table.is_leaf].max() <= leaf_size
    assert tree.stats()["max_leaf_objects"] <= leaf_size
    tree.validate()


def test_max_depth_caps_the_tree_even_when_leaves_overflow():
    ids, lo, hi = random_boxes(2000, seed=9, world=1000.0)
    tree = KdTree(leaf_size=1, max_depth=4)
    tree.build(ids, lo, hi)
    table = tree.nodes()
    assert table.depth.max() == 4
    assert table.own_count[table.is_leaf].max() > 1


def test_coincident_boxes_stay_in_one_leaf_instead_of_splitting_forever():
    lo = np.tile([[1.0, 2.0, 3.0]], (50, 1))
    tree = KdTree(leaf_size=2)
    tree.build(np.arange(50), lo, lo + 1.0)
    table = tree.nodes()
    assert len(table) == 1 and table.own_count[0] == 50
    assert len(tree.pairs().pairs) == 50 * 49 // 2


def test_straddlers_are_stored_in_both_sides_but_reported_once():
    ids, lo, hi = random_boxes(400, seed=2, world=100.0, size_max=4.0)
    lo = np.vstack([lo, [[-5.0, -5.0, -5.0]]])
    hi = np.vstack([hi, [[105.0, 105.0, 105.0]]])
    ids = np.arange(401)
    tree = KdTree(leaf_size=4)
    tree.build(ids, lo, hi)
    table = tree.nodes()
    leaves = np.flatnonzero(table.is_leaf)
    holding_big = [row for row in leaves if 400 in tree.node_objects(row)]
    assert len(holding_big) == len(leaves) > 1  # the huge box is in every leaf
    assert tree.stats()["references"] > len(ids)
    everything = tree.query_box([-10, -10, -10], [110, 110, 110])
    np.testing.assert_array_equal(everything.ids, ids)
    pairs = tree.pairs().pairs
    assert len(np.unique(pairs, axis=0)) == len(pairs)
    oracle = BruteForce()
    oracle.build(ids, lo, hi)
    np.testing.assert_array_equal(pairs, oracle.pairs().pairs)


def test_edits_rebuild_lazily_once_per_batch_of_edits():
    ids, lo, hi = random_boxes(500, seed=3, world=200.0)
    tree = KdTree()
    tree.build(ids, lo, hi)
    before = tree.stats()["rebuilds"]
    tree.update(ids[:50], lo[:50] + 5.0, hi[:50] + 5.0)
    tree.remove(ids[50:60])
    tree.insert([1000], [[0.0, 0.0, 0.0]], [[1.0, 1.0, 1.0]])
    assert tree.stats()["rebuilds"] == before + 1
    tree.query_point([0.5, 0.5, 0.5])
    assert tree.stats()["rebuilds"] == before + 1
    assert 1000 in tree.query_point([0.5, 0.5, 0.5]).ids


def test_trace_rows_belong_to_the_node_table():
    ids, lo, hi = random_boxes(800, seed=5, world=300.0)
    tree = KdTree(split="sah")
    tree.build(ids, lo, hi)
    n = len(tree.nodes())
    result = tree.query_box([100, 100, 100], [140, 140, 140], trace=True)
    assert result.visited is not None and result.visited[0] == 0
    assert result.visited.max() < n and len(result.visited) == result.nodes_visited
    ray = tree.query_ray([-10, 150, 150], [1, 0.01, 0.02], trace=True)
    assert ray.visited.max() < n


def test_closest_hit_rays_visit_fewer_nodes_than_all_hit_rays():
    ids, lo, hi = random_boxes(5000, seed=6, world=1000.0)
    tree = KdTree(split="sah")
    tree.build(ids, lo, hi)
    rng = np.random.default_rng(0)
    origins = rng.uniform(0, 1000, (200, 3))
    dirs = rng.normal(size=(200, 3))
    closest = tree.query_rays(origins, dirs)
    full = [tree.query_ray(o, d) for o, d in zip(origins, dirs)]
    for q, result in enumerate(full):
        assert closest.ids[q] == (result.ids[0] if len(result.ids) else -1)
    assert closest.nodes_visited.sum() < sum(r.nodes_visited for r in full) / 2


def test_validate_catches_an_object_on_the_wrong_side():
    ids, lo, hi = random_boxes(300, seed=1, world=100.0, size_max=3.0)
    tree = KdTree(leaf_size=4)
    tree.build(ids, lo, hi)
    tree.validate()
    # move an object behind the tree's back: it now sits in leaves its box does not reach
    assert_validate_catches_tampering(tree, 7, match="wrong side|exactly the leaves|bounds",
                                      shift_hi=60.0, shift_lo=60.0)
