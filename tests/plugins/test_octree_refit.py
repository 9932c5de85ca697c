"""The octree's query copy is refitted, not repacked, after moves — and answers stay exact.

Moving objects refits the packed query copy in place (``plugins/octree/packed_kernels.refit``);
closest-hit rays test the tight bounds of each subtree's content. These tests move objects
across cell boundaries for several rounds, with and without lifespan steps in between, and
compare every query with brute force.
"""
from __future__ import annotations

import numpy as np
import pytest

from plugins.brute import BruteForce
from plugins.octree import Octree
from spatial.scenegen import random_boxes


def _pair(n=600, seed=3, **params):
    ids, lo, hi = random_boxes(n, seed=seed, world=200.0, size_min=0.5, size_max=20.0)
    octree, brute = Octree(**params), BruteForce()
    octree.build(ids, lo, hi)
    brute.build(ids, lo, hi)
    return ids, lo, hi, octree, brute


def _move(rng, ids, lo, hi, fraction, step):
    pick = rng.choice(len(ids), size=max(1, int(len(ids) * fraction)), replace=False)
    shift = rng.uniform(-step, step, size=(len(pick), 3))
    new_lo, new_hi = lo[pick] + shift, hi[pick] + shift
    # stay inside the scene's bounds so the root does not grow (a rebuild, not a refit)
    shift += np.maximum(lo.min(axis=0) - new_lo, 0) - np.maximum(new_hi - hi.max(axis=0), 0)
    return pick, lo[pick] + shift, hi[pick] + shift


def _queries(rng, count=200, world=200.0):
    centre = rng.uniform(0, world, size=(count, 3))
    half = rng.uniform(0.5, 15.0, size=(count, 3))
    origins = rng.uniform(-10, world + 10, size=(count, 3))
    directions = rng.normal(size=(count, 3))
    directions[::7, 1] = 0.0  # axis-parallel components take the slab test's other branch
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return centre - half, centre + half, origins, directions


def _assert_same_answers(octree, brute, rng):
    qlo, qhi, origins, directions = _queries(rng)
    got, want = octree.query_boxes(qlo, qhi), brute.query_boxes(qlo, qhi)
    np.testing.assert_array_equal(got.offsets, want.offsets)
    for q in range(len(qlo)):
        a, b = got.offsets[q], got.offsets[q + 1]
        assert sorted(got.ids[a:b]) == sorted(want.ids[a:b])
    rays, expected = octree.query_rays(origins, directions), brute.query_rays(origins, directions)
    np.testing.assert_array_equal(rays.ids, expected.ids)
    np.testing.assert_array_equal(rays.t, expected.t)


@pytest.mark.parametrize("params", [{}, {"looseness": 2.0}, {"out_of_bounds": "keep_in_root"}])
def test_answers_stay_exact_over_rounds_of_moves(params):
    ids, lo, hi, octree, brute = _pair(**params)
    rng = np.random.default_rng(11)
    cur_lo, cur_hi = lo.copy(), hi.copy()
    _assert_same_answers(octree, brute, rng)
    for round_ in range(6):
        # small moves like a frame's, then a large one that crosses many cells
        pick, new_lo, new_hi = _move(rng, ids, cur_lo, cur_hi, 0.1, 5.0 if round_ % 3 else 60.0)
        cur_lo[pick], cur_hi[pick] = new_lo, new_hi
        octree.update(ids[pick], new_lo, new_hi)
        brute.update(ids[pick], new_lo, new_hi)
        if round_ % 2:
            octree.step(1)  # prunes emptied leaves: the copy must stay usable
        _assert_same_answers(octree, brute, rng)
    octree.validate()


def test_a_move_refits_the_query_copy_instead_of_repacking_it():
    ids, lo, hi, octree, _ = _pair()
    rng = np.random.default_rng(5)
    qlo, qhi, _, _ = _queries(rng)
    octree.query_boxes(qlo, qhi)
    copy_before = octree._packed_cache[1]  # the packed object boxes
    pick, new_lo, new_hi = _move(rng, ids, lo, hi, 0.1, 5.0)
    octree.update(ids[pick], new_lo, new_hi)
    octree.query_boxes(qlo, qhi)
    assert octree._packed_cache[1] is copy_before
    entries = np.isin(octree._packed_cache[0], np.flatnonzero(np.isin(ids, ids[pick])))
    moved_slots = octree._packed_cache[0][entries]
    np.testing.assert_array_equal(copy_before[entries, :3], octree.objects.lo[moved_slots])


def test_moving_more_than_every_object_repacks_the_copy():
    ids, lo, hi, octree, brute = _pair(n=200)
    rng = np.random.default_rng(8)
    qlo, qhi, _, _ = _queries(rng)
    octree.query_boxes(qlo, qhi)
    copy_before = octree._packed_cache[1]
    for _ in range(3):  # 3 x 50 % moved: more moves than objects since the pack
        pick, new_lo, new_hi = _move(rng, ids, lo, hi, 0.5, 5.0)
        octree.update(ids[pick], new_lo, new_hi)
        brute.update(ids[pick], new_lo, new_hi)
        lo[pick], hi[pick] = new_lo, new_hi
        octree.query_boxes(qlo, qhi)
    assert octree._packed_cache[1] is not copy_before
    _assert_same_answers(octree, brute, rng)


def test_traced_queries_after_a_move_report_rows_of_the_current_tree():
    ids, lo, hi, octree, brute = _pair()
    rng = np.random.default_rng(9)
    qlo, qhi, _, _ = _queries(rng, count=1)
    octree.query_boxes(qlo, qhi)  # a copy exists, so the move below refits it
    pick, new_lo, new_hi = _move(rng, ids, lo, hi, 0.3, 40.0)
    octree.update(ids[pick], new_lo, new_hi)
    brute.update(ids[pick], new_lo, new_hi)
    octree.step(1)
    traced = octree.query_box(qlo[0], qhi[0], trace=True)
    assert sorted(traced.ids) == sorted(brute.query_box(qlo[0], qhi[0]).ids)
    table = octree.nodes()
    rows = np.asarray(traced.visited)
    assert len(rows) == traced.nodes_visited
    # every visited row is a node of the tree as it is now, and the query meets its bounds
    assert ((table.lo[rows] <= qhi[0]) & (qlo[0] <= table.hi[rows])).all()
