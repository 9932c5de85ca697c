"""The BVH's query copy is refitted, not repacked, after moves — and answers stay exact.

``update`` keeps the depth-first tight copy that queries and pairs read; the next query refits
the rows above the moved objects (``plugins/bvh/copy_refit``). Objects that leave their fat
box are reinserted in the tree but stay in their packed leaf, so node rows are repacked only
when they are reported (``nodes()``, traced queries).
"""
from __future__ import annotations

import numpy as np
import pytest

from plugins.bvh import DynamicBvh
from tests.plugins.test_octree_refit import (
    _assert_same_answers,
    _queries,
    check_rounds_of_moves,
    copy_kept_over_a_move,
    move_everything_repeatedly,
    traced_after_a_move,
)
from tests.plugins.test_octree_refit import (
    _pair as _octree_pair,
)


def _pair(n=600, seed=3, **params):
    return _octree_pair(n, seed, backend=DynamicBvh, **params)


@pytest.mark.parametrize("params", [{}, {"build_method": "incremental"},
                                    {"margin_mode": "absolute", "margin": 2.0}])
def test_answers_and_pairs_stay_exact_over_rounds_of_moves(params):
    ids, lo, hi, bvh, brute = _pair(**params)

    def same_pairs(_round):
        for mode in ("all", "active"):
            np.testing.assert_array_equal(bvh.pairs(mode).pairs, brute.pairs(mode).pairs)

    # moves inside the fat margins, then larger ones that reinsert leaves
    check_rounds_of_moves(bvh, brute, ids, lo, hi, [0.05, 5.0, 60.0] * 2, same_pairs)


def test_a_move_refits_the_query_copy_instead_of_repacking_it():
    ids, lo, hi, bvh, _ = _pair()
    copy_before, pick = copy_kept_over_a_move(bvh, ids, lo, hi, DynamicBvh._packed, 30.0)
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
    bvh.query_boxes(*_queries(rng)[:2])
    copy_before = bvh._packed()
    move_everything_repeatedly(bvh, brute, ids, lo, hi, rng)
    assert bvh._packed() is not copy_before
    _assert_same_answers(bvh, brute, rng)


def test_node_rows_after_reinserting_moves_are_those_of_the_current_tree():
    ids, lo, hi, bvh, brute = _pair()
    # pairs on the refitted copy: its tests per row are not the tree's rows
    qlo, qhi, traced, table = traced_after_a_move(bvh, brute, ids, lo, hi,
                                                  lambda: bvh.pairs("all"))
    rows = np.asarray(traced.visited)
    assert (rows < len(table)).all()
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
