"""Behaviour of the dynamic AABB tree beyond the shared oracle suite."""
from __future__ import annotations

import math

import numpy as np
import pytest

from plugins.brute import BruteForce
from plugins.bvh import DynamicBvh
from plugins.bvh import index as bvh_module
from spatial.scenegen import random_boxes
from tests.spatial.oracle import assert_validate_catches_tampering


def test_rotations_keep_the_height_near_log2_n_after_sorted_one_by_one_inserts():
    # boxes along a line inserted in order: without rotations this degenerates into a list
    n = 4000
    x = np.arange(n, dtype=float)
    lo = np.stack([x, np.zeros(n), np.zeros(n)], axis=1)
    tree = DynamicBvh()
    tree.build([], np.zeros((0, 3)), np.zeros((0, 3)))
    for i in range(0, n, 8):  # many small incremental batches
        tree.insert(np.arange(i, i + 8), lo[i:i + 8], lo[i:i + 8] + 0.5)
    tree.validate()
    stats = tree.stats()
    assert stats["ideal_height"] == math.ceil(math.log2(n))
    assert stats["height"] <= 1.5 * stats["ideal_height"]


def test_random_incremental_inserts_stay_shallow():
    ids, lo, hi = random_boxes(20000, seed=1, world=1000.0)
    tree = DynamicBvh(build_method="incremental")
    tree.build(ids, lo, hi)
    stats = tree.stats()
    assert stats["height"] <= 1.5 * math.ceil(math.log2(len(ids)))


def test_update_inside_the_fat_box_does_not_reinsert():
    ids, lo, hi = random_boxes(1000, seed=2, world=500.0, size_min=2.0, size_max=10.0)
    tree = DynamicBvh(margin=1.0, margin_mode="absolute")
    tree.build(ids, lo, hi)
    before = tree.nodes()
    tree.update(ids, lo + 0.5, hi + 0.5)  # within the 1-unit margin
    assert tree.stats()["fat_reinserts_last_update"] == 0
    after = tree.nodes()
    np.testing.assert_array_equal(before.lo, after.lo)  # no fat box changed
    tree.update(ids[:10], lo[:10] + 50.0, hi[:10] + 50.0)
    assert tree.stats()["fat_reinserts_last_update"] == 10
    tree.validate()
    oracle = BruteForce()
    oracle.build(ids, lo + 0.5, hi + 0.5)
    oracle.update(ids[:10], lo[:10] + 50.0, hi[:10] + 50.0)
    np.testing.assert_array_equal(tree.pairs().pairs, oracle.pairs().pairs)


@pytest.mark.parametrize("mode,margin", [("absolute", 2.0), ("relative", 0.25)])
def test_leaf_fat_boxes_follow_the_margin_mode(mode, margin):
    ids, lo, hi = random_boxes(200, seed=3, world=100.0)
    tree = DynamicBvh(margin=margin, margin_mode=mode)
    tree.build(ids, lo, hi)
    table = tree.nodes()
    leaves = table.is_leaf
    grow = table.core_lo[leaves] - table.lo[leaves]  # per side, per axis
    if mode == "absolute":
        np.testing.assert_allclose(grow, margin)
    else:
        edge = (table.core_hi[leaves] - table.core_lo[leaves]).max(axis=1)
        np.testing.assert_allclose(grow, margin * edge[:, None] * np.ones((1, 3)), rtol=1e-9)


def test_binned_sah_rebuild_gives_a_balanced_tree_with_the_same_answers():
    ids, lo, hi = random_boxes(5000, seed=4, layout="clustered", world=1000.0)
    tree = DynamicBvh(build_method="incremental")
    tree.build(ids, lo, hi)
    incremental = tree.stats()
    pairs_before = tree.pairs().pairs
    tree.set_params(build_method="binned_sah")  # full rebuild, top-down
    rebuilt = tree.stats()
    tree.validate()
    assert rebuilt["build_method"] == "binned_sah"
    assert rebuilt["area_ratio"] < incremental["area_ratio"]
    assert rebuilt["height"] <= 2 * rebuilt["ideal_height"]
    np.testing.assert_array_equal(tree.pairs().pairs, pairs_before)
    # later edits are incremental on the rebuilt tree
    tree.insert([10_000], [[1.0, 1.0, 1.0]], [[2.0, 2.0, 2.0]])
    tree.validate()


@pytest.mark.slow
def test_active_pairs_skip_sleeping_subtrees():
    ids, lo, hi = random_boxes(3000, seed=5, world=300.0)
    awake = np.zeros(len(ids), dtype=bool)
    awake[:30] = True
    tree = DynamicBvh()
    tree.build(ids, lo, hi, dynamic=True, awake=awake)
    every = tree.pairs("all")
    active = tree.pairs("active")
    assert active.tests < every.tests / 5
    assert np.isin(active.pairs, ids[:30]).any(axis=1).all()
    assert active.node_tests.sum() == active.tests


def test_remove_everything_leaves_an_empty_valid_tree():
    ids, lo, hi = random_boxes(500, seed=6, world=100.0)
    tree = DynamicBvh()
    tree.build(ids, lo, hi)
    tree.remove(ids[::2])
    tree.validate()
    tree.remove(ids[1::2])
    tree.validate()
    assert len(tree.nodes()) == 0 and tree.stats()["height"] == -1
    tree.insert([3], [[0.0, 0.0, 0.0]], [[1.0, 1.0, 1.0]])
    tree.validate()
    assert tree.query_point([0.5, 0.5, 0.5]).ids.tolist() == [3]


def test_validate_catches_an_object_outside_its_fat_box():
    ids, lo, hi = random_boxes(100, seed=7, world=100.0)
    tree = DynamicBvh(margin=0.0)
    tree.build(ids, lo, hi)
    assert_validate_catches_tampering(tree, 5, match="fat box", shift_hi=1.0)


def test_pair_work_does_not_grow_with_the_fat_margin():
    # the traversal prunes with boxes refitted around the objects, so fat margins cost no tests
    ids, lo, hi = random_boxes(3000, seed=8, world=300.0)
    tight = DynamicBvh(margin=0.0)
    tight.build(ids, lo, hi)
    fat = DynamicBvh(margin=1.0)  # every fat box is three times its object's largest edge
    fat.build(ids, lo, hi)
    oracle = BruteForce()
    oracle.build(ids, lo, hi)
    expect = oracle.pairs().pairs
    for tree in (tight, fat):
        result = tree.pairs()
        np.testing.assert_array_equal(result.pairs, expect)
        assert result.tests == len(expect)  # only leaf pairs whose objects overlap are tested
    box = ([100.0, 100.0, 100.0], [120.0, 120.0, 120.0])
    fat_hit, tight_hit = fat.query_box(*box), tight.query_box(*box)
    np.testing.assert_array_equal(fat_hit.ids, oracle.query_box(*box).ids)
    np.testing.assert_array_equal(fat_hit.ids, tight_hit.ids)
    assert fat_hit.objects_tested <= 2 * tight_hit.objects_tested + 5


def test_core_boxes_are_refitted_around_the_objects_after_moves():
    ids, lo, hi = random_boxes(2000, seed=9, world=200.0)
    tree = DynamicBvh(margin=0.5)
    tree.build(ids, lo, hi)
    tree.update(ids[:500], lo[:500] + 3.0, hi[:500] + 3.0)
    table = tree.nodes()
    inner = np.flatnonzero(~table.is_leaf)
    first_child = inner + 1  # rows are depth-first: a node's left child follows it
    children = [np.flatnonzero(table.parent == row) for row in inner]
    for row, kids in zip(inner, children):
        assert kids[0] == row + 1 and len(kids) == 2
        np.testing.assert_array_equal(table.core_lo[row], table.core_lo[kids].min(axis=0))
        np.testing.assert_array_equal(table.core_hi[row], table.core_hi[kids].max(axis=0))
    assert (table.core_lo >= table.lo).all() and (table.core_hi <= table.hi).all()
    assert len(first_child) == len(inner)
    tree.validate()


@pytest.mark.parametrize("n_awake", [20, 1500])
def test_active_pairs_per_leaf_queries_and_traversal_agree(n_awake, monkeypatch):
    ids, lo, hi = random_boxes(3000, seed=10, world=300.0)
    awake = np.zeros(len(ids), dtype=bool)
    awake[np.random.default_rng(0).choice(len(ids), n_awake, replace=False)] = True
    tree = DynamicBvh()
    tree.build(ids, lo, hi, dynamic=awake)  # the others are static
    oracle = BruteForce()
    oracle.build(ids, lo, hi, dynamic=awake)
    expect = oracle.pairs("active").pairs
    found = {}
    for way, fraction in (("queries", 1.0), ("traversal", 0.0)):
        monkeypatch.setattr(bvh_module, "ACTIVE_QUERY_FRACTION", fraction)
        found[way] = tree.pairs("active")
        np.testing.assert_array_equal(found[way].pairs, expect)
        assert found[way].tests == len(expect) == found[way].node_tests.sum()
    # both count every test on the lowest common ancestor of the two leaves
    np.testing.assert_array_equal(found["queries"].node_tests, found["traversal"].node_tests)
    assert (found["queries"].node_tests[~tree.nodes().awake] == 0).all()
