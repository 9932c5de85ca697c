"""Octree pair finding where its pruning matters: sparse scenes, boxes touching across cells,
static boxes straddling splits among movers, and subtrees emptied by moves."""
from __future__ import annotations

import numpy as np

from plugins.brute import BruteForce
from plugins.octree import Octree
from spatial.scenegen import random_boxes


def _both(ids, lo, hi, dynamic=None, params=None):
    index, oracle = Octree(params), BruteForce()
    for x in (index, oracle):
        x.build(ids, lo, hi, dynamic=dynamic)
    return index, oracle


def _sparse_with_touching(seed):
    """Small boxes far apart, plus pairs that only touch, on the root's split planes and
    elsewhere: each such pair lies in two sibling subtrees."""
    ids, lo, hi = random_boxes(3000, seed=seed, world=4000.0, size_min=0.5, size_max=4.0)
    rng = np.random.default_rng(seed)
    centre = (lo.min(axis=0) + hi.max(axis=0)) / 2
    extra_lo, extra_hi = [], []
    for k in range(40):
        # a unit box ending exactly where the next one starts, along axis k % 3
        at = rng.uniform(lo.min(axis=0), hi.max(axis=0) - 2.0)
        axis = k % 3
        if k < 12:
            at[axis] = centre[axis] - 1.0  # touching on a split plane of the root
        first_hi = at + 1.0
        second_lo = at.copy()
        second_lo[axis] = first_hi[axis]
        extra_lo += [at, second_lo]
        extra_hi += [first_hi, second_lo + 1.0]
    lo = np.vstack([lo, extra_lo])
    hi = np.vstack([hi, extra_hi])
    return np.arange(len(lo), dtype=np.int64), lo, hi


def test_sparse_pairs_with_touching_boxes_match_brute_force():
    for looseness in (1.0, 2.0):
        ids, lo, hi = _sparse_with_touching(seed=3)
        index, oracle = _both(ids, lo, hi, params={"looseness": looseness})
        got, want = index.pairs("all"), oracle.pairs("all")
        assert len(want.pairs) >= 40
        np.testing.assert_array_equal(got.pairs, want.pairs)
        assert got.tests < len(ids) / 10, "a sparse scene must test few candidates"


def test_active_pairs_with_straddling_static_boxes_match_brute_force():
    # large static boxes stay high in the tree and meet many movers below them; the
    # movers are dense enough that some nodes sweep and others test directly
    s_ids, s_lo, s_hi = random_boxes(1500, seed=4, world=300.0, size_min=1.0, size_max=60.0)
    m_ids, m_lo, m_hi = random_boxes(800, seed=5, world=300.0, size_min=1.0, size_max=8.0)
    ids = np.concatenate([s_ids, m_ids + len(s_ids)])
    lo, hi = np.vstack([s_lo, m_lo]), np.vstack([s_hi, m_hi])
    dynamic = np.arange(len(ids)) >= len(s_ids)
    index, oracle = _both(ids, lo, hi, dynamic=dynamic)
    got, want = index.pairs("active"), oracle.pairs("active")
    assert len(want.pairs) > 100
    np.testing.assert_array_equal(got.pairs, want.pairs)
    np.testing.assert_array_equal(index.pairs("all").pairs, oracle.pairs("all").pairs)
    assert got.tests < index.pairs("all").tests, "static boxes must not test each other"


def test_pairs_after_moves_leave_empty_subtrees():
    ids, lo, hi = random_boxes(2000, seed=8, world=500.0, size_min=1.0, size_max=10.0)
    index, oracle = _both(ids, lo, hi)
    rng = np.random.default_rng(8)
    for _ in range(3):
        # move a corner's objects to the far side: their old cells linger empty
        moved = ids[(lo < 250.0).all(axis=1)][:200]
        shift = rng.uniform(200.0, 240.0, size=(len(moved), 3))
        lo[moved] += shift
        hi[moved] += shift
        for x in (index, oracle):
            x.update(moved, lo[moved], hi[moved])
        np.testing.assert_array_equal(index.pairs("all").pairs, oracle.pairs("all").pairs)
        index.step(1)
    index.validate()
