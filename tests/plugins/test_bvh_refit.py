"""The BVH's query copy is refitted, not repacked, after moves — and answers stay exact.

``update`` keeps the depth-first tight copy that queries and pairs read; the next query refits
the rows above the moved objects (``plugins/bvh/copy_refit``). Objects that leave their fat
box are reinserted in the tree but stay in their packed leaf, so node rows are repacked only
when they are reported (``nodes()``, traced queries).
"""
from __future__ import annotations

import numpy as np
import pytest

from plugins.brute import BruteForce
from plugins.bvh import DynamicBvh
from spatial.scenegen import random_boxes
from tests.plugins.test_octree_refit import _assert_same_answers, _move, _queries


def _pair(n=600, seed=3, **params):
    ids, lo, hi = random_boxes(n, seed=seed, world=200.0, size_min=0.5, size_max=20.0)
    bvh, brute = DynamicBvh(**params), BruteForce()
    bvh.build(ids, lo, hi)
    brute.build(ids, lo, hi)
    return ids, lo, hi, bvh, brute


@pytest.mark.parametrize("params", [{}, {"build_method": "incremental"},
                                    {"margin_mode": "absolute", "margin": 2.0}])
def test_answers_and_pairs_stay_exact_over_rounds_of_moves(params):
    ids, lo, hi, bvh, brute = _pair(**params)
    rng = np.random.default_rng(11)
    cur_lo, cur_hi = lo.copy(), hi.copy()
    _assert_same_answers(bvh, brute, rng)
    for round_ in range(6):
        # moves inside the fat margins, then large ones that reinsert leaves
        step = 0.05 if round_ % 3 == 0 else (5.0 if round_ % 3 == 1 else 60.0)
        pick, new_lo, new_hi = _move(rng, ids, cur_lo, cur_hi, 0.1, step)
        cur_lo[pick], cur_hi[pick] = new_lo, new_hi
        bvh.update(ids[pick], new_lo, new_hi)
        brute.update(ids[pick], new_lo, new_hi)
        _assert_same_answers(bvh, brute, rng)
        for mode in ("all", "active"):
            np.testing.assert_array_equal(bvh.pairs(mode).pairs, brute.pairs(mode).pairs)
    bvh.validate()


def test_a_move_refits_the_query_copy_instead_of_repacking_it():
    ids, lo, hi, bvh, _ = _pair()
    rng = np.random.default_rng(5)
    qlo, qhi, _, _ = _queries(rng)
    bvh.query_boxes(qlo, qhi)
    copy_before = bvh._packed()
    pick, new_lo, new_hi = _move(rng, ids, lo, hi, 0.1, 30.0)
    bvh.update(ids[pick], new_lo, new_hi)
    bvh.query_boxes(qlo, qhi)
    assert bvh._packed() is copy_before
    slots = bvh.objects.slots_of(ids[pick])
    rows = np.flatnonzero(np.isin(copy_before.slots, slots))
    np.testing.assert_array_equal(copy_before.tight_lo[rows],
                                  bvh.objects.lo[copy_before.slots[rows]])
    # the tree itself changed shape (statistics read node rows: the copy is repacked then)
    assert bvh.stats()["fat_reinserts_last_update"] > 0
    assert bvh._packed() is not copy_before


def test_moving_more_than_every_object_repacks_the_copy():
    ids, lo, hi, bvh, brute = _pair(n=200)
    rng = np.random.default_rng(8)
    qlo, qhi, _, _ = _queries(rng)
    bvh.query_boxes(qlo, qhi)
    copy_before = bvh._packed()
    for _ in range(3):  # 3 x 50 % moved: more moves than objects since the pack
        pick, new_lo, new_hi = _move(rng, ids, lo, hi, 0.5, 5.0)
        bvh.update(ids[pick], new_lo, new_hi)
        brute.update(ids[pick], new_lo, new_hi)
        lo[pick], hi[pick] = new_lo, new_hi
        bvh.query_boxes(qlo, qhi)
    assert bvh._packed() is not copy_before
    _assert_same_answers(bvh, brute, rng)


def test_node_rows_after_reinserting_moves_are_those_of_the_current_tree():
    ids, lo, hi, bvh, brute = _pair()
    rng = np.random.default_rng(9)
    qlo, qhi, _, _ = _queries(rng, count=1)
    bvh.query_boxes(qlo, qhi)  # a copy exists, so the move below refits it
    pick, new_lo, new_hi = _move(rng, ids, lo, hi, 0.3, 40.0)
    bvh.update(ids[pick], new_lo, new_hi)
    brute.update(ids[pick], new_lo, new_hi)
    bvh.pairs("all")  # on the refitted copy: its tests per row are not the tree's rows
    traced = bvh.query_box(qlo[0], qhi[0], trace=True)
    assert sorted(traced.ids) == sorted(brute.query_box(qlo[0], qhi[0]).ids)
    table = bvh.nodes()
    rows = np.asarray(traced.visited)
    assert len(rows) == traced.nodes_visited and (rows < len(table)).all()
    # a visited row below the root is entered from its parent, which meets the query
    parents = table.parent[rows[rows > 0]]
    assert ((table.core_lo[parents] <= qhi[0]) & (qlo[0] <= table.core_hi[parents])).all()
    # each leaf row shows the object the tree now holds there, inside its fat box
    leaves = np.flatnonzero(table.is_leaf)
    held = np.concatenate([bvh.node_objects(r) for r in leaves])
    assert sorted(held) == sorted(ids)
    slots = bvh.objects.slots_of(held)
    assert (bvh.objects.lo[slots] >= table.lo[leaves]).all()
    bvh.validate()
