"""``count_pairs``: the number of pairs ``pairs`` returns, for every backend, without the list."""
from __future__ import annotations

import numpy as np
import pytest

from plugins.brute import BruteForce
from spatial.errors import ParamError
from spatial.pair_count import count_bucket_pairs
from spatial.registry import default_registry
from spatial.scenegen import random_boxes

REGISTRY = default_registry()


def _crowded_scene(n=2000, seed=4):
    """Boxes that overlap a lot (several thousand pairs, beyond a kernel's first buffer), with
    some big ones that straddle every split and land in many leaves of a bucket tree."""
    ids, lo, hi = random_boxes(n, seed=seed, world=200.0, size_max=30.0)
    hi[:12] += 150.0
    rng = np.random.default_rng(seed)
    return ids, lo, hi, rng.random(n) < 0.4, rng.random(n) < 0.7


@pytest.mark.parametrize("name", sorted(REGISTRY.backends))
def test_count_equals_brute_force_in_both_modes(name):
    ids, lo, hi, dynamic, awake = _crowded_scene()
    index, oracle = REGISTRY.backend(name)(), BruteForce()
    index.build(ids, lo, hi, dynamic, awake)
    oracle.build(ids, lo, hi, dynamic, awake)
    for mode in ("all", "active"):
        want = len(oracle.pairs(mode).pairs)
        assert want > 1024, "the scene must overflow a first pair buffer"
        got = index.count_pairs(mode)
        assert got.overlapping == want, f"{name} count_pairs({mode!r})"
        assert got.tests == index.pairs(mode).tests


@pytest.mark.parametrize("name", sorted(REGISTRY.backends))
def test_count_follows_edits(name):
    ids, lo, hi, dynamic, awake = _crowded_scene(600, seed=9)
    index, oracle = REGISTRY.backend(name)(), BruteForce()
    for target in (index, oracle):
        target.build(ids, lo, hi, dynamic, awake)
        target.update(ids[:100], lo[:100] + 7.0, hi[:100] + 7.0)
        target.remove(ids[100:150])
    assert index.count_pairs("all").overlapping == len(oracle.pairs("all").pairs)


def test_an_unknown_mode_is_refused():
    index = REGISTRY.backend("octree")()
    with pytest.raises(ParamError, match="mode"):
        index.count_pairs("sleeping")


def test_triangle_octree_counts_each_shared_leaf_pair_once():
    """Triangles are stored in every leaf they meet, so a pair is found once per shared leaf;
    the count must equal the de-duplicated list."""
    rng = np.random.default_rng(2)
    n = 800
    base = rng.uniform(0, 150, size=(n, 1, 3))
    corners = base + rng.uniform(-25, 25, size=(n, 3, 3))
    ids = np.arange(n) * 5 + 3
    tree = REGISTRY.backend("triangle_octree")(max_triangles=4)
    tree.set_triangles(ids, corners[:, 0], corners[:, 1], corners[:, 2])
    tree.build(ids, corners.min(axis=1), corners.max(axis=1))
    assert tree.stats()["references"] > 2 * n, "triangles must share leaves for this test"
    for mode in ("all", "active"):
        listed = tree.pairs(mode)
        counted = tree.count_pairs(mode)
        assert counted.overlapping == len(listed.pairs) > 0
        assert counted.tests == listed.tests


def test_bucket_count_keeps_a_pair_only_in_its_first_shared_bucket():
    lo = np.array([[0.0, 0, 0], [1, 1, 1], [5, 5, 5], [20, 20, 20]])
    hi = np.array([[2.0, 2, 2], [6, 6, 6], [7, 7, 7], [21, 21, 21]])
    # buckets: {0,1,2}, {1,2,3}, {0,1}, {3}: pairs (0,1) twice, (1,2) twice, (0,2) and
    # (2,3), (1,3) never overlap
    items = np.array([0, 1, 2, 1, 2, 3, 0, 1, 3], dtype=np.int64)
    start = np.array([0, 3, 6, 8], dtype=np.int64)
    count = np.array([3, 3, 2, 1], dtype=np.int64)
    active = np.array([False, False, True, False])
    total, tests = count_bucket_pairs(start, count, items, lo, hi, active, False)
    assert total == 2
    assert tests.tolist() == [3, 3, 1, 0]
    only_active, tests = count_bucket_pairs(start, count, items, lo, hi, active, True)
    assert only_active == 1  # (1, 2): the only pair with the active object 2
    assert tests.tolist() == [2, 2, 0, 0]
