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


def _pair(n=600, seed=3, backend=Octree, **params):
    """``(ids, lo, hi, index, brute force)`` over the same boxes; ``index`` a ``backend``."""
    ids, lo, hi = random_boxes(n, seed=seed, world=200.0, size_min=0.5, size_max=20.0)
    index, brute = backend(**params), BruteForce()
    index.build(ids, lo, hi)
    brute.build(ids, lo, hi)
    return ids, lo, hi, index, brute


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


def check_rounds_of_moves(index, brute, ids, lo, hi, steps, after_move):
    """One round per step size in ``steps``: move 10 % of the objects by up to it, call
    ``after_move(round)``, and compare every answer with brute force; validate at the end."""
    rng = np.random.default_rng(11)
    cur_lo, cur_hi = lo.copy(), hi.copy()
    _assert_same_answers(index, brute, rng)
    for round_, step in enumerate(steps):
        pick, new_lo, new_hi = _move(rng, ids, cur_lo, cur_hi, 0.1, step)
        cur_lo[pick], cur_hi[pick] = new_lo, new_hi
        index.update(ids[pick], new_lo, new_hi)
        brute.update(ids[pick], new_lo, new_hi)
        after_move(round_)
        _assert_same_answers(index, brute, rng)
    index.validate()


@pytest.mark.parametrize("params", [{}, {"looseness": 2.0}, {"out_of_bounds": "keep_in_root"}])
def test_answers_stay_exact_over_rounds_of_moves(params):
    ids, lo, hi, octree, brute = _pair(**params)

    def prune_sometimes(round_):
        if round_ % 2:
            octree.step(1)  # prunes emptied leaves: the copy must stay usable

    # small moves like a frame's, then a large one that crosses many cells
    check_rounds_of_moves(octree, brute, ids, lo, hi, [60.0, 5.0, 5.0] * 2, prune_sometimes)


def copy_kept_over_a_move(index, ids, lo, hi, copy_of, step):
    """Query, move 10 % by up to ``step``, query again; assert ``copy_of(index)`` (the query
    copy) is the same object after the move. Returns ``(copy, moved positions)``."""
    rng = np.random.default_rng(5)
    qlo, qhi, _, _ = _queries(rng)
    index.query_boxes(qlo, qhi)
    copy_before = copy_of(index)
    pick, new_lo, new_hi = _move(rng, ids, lo, hi, 0.1, step)
    index.update(ids[pick], new_lo, new_hi)
    index.query_boxes(qlo, qhi)
    assert copy_of(index) is copy_before, "the move repacked the query copy"
    return copy_before, pick


def test_a_move_refits_the_query_copy_instead_of_repacking_it():
    ids, lo, hi, octree, _ = _pair()
    # the packed object boxes
    copy_before, pick = copy_kept_over_a_move(octree, ids, lo, hi,
                                              lambda index: index._packed_cache[1], 5.0)
    entries = np.isin(octree._packed_cache[0], np.flatnonzero(np.isin(ids, ids[pick])))
    moved_slots = octree._packed_cache[0][entries]
    np.testing.assert_array_equal(copy_before[entries, :3], octree.objects.lo[moved_slots])


def move_everything_repeatedly(index, brute, ids, lo, hi, rng):
    """Move half of the objects three times, querying after each: more moves than objects
    since the query copy was packed."""
    qlo, qhi, _, _ = _queries(rng)
    for _ in range(3):
        pick, new_lo, new_hi = _move(rng, ids, lo, hi, 0.5, 5.0)
        index.update(ids[pick], new_lo, new_hi)
        brute.update(ids[pick], new_lo, new_hi)
        lo[pick], hi[pick] = new_lo, new_hi
        index.query_boxes(qlo, qhi)


def test_moving_more_than_every_object_repacks_the_copy():
    ids, lo, hi, octree, brute = _pair(n=200)
    rng = np.random.default_rng(8)
    octree.query_boxes(*_queries(rng)[:2])
    copy_before = octree._packed_cache[1]
    move_everything_repeatedly(octree, brute, ids, lo, hi, rng)
    assert octree._packed_cache[1] is not copy_before
    _assert_same_answers(octree, brute, rng)


def traced_after_a_move(index, brute, ids, lo, hi, after_move):
    """Query once (so a copy exists and the move refits it), move 30 % far, call
    ``after_move``, then run a traced box query: ``(qlo, qhi, traced result, node table)``,
    with the traced answer checked against brute force and its row count."""
    rng = np.random.default_rng(9)
    qlo, qhi, _, _ = _queries(rng, count=1)
    index.query_boxes(qlo, qhi)
    pick, new_lo, new_hi = _move(rng, ids, lo, hi, 0.3, 40.0)
    index.update(ids[pick], new_lo, new_hi)
    brute.update(ids[pick], new_lo, new_hi)
    after_move()
    traced = index.query_box(qlo[0], qhi[0], trace=True)
    assert sorted(traced.ids) == sorted(brute.query_box(qlo[0], qhi[0]).ids)
    assert len(traced.visited) == traced.nodes_visited
    return qlo, qhi, traced, index.nodes()


def test_traced_queries_after_a_move_report_rows_of_the_current_tree():
    ids, lo, hi, octree, brute = _pair()
    qlo, qhi, traced, table = traced_after_a_move(octree, brute, ids, lo, hi,
                                                  lambda: octree.step(1))
    rows = np.asarray(traced.visited)
    # every visited row is a node of the tree as it is now, and the query meets its bounds
    assert ((table.lo[rows] <= qhi[0]) & (qlo[0] <= table.hi[rows])).all()
