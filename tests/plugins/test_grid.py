"""Behaviour of the grid backend beyond the shared oracle suite."""
from __future__ import annotations

import numpy as np
import pytest

from plugins.brute import BruteForce
from plugins.grid import Grid
from plugins.grid import kernels as grid_kernels
from spatial.scenegen import random_boxes
from tests.spatial.oracle import assert_validate_catches_tampering


def test_auto_cell_size_is_the_median_largest_edge():
    ids, lo, hi = random_boxes(2000, seed=1, world=1000.0)
    grid = Grid()
    grid.build(ids, lo, hi)
    expected = float(np.median((hi - lo).max(axis=1)))
    stats = grid.stats()
    assert stats["cell_size"] == pytest.approx(expected)
    assert not stats["coarsened"]


def test_auto_cell_size_of_points_follows_the_extent():
    rng = np.random.default_rng(2)
    pts = rng.uniform(0, 100, (1000, 3))
    grid = Grid()
    grid.build(np.arange(1000), pts, pts)
    extent = float((pts.max(axis=0) - pts.min(axis=0)).max())
    assert grid.stats()["cell_size"] == pytest.approx(extent / 10.0)


@pytest.mark.slow
@pytest.mark.parametrize("cell_size", [0.0, 7.0, 40.0])
def test_hash_mode_answers_exactly_like_uniform_mode(cell_size):
    ids, lo, hi = random_boxes(1500, seed=3, layout="clustered", world=500.0)
    rng = np.random.default_rng(0)
    awake = rng.random(len(ids)) < 0.3
    uniform = Grid(mode="uniform", cell_size=cell_size)
    hashed = Grid(mode="hash", cell_size=cell_size)
    for grid in (uniform, hashed):
        grid.build(ids, lo, hi, awake=awake)
    for mode in ("all", "active"):
        np.testing.assert_array_equal(uniform.pairs(mode).pairs, hashed.pairs(mode).pairs)
    centres = rng.uniform(0, 500, (50, 3))
    for c in centres:
        np.testing.assert_array_equal(uniform.query_box(c - 20, c + 20).ids,
                                      hashed.query_box(c - 20, c + 20).ids)
        np.testing.assert_array_equal(uniform.query_sphere(c, 25.0).ids,
                                      hashed.query_sphere(c, 25.0).ids)
    dirs = rng.normal(size=(50, 3))
    a, b = uniform.query_rays(centres, dirs), hashed.query_rays(centres, dirs)
    np.testing.assert_array_equal(a.ids, b.ids)
    np.testing.assert_array_equal(a.t, b.t)
    assert uniform.stats()["occupied_cells"] == hashed.stats()["occupied_cells"]


@pytest.mark.parametrize("mode", ["uniform", "hash"])
def test_absurd_cell_size_coarsens_instead_of_exhausting_memory(mode):
    ids, lo, hi = random_boxes(5000, seed=4, world=1e5, size_min=1.0, size_max=1000.0)
    grid = Grid(mode=mode, cell_size=1e-9, max_cells=1 << 20)
    grid.build(ids, lo, hi)
    stats = grid.stats()
    assert stats["coarsened"]
    assert stats["requested_cell_size"] == 1e-9
    assert stats["cell_size"] > 1.0
    assert stats["references"] <= 1 << 20
    assert stats["memory_bytes"] < 200 * (1 << 20)
    grid.validate()
    oracle = BruteForce()
    oracle.build(ids, lo, hi)
    np.testing.assert_array_equal(grid.pairs().pairs, oracle.pairs().pairs)
    c = lo[:20]
    for q in range(20):
        np.testing.assert_array_equal(grid.query_box(c[q], c[q] + 500).ids,
                                      oracle.query_box(c[q], c[q] + 500).ids)


def test_objects_are_stored_in_every_cell_they_touch():
    # cell size 10 with the grid origin at 0: [0, 10] touches cells 0 and 1 on every axis
    lo = np.array([[0.0, 0.0, 0.0], [25.0, 25.0, 25.0], [0.0, 0.0, 0.0]])
    hi = np.array([[10.0, 10.0, 10.0], [29.0, 29.0, 29.0], [0.0, 0.0, 0.0]])
    grid = Grid(cell_size=10.0)
    grid.build([0, 1, 2], lo, hi)
    table = grid.nodes()
    rows_holding = {oid: [r for r in range(1, len(table)) if oid in grid.node_objects(r)]
                    for oid in (0, 1, 2)}
    assert len(rows_holding[0]) == 8  # 2 x 2 x 2 cells
    assert len(rows_holding[1]) == 1
    assert len(rows_holding[2]) == 1
    assert grid.pairs().pairs.tolist() == [[0, 2]]  # reported once although they share a cell
    # a query touching the shared face finds the object once
    assert grid.query_box([10, 10, 10], [12, 12, 12]).ids.tolist() == [0]


def test_node_table_is_one_root_over_the_occupied_cells():
    ids, lo, hi = random_boxes(500, seed=5, world=100.0)
    grid = Grid(mode="hash")
    grid.build(ids, lo, hi)
    table = grid.nodes()
    assert table.parent[0] == -1 and (table.parent[1:] == 0).all()
    assert table.is_leaf[1:].all() and not table.is_leaf[0]
    assert (table.own_count[1:] > 0).all()
    assert table.subtree_count[0] == table.own_count[1:].sum() == grid.stats()["references"]
    result = grid.query_box([40, 40, 40], [60, 60, 60], trace=True)
    assert result.visited.min() >= 1 and result.visited.max() < len(table)


def test_small_moves_keep_the_cell_lists_and_stay_correct():
    ids, lo, hi = random_boxes(800, seed=6, world=200.0, size_min=1.0, size_max=3.0)
    grid = Grid(cell_size=20.0)
    grid.build(ids, lo, hi)
    grid.query_point([0, 0, 0])
    items_before = grid._items
    # a tiny nudge that keeps every object in the same cells
    nudge = 1e-9
    grid.update(ids, lo + nudge, hi + nudge)
    grid.query_point([0, 0, 0])
    assert grid._items is items_before
    grid.validate()
    grid.update(ids[:5], lo[:5] + 100.0, hi[:5] + 100.0)
    grid.validate()
    assert grid._items is not items_before


def test_validate_catches_an_object_missing_from_a_cell():
    ids, lo, hi = random_boxes(200, seed=7, world=100.0)
    grid = Grid(cell_size=10.0)
    grid.build(ids, lo, hi)
    assert_validate_catches_tampering(grid, 3, match="missing|does not reach", shift_hi=30.0)


@pytest.mark.parametrize("origin, cell, clamp", [(0.0, 1.0, (0, 9)), (-1e6 + 0.3, 3.7, (-(1 << 20), (1 << 20) - 1)),
                                                  (12.5, 0.1, (0, 99))])
def test_cell_bounds_agree_with_the_cell_of_every_coordinate(origin, cell, clamp):
    rng = np.random.default_rng(4)
    inv = 1.0 / cell
    lo_clamp, hi_clamp = clamp
    centre = origin + cell * 5
    xs = np.concatenate([centre + rng.uniform(-20 * cell, 20 * cell, 2000),
                         origin + cell * np.arange(-3, 12)])  # on and near the cell edges
    xs = np.concatenate([xs, np.nextafter(xs, -np.inf), np.nextafter(xs, np.inf)])
    for x in xs:
        i = grid_kernels._coord(x, origin, inv, lo_clamp, hi_clamp)
        assert grid_kernels.cell_start(i, origin, inv, lo_clamp, hi_clamp) <= x
        assert x < grid_kernels.cell_start(i + 1, origin, inv, lo_clamp, hi_clamp)


# --------------------------------------------------------------------------- static tables kept
def _static_and_moving(mode: str, seed: int = 3):
    from plugins.brute import BruteForce
    from plugins.grid import Grid

    rng = np.random.default_rng(seed)
    n_static, n_moving = 400, 150
    lo = rng.uniform(0, 100, size=(n_static + n_moving, 3))
    hi = lo + rng.uniform(0.5, 6, size=lo.shape)
    lo[:2], hi[:2] = [[-60] * 3, [160] * 3], [[-59] * 3, [161] * 3]  # the dense grid's extent
    dynamic = np.arange(len(lo)) >= n_static
    ids = np.arange(len(lo))
    grid = Grid(Grid.Params(mode=mode, cell_size=4.0))
    oracle = BruteForce()
    for index in (grid, oracle):
        index.build(ids, lo, hi, dynamic=dynamic)
    return grid, oracle, rng, lo, hi, ids[dynamic], ids[~dynamic]


def _move(indexes, ids, lo, hi, rng, step=3.0):
    shift = rng.uniform(-step, step, size=(len(ids), 3))
    lo[ids] += shift
    hi[ids] += shift
    for index in indexes:
        index.update(ids, lo[ids], hi[ids])


@pytest.mark.parametrize("mode", ["uniform", "hash"])
def test_moving_objects_reuse_the_static_cells_and_answer_like_brute_force(mode):
    """Frames that move only dynamic objects add them to the static objects' kept tables
    (hashing the static ones once), with the same answers as a grid made from scratch."""
    from tests.spatial.oracle import assert_matches

    grid, oracle, rng, lo, hi, moving, still = _static_and_moving(mode)
    grid.pairs("active")
    kept = grid._static_cells
    assert kept is not None and kept.objects == len(still)
    for _ in range(6):
        _move((grid, oracle), rng.choice(moving, size=60, replace=False), lo, hi, rng)
        assert_matches(grid, oracle, rng)
        grid.validate()
        assert grid._static_cells is kept, "the static objects' tables were made again"


@pytest.mark.parametrize("mode", ["uniform", "hash"])
def test_a_static_object_that_moves_or_goes_makes_the_static_cells_again(mode):
    from tests.spatial.oracle import assert_matches

    grid, oracle, rng, lo, hi, moving, still = _static_and_moving(mode)
    grid.pairs("active")
    # moved while the grid is already due a rebuild (a dynamic move first): still noticed
    _move((grid, oracle), moving[:40], lo, hi, rng, step=20.0)
    before = grid._static_cells
    _move((grid, oracle), still[:5], lo, hi, rng, step=20.0)
    assert_matches(grid, oracle, rng)
    grid.validate()
    assert grid._static_cells is not before
    for index in (grid, oracle):
        index.remove(still[5:20])
    assert_matches(grid, oracle, rng)
    grid.validate()
    assert grid._static_cells.objects == len(still) - 15
    for index in (grid, oracle):
        index.insert([10_000], lo[:1], hi[:1], dynamic=False)
    assert_matches(grid, oracle, rng)
    grid.validate()
    assert grid._static_cells.objects == len(still) - 14


def test_a_moving_object_beyond_the_dense_grid_lays_it_out_again():
    from tests.spatial.oracle import assert_matches

    grid, oracle, rng, lo, hi, moving, still = _static_and_moving("uniform")
    grid.pairs("active")
    lo[moving[0]] += 500.0
    hi[moving[0]] += 500.0
    for index in (grid, oracle):
        index.update(moving[:1], lo[moving[:1]], hi[moving[:1]])
    assert_matches(grid, oracle, rng)
    grid.validate()
