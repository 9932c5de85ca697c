"""The grid's per-frame tables: the node table made straight into its columns equals the one
made through ``NodeTable.from_columns`` before, and pair finding with the cell bounds made once
per coordinate reports what brute force reports, with the same tests in every cell."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from plugins.brute import BruteForce
from plugins.grid import Grid
from plugins.grid import kernels as grid_kernels
from spatial.contract import NodeTable
from spatial.geometry import box_union


def _reference_nodes(grid: Grid) -> NodeTable:
    """The grid's node table as it was made before (``from_columns``, a bincount of the awake
    references per cell)."""
    if grid.objects.count == 0:
        return NodeTable.empty(0)
    n_cells = len(grid._coords)
    cell_lo = grid._origin + grid._coords * grid._cell
    cell_hi = cell_lo + grid._cell
    cells_lo, cells_hi = box_union(cell_lo, cell_hi)
    root_lo = np.minimum(cells_lo, grid._world_lo)
    root_hi = np.maximum(cells_hi, grid._world_hi)
    counts = np.diff(grid._start)
    active = grid.objects.active_mask()
    cell_of_item = np.repeat(np.arange(n_cells), counts)
    awake = np.bincount(cell_of_item, weights=active[grid._items],
                        minlength=n_cells) > 0 if len(grid._items) else np.zeros(n_cells, bool)
    table = NodeTable.from_columns(
        lo=np.vstack([root_lo, cell_lo]), hi=np.vstack([root_hi, cell_hi]),
        depth=np.r_[0, np.ones(n_cells)], parent=np.r_[-1, np.zeros(n_cells)],
        is_leaf=np.r_[n_cells == 0, np.ones(n_cells, dtype=bool)],
        own_count=np.r_[0, counts], subtree_count=np.r_[len(grid._items), counts],
        awake=np.r_[awake.any(), awake])
    if grid._last_node_tests is not None and len(grid._last_node_tests) == len(table):
        table.pair_tests = np.asarray(grid._last_node_tests, dtype=np.int64)
    return table


def _assert_tables_equal(table: NodeTable, expected: NodeTable) -> None:
    for column in dataclasses.fields(NodeTable):
        got, want = getattr(table, column.name), getattr(expected, column.name)
        assert got.dtype == want.dtype and got.shape == want.shape, column.name
        np.testing.assert_array_equal(got, want, err_msg=column.name)


def _scene(rng, n_static: int, n_moving: int, world: float):
    lo = rng.uniform(-world / 2, world / 2, (n_static + n_moving, 3))
    hi = lo + rng.uniform(0.5, world / 10, lo.shape)
    dynamic = np.arange(len(lo)) >= n_static
    return np.arange(len(lo)), lo, hi, dynamic


@pytest.mark.parametrize("mode, cell_size", [("uniform", 7.0), ("hash", 7.0), ("uniform", 0.0),
                                             ("hash", 1e-6)])
def test_each_frames_node_table_and_pairs_are_what_they_were(mode, cell_size):
    """Frames of movers (some asleep, some crossing cells), against the earlier node table and
    brute force's pairs; the tests of each cell add up to the frame's tests."""
    rng = np.random.default_rng(7)
    ids, lo, hi, dynamic = _scene(rng, 300, 120, 100.0)
    awake = rng.random(len(ids)) < 0.6
    grid, brute = Grid(Grid.Params(mode=mode, cell_size=cell_size)), BruteForce()
    for index in (grid, brute):
        index.build(ids, lo, hi, dynamic=dynamic, awake=awake)
    moving = ids[dynamic]
    for _ in range(8):
        for mode_of_pairs in ("active", "all"):
            found = grid.pairs(mode_of_pairs)
            np.testing.assert_array_equal(found.pairs, brute.pairs(mode_of_pairs).pairs)
            table = grid.nodes()
            _assert_tables_equal(table, _reference_nodes(grid))
            assert table.pair_tests.sum() == found.tests
        shift = rng.uniform(-4, 4, (len(moving), 3))
        lo[moving] += shift
        hi[moving] += shift
        flags = rng.random(len(moving)) < 0.5
        for index in (grid, brute):
            index.update(moving, lo[moving], hi[moving])
            index.set_awake(moving, flags)


def test_an_empty_grid_and_one_emptied_have_empty_tables():
    grid = Grid()
    grid.build(np.empty(0, dtype=np.int64), np.empty((0, 3)), np.empty((0, 3)))
    _assert_tables_equal(grid.nodes(), _reference_nodes(grid))
    ids, lo, hi, dynamic = _scene(np.random.default_rng(1), 20, 5, 50.0)
    grid.build(ids, lo, hi, dynamic=dynamic)
    grid.remove(ids)
    assert len(grid.nodes()) == 0
    _assert_tables_equal(grid.nodes(), _reference_nodes(grid))


@pytest.mark.parametrize("mode", ["uniform", "hash"])
def test_cell_bounds_are_made_once_per_coordinate_as_each_cells_would_be(mode):
    rng = np.random.default_rng(3)
    ids, lo, hi, dynamic = _scene(rng, 200, 50, 80.0)
    grid = Grid(Grid.Params(mode=mode, cell_size=3.3))
    grid.build(ids, lo, hi, dynamic=dynamic)
    grid.pairs("active")
    g = grid._grid()
    lowest, starts = grid_kernels.cell_starts(g.coords, g.origin, g.inv, g.clamp_lo, g.clamp_hi)
    assert starts.shape[1] > 0
    for axis in range(3):
        for i in np.unique(g.coords[:, axis]):
            for k in (i, i + 1):
                assert starts[axis, k - lowest[axis]] == grid_kernels.cell_start(
                    k, g.origin[axis], g.inv, g.clamp_lo[axis], g.clamp_hi[axis])


def test_a_hash_grids_cells_far_apart_find_their_bounds_cell_by_cell():
    """Two clusters a million cells apart: tabulating every coordinate between them would cost
    more than the cells, so the bounds are found per cell, with the same pairs."""
    rng = np.random.default_rng(5)
    lo = np.concatenate([rng.uniform(0, 20, (100, 3)), rng.uniform(1e6, 1e6 + 20, (100, 3))])
    hi = lo + rng.uniform(0.5, 3, lo.shape)
    ids = np.arange(len(lo))
    awake = rng.random(len(ids)) < 0.5
    grid, brute = Grid(Grid.Params(mode="hash", cell_size=1.0)), BruteForce()
    for index in (grid, brute):
        index.build(ids, lo, hi, awake=awake)
    g = grid._grid()
    assert grid_kernels.cell_starts(g.coords, g.origin, g.inv, g.clamp_lo, g.clamp_hi)[1].shape[1] == 0
    for mode in ("active", "all"):
        found = grid.pairs(mode)
        np.testing.assert_array_equal(found.pairs, brute.pairs(mode).pairs)
        assert grid.nodes().pair_tests.sum() == found.tests
