"""Grid backend: uniform cells or a spatial hash; a fine baseline for even densities.

Cell ``(i, j, k)`` covers ``origin + [i, i+1) * cell_size`` (and likewise on y, z); the cell of
a coordinate is ``floor((x - origin) / cell_size)`` computed one way everywhere. An object is
stored in every cell from the cell of its ``lo`` to the cell of its ``hi`` (its closed box's
cells), so a pair or a box-query answer is reported only in the cell holding the *reference
point* ``max(lo_a, lo_b)`` (``max(object lo, query lo)``): that point lies in both boxes, so that
cell holds both, and every answer comes out once. Sphere, frustum and ray answers are made
unique after the search.

Modes
-----
``uniform``: a dense ``dims`` grid over the scene bounds at layout time; objects beyond it are
clamped into the border cells, and the grid is laid out again at the next query when an edit
left objects outside it. ``hash``: unbounded cells keyed by their integer coordinates in an
open-addressing hash table; only occupied cells exist.

Cell size and the memory cap
----------------------------
``cell_size = 0`` (the default) picks the median over objects of their largest edge (a scene of
points uses the scene extent divided by the cube root of the count). ``max_cells`` caps both the
dense cell count and the object references, and the references are also held to
:data:`REFERENCES_PER_OBJECT` per object on average: when a layout would exceed either, the cell
size is enlarged (auto-coarsening) until it fits, never failing and never allocating the absurd
layout first; ``stats()`` reports the requested and effective sizes and ``coarsened``. In hash
mode the scene must also span fewer than ``2 * HASH_HALF`` cells per axis (the key width). Edits
rebuild the cell lists lazily at the next query, skipped entirely when no
object changed its cell range. The static objects' tables are kept while none of them changes
and the layout stands, so a frame of moving objects (a simulation, a live game) hashes only
those and copies the static references cell by cell.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

import spatial.contract as C
import spatial.kernels as K
from spatial.contract import NodeTable, SpatialIndex
from spatial.errors import IndexInvariantError
from spatial.geometry import box_union
from spatial.memory_budget import OBJECT_BYTES
from spatial.params import param

from . import kernels as gk

#: References allowed per object on average (plus a small constant) before the layout is
#: coarsened: one huge object over a fine grid would otherwise fill millions of cells.
REFERENCES_PER_OBJECT = 64


@dataclass(frozen=True)
class GridParams:
    """Parameters of :class:`Grid`."""

    mode: str = param("uniform", choices=("uniform", "hash"),
                      help="Dense uniform cells over the scene, or an unbounded spatial hash.")
    cell_size: float = param(0.0, lo=0.0, hi=1e9, unit="units", scale="linear",
                             help="Cell edge length; 0 picks the median object size.")
    max_cells: int = param(1 << 23, lo=1 << 10, hi=1 << 28, unit="cells", scale="log",
                           tunable=False,
                           help="Cap on dense cells and object references; larger layouts "
                                "are coarsened until they fit.")


class _StaticCells(NamedTuple):
    """The static objects' cell tables (what ``gk.build_cells`` returns), kept while none of
    them changes: a frame then adds only the moving objects to them."""

    tables: tuple
    references: int
    objects: int
    lo: np.ndarray  # their union box (inf/-inf when there are none)
    hi: np.ndarray


_CHECK_MESSAGES = {
    1: "cell list holds removed object slot {}",
    2: "object slot {} appears twice in one cell",
    3: "object slot {} is stored in a cell its box does not reach",
    4: "object slot {} is missing from a cell its box reaches",
}


# --------------------------------------------------------------------------- backend
class Grid(SpatialIndex):
    """Uniform grid or spatial hash; objects stored in every cell they overlap."""

    name = "grid"
    dims = 3
    description = "Grid: uniform cells or a spatial hash; a baseline for even densities."
    Params = GridParams
    branching = 8
    param_variants = [{"mode": "hash"}, {"cell_size": 3.0}, {"mode": "hash", "cell_size": 0.5}]

    @classmethod
    def worst_case_bytes(cls, params, lo, hi) -> float:
        """Dense cells: the extent over ``cell_size`` (the median object size for 0), up to
        ``max_cells`` (a finer layout is coarsened); references up to ``max_cells`` and
        :data:`REFERENCES_PER_OBJECT` per object, each with its occupied cell's columns; all of
        it twice when every object is static (the static tables and the merged ones)."""
        count = len(lo)
        if not count:
            return 0.0
        references = min(params.max_cells, REFERENCES_PER_OBJECT * count + 4096)
        dense = 0.0
        if params.mode == "uniform":
            cell = float(params.cell_size) or max(float(np.median((hi - lo).max(axis=1))), 1e-300)
            with np.errstate(over="ignore"):
                cells = float(np.prod(np.floor((hi.max(axis=0) - lo.min(axis=0)) / cell) + 1))
            dense = min(cells, float(params.max_cells))
        # the static objects' tables are kept beside the merged ones: twice the cell tables
        return 2 * (dense * 16 + references * (8 + 96)) + count * (48 + OBJECT_BYTES)

    def _setup(self) -> None:
        self._origin = np.zeros(3)
        self._cell = 1.0
        self._inv = 1.0
        self._grid_dims = np.ones(3, dtype=np.int64)
        self._clamp_lo = np.zeros(3, dtype=np.int64)
        self._clamp_hi = np.zeros(3, dtype=np.int64)
        self._hashed = self.params.mode == "hash"
        self._coarsened = False
        self._requested = 0.0
        self._laid_out = False
        self._dirty = True
        self._bounds_dirty = False
        self.cell_ranges = np.empty((0, 6), dtype=np.int64)  # per slot, valid for alive slots
        self._n_dense = 0
        # the static objects' cell tables, kept while none of them changes (see _rebuild_cells)
        self._static_cells: _StaticCells | None = None
        self._empty_cells()

    def _empty_cells(self):
        self._dense = np.empty(0, dtype=np.int32)
        self._tkeys = np.full(1, gk.EMPTY_KEY, dtype=np.int64)
        self._tvals = np.full(1, -1, dtype=np.int64)
        self._coords = np.empty((0, 3), dtype=np.int64)
        self._start = np.zeros(1, dtype=np.int64)
        self._items = np.empty(0, dtype=np.int64)
        self._cell_lo = np.empty((0, 3))
        self._cell_hi = np.empty((0, 3))
        self._world_lo = np.zeros(3)
        self._world_hi = np.zeros(3)

    # ---------------------------------------------------------------- layout
    def auto_cell_size(self) -> float:
        """Cell size ``cell_size=0`` picks: the median largest edge of the objects."""
        slots = self.objects.alive_slots()
        if len(slots) == 0:
            return 1.0
        lo, hi = self.objects.lo[slots], self.objects.hi[slots]
        size = float(np.median((hi - lo).max(axis=1)))
        if size > 0:
            return size
        extent = float((hi.max(axis=0) - lo.min(axis=0)).max())
        return extent / max(len(slots), 1) ** (1 / 3) if extent > 0 else 1.0

    def _layout(self, slots) -> np.ndarray:
        """Choose origin, cell size and clamps; coarsen until under ``max_cells``. Returns ranges."""
        p = self.params
        obj = self.objects
        cell = float(p.cell_size) if p.cell_size > 0 else self.auto_cell_size()
        self._requested = cell
        if len(slots):
            world_lo, world_hi = box_union(obj.lo[slots], obj.hi[slots])
        else:
            world_lo = world_hi = np.zeros(3)
        self._coarsened = False
        # No layout has more than 2**30 cells along an axis (max_cells and the hash key width
        # are both smaller), so a finer request (cell_size=1e-300) is raised to that at once:
        # it keeps every count and coarsening factor below finite and exact.
        finest = float((world_hi - world_lo).max()) / 2.0 ** 30
        if cell < finest:
            cell, self._coarsened = finest, True
        while True:
            inv = 1.0 / cell
            origin = world_lo.copy()
            if self._hashed:
                # cell coordinates must fit the key without clamping the scene itself
                span = float((world_hi - world_lo).max()) * inv
                if span > gk.HASH_HALF - 2:
                    cell = self._coarser(cell, (span / (gk.HASH_HALF - 2)) ** 3)
                    continue
                clamp_lo = np.full(3, -gk.HASH_HALF, dtype=np.int64)
                clamp_hi = np.full(3, gk.HASH_HALF - 1, dtype=np.int64)
                dims = np.ones(3, dtype=np.int64)
                n_dense = 0
            else:
                counts = np.floor((world_hi - world_lo) * inv) + 1
                if float(np.prod(counts)) > p.max_cells:
                    cell = self._coarser(cell, float(np.prod(counts)) / p.max_cells)
                    continue
                dims = counts.astype(np.int64)
                clamp_lo = np.zeros(3, dtype=np.int64)
                clamp_hi = dims - 1
                n_dense = int(np.prod(dims))
            ranges, total = gk.cell_ranges(slots, obj.lo, obj.hi, origin, inv, clamp_lo, clamp_hi)
            budget = self._reference_budget(len(slots))
            if total > budget:
                cell = self._coarser(cell, total / budget)
                continue
            break
        self._origin, self._cell, self._inv = origin, cell, inv
        self._grid_dims, self._clamp_lo, self._clamp_hi = dims, clamp_lo, clamp_hi
        self._static_cells = None  # cell numbers and keys of another layout
        self._n_dense = n_dense
        self._laid_out = len(slots) > 0
        return ranges

    def _reference_budget(self, n_objects: int) -> int:
        return min(self.params.max_cells, REFERENCES_PER_OBJECT * n_objects + 4096)

    def _coarser(self, cell: float, excess: float) -> float:
        self._coarsened = True
        return cell * max(1.25, excess ** (1 / 3))

    def _store_ranges(self, slots, ranges) -> None:
        cap = len(self.objects.lo)
        if len(self.cell_ranges) < cap:
            grown = np.zeros((cap, 6), dtype=np.int64)
            grown[: len(self.cell_ranges)] = self.cell_ranges
            self.cell_ranges = grown
        self.cell_ranges[slots] = ranges

    def _rebuild_cells(self) -> None:
        """Make the cell tables again after objects changed cells.

        The static objects' tables are kept (``_static_cells``) while none of them changes and
        the layout stands, so a frame of moving objects hashes only those; anything else (a
        layout to make, a moving object beyond the dense grid, too many references) takes the
        whole path, which makes the static tables again too.
        """
        obj = self.objects
        slots = obj.alive_slots().astype(np.int64)
        moving = slots[obj.dynamic[slots]]
        if self._static_cells is None or not self._moving_cells(moving):
            self._all_cells(slots)
        self._dirty = False

    def _moving_cells(self, moving) -> bool:
        """Add the moving objects to the kept static tables; False when the layout no longer
        holds them (then nothing was changed)."""
        obj = self.objects
        if len(moving):
            # their union box answers whether one left the dense grid (as _leaves_grid does)
            # and gives the world's bounds, from one pass over their boxes
            moving_lo, moving_hi = box_union(obj.lo[moving], obj.hi[moving])
            if not self._hashed and self._box_leaves_grid(moving_lo, moving_hi):
                return False
        ranges, total = gk.cell_ranges(moving, obj.lo, obj.hi, self._origin, self._inv,
                                       self._clamp_lo, self._clamp_hi)
        kept = self._static_cells
        if kept.references + total > self._reference_budget(len(moving) + kept.objects):
            return False
        self._store_ranges(moving, ranges)
        (self._dense, self._tkeys, self._tvals, self._coords, self._start, self._items,
         self._cell_lo, self._cell_hi) = self._cells_of(moving, ranges, kept.tables, int(total))
        if len(moving):
            self._world_lo = np.minimum(kept.lo, moving_lo)
            self._world_hi = np.maximum(kept.hi, moving_hi)
        else:
            self._world_lo, self._world_hi = kept.lo.copy(), kept.hi.copy()
        return True

    def _all_cells(self, slots) -> None:
        """Lay out if needed, then make the static tables and the merged ones from scratch."""
        obj = self.objects
        outside = False
        if len(slots) and self._laid_out and not self._hashed:
            outside = self._leaves_grid(slots)
        if not self._laid_out or outside:
            ranges = self._layout(slots)
        else:
            ranges, total = gk.cell_ranges(slots, obj.lo, obj.hi, self._origin, self._inv,
                                    self._clamp_lo, self._clamp_hi)
            if total > self._reference_budget(len(slots)):  # objects grew: lay out again
                ranges = self._layout(slots)
        self._store_ranges(slots, ranges)
        moving = obj.dynamic[slots]
        still = slots[~moving]
        base = self._cells_of(still, ranges[~moving], gk.empty_cells(
            self._hashed, self._n_dense if not self._hashed else 0))
        self._static_cells = _StaticCells(base, len(base[5]), len(still),
                                          *box_union(obj.lo[still], obj.hi[still]))
        (self._dense, self._tkeys, self._tvals, self._coords, self._start, self._items,
         self._cell_lo, self._cell_hi) = self._cells_of(slots[moving], ranges[moving], base)
        if len(slots):
            self._world_lo, self._world_hi = box_union(obj.lo[slots], obj.hi[slots])
        else:
            self._world_lo = self._world_hi = np.zeros(3)

    def _cells_of(self, slots, ranges, base, total: int | None = None) -> tuple:
        """The cell tables ``base`` with ``slots`` added over ``ranges`` (gk.extend_cells);
        ``total``: their references, when the caller has counted them."""
        if total is None:
            total = int(np.prod(ranges[:, 3:] - ranges[:, :3] + 1, axis=1).sum()) if len(slots) else 0
        return gk.extend_cells(base, slots, ranges, total, self.objects.lo, self.objects.hi,
                               self._grid_dims, self._hashed)

    def _static_changed(self, slots=None) -> None:
        """The static objects' cell tables must be made again (all of them, or when one of
        ``slots`` is static)."""
        if slots is None or not self.objects.dynamic[np.asarray(slots, dtype=np.int64)].all():
            self._static_cells = None

    # ---------------------------------------------------------------- edits
    def _build(self, slots) -> None:
        self._laid_out = False
        self._dirty = True

    def _insert(self, slots) -> None:
        self._static_changed(slots)
        self._dirty = True

    def _remove(self, slots) -> None:
        self._static_changed(slots)
        self._dirty = True

    def _update(self, slots) -> None:
        if not self.objects.dynamic[np.asarray(slots, dtype=np.int64)].all():
            self._static_cells = None  # a static object moved: its cells or their bounds changed
        if self._dirty or not self._laid_out:
            self._dirty = True
            return
        obj = self.objects
        slots = np.asarray(slots, dtype=np.int64)
        ranges, _ = gk.cell_ranges(slots, obj.lo, obj.hi, self._origin, self._inv, self._clamp_lo,
                            self._clamp_hi)
        # unchanged cell ranges keep the cell lists valid; only the cell union boxes move
        if np.array_equal(ranges, self.cell_ranges[slots]) and not self._leaves_grid(slots):
            self._bounds_dirty = True
        else:
            self._dirty = True

    def _leaves_grid(self, slots) -> bool:
        if self._hashed:
            return False
        grid_hi = self._origin + self._grid_dims * self._cell
        obj = self.objects
        return bool((obj.lo[slots] < self._origin).any() or (obj.hi[slots] > grid_hi).any())

    def _box_leaves_grid(self, lo, hi) -> bool:
        """:meth:`_leaves_grid` of objects whose union box is ``lo``..``hi``."""
        grid_hi = self._origin + self._grid_dims * self._cell
        return bool((lo < self._origin).any() or (hi > grid_hi).any())

    def _refresh_cell_bounds(self) -> None:
        obj = self.objects
        self._cell_lo, self._cell_hi = gk.cell_bounds(self._start, self._items, obj.lo, obj.hi)
        slots = obj.alive_slots()
        if len(slots):
            self._world_lo, self._world_hi = box_union(obj.lo[slots], obj.hi[slots])
        self._bounds_dirty = False

    def _flush(self) -> None:
        if self._dirty:
            self._rebuild_cells()
            self._bounds_dirty = False
        elif self._bounds_dirty:
            self._refresh_cell_bounds()

    # ---------------------------------------------------------------- queries
    def _grid(self) -> gk.GridArrays:
        """The cell tables and the object table as the one structure the kernels take."""
        obj = self.objects
        return gk.GridArrays(
            self._origin, float(self._cell), float(self._inv), self._clamp_lo, self._clamp_hi,
            self._grid_dims, bool(self._hashed), self._dense, self._tkeys, self._tvals,
            self._coords, self._start, self._items, self._cell_lo, self._cell_hi,
            self._world_lo, self._world_hi, obj.lo, obj.hi, obj.ids)

    @staticmethod
    def _rows(cells, trace):
        return np.asarray(cells, dtype=np.int64) + 1 if trace else None

    def _query_box(self, lo, hi, trace):
        slots, visited, tested, rows = gk.grid_query_box(lo, hi, self._grid(), trace)
        return C.SlotHits(slots, visited, tested, self._rows(rows, trace))

    def _query_sphere(self, center, radius, trace):
        slots, visited, tested, rows = gk.grid_query_sphere(center, radius, self._grid(), trace)
        return C.SlotHits(np.unique(slots), visited, tested, self._rows(rows, trace))

    def _query_frustum(self, planes, trace):
        slots, visited, tested, rows, culled = gk.grid_query_frustum(planes, self._grid(),
                                                                      trace)
        return C.FrustumHits(np.unique(slots), visited, tested, self._rows(rows, trace), self._rows(culled, trace))

    def _query_ray(self, origin, direction, max_t, trace):
        if len(self._coords) == 0:
            return C.RayHits(np.empty(0, np.int64), np.empty(0), 0, 0, self._rows([], trace))
        slots, t, visited, tested, rows = gk.grid_query_ray(origin, direction, max_t,
                                                             self._grid(), trace)
        slots, first = np.unique(slots, return_index=True)
        return C.RayHits(slots, t[first], visited, tested, self._rows(rows, trace))

    def _query_boxes(self, lo, hi) -> C.BatchResult:
        slots, offsets, visited, tested = gk.grid_query_boxes(lo, hi, self._grid())
        return C.BatchResult(self.objects.ids[slots], offsets, visited, tested)

    def _query_rays(self, origins, directions, max_t) -> C.RayBatchResult:
        if len(self._coords) == 0:
            q = len(origins)
            return C.RayBatchResult(np.full(q, -1, np.int64), np.full(q, np.inf),
                                  np.zeros(q, np.int64), np.zeros(q, np.int64))
        slots, t, visited, tested = gk.grid_query_rays(origins, directions, max_t, self._grid())
        return C.RayBatchResult(K.slots_to_ids(self.objects.ids, slots), t, visited, tested)

    # ---------------------------------------------------------------- pairs
    def _pairs(self, mode):
        active = np.zeros(max(len(self.objects.lo), 1), dtype=bool)
        active[: self.objects.slot_limit] = self.objects.active_mask()
        pairs, tests, cell_tests = gk.grid_pairs(self._grid(), active, mode == "active")
        return C.PairHits(pairs, tests, np.concatenate([[0], cell_tests]).astype(np.int64))

    # ---------------------------------------------------------------- inspection
    def _nodes(self) -> NodeTable:
        """The root (the union of the cells and the objects) and a row per occupied cell.

        Made straight into the table's columns (a live game reads it every frame, tens of
        thousands of cells): the cell corners column by column, as numpy adds a 3-vector to
        ``(n, 3)`` rows with a 3-wide inner loop per row, and a cell is awake when the running
        count of awake references grows across its items."""
        if self.objects.count == 0:
            return NodeTable.empty(0)
        n_cells = len(self._coords)
        lo = np.empty((n_cells + 1, 3))
        hi = np.empty((n_cells + 1, 3))
        np.multiply(self._coords, self._cell, out=lo[1:])
        for axis in range(3):
            lo[1:, axis] += self._origin[axis]
        np.add(lo[1:], self._cell, out=hi[1:])
        cells_lo, cells_hi = box_union(lo[1:], hi[1:])
        lo[0] = np.minimum(cells_lo, self._world_lo)
        hi[0] = np.maximum(cells_hi, self._world_hi)
        counts = np.diff(self._start)
        awake = np.zeros(n_cells + 1, dtype=bool)
        if len(self._items):
            awake_refs = np.zeros(len(self._items) + 1, dtype=np.int64)
            np.cumsum(self.objects.active_mask()[self._items], out=awake_refs[1:])
            awake[1:] = awake_refs[self._start[1:]] > awake_refs[self._start[:-1]]
            awake[0] = awake_refs[-1] > 0
        depth = np.ones(n_cells + 1, dtype=np.int32)
        depth[0] = 0
        parent = np.zeros(n_cells + 1, dtype=np.int32)
        parent[0] = -1
        is_leaf = np.ones(n_cells + 1, dtype=bool)
        is_leaf[0] = n_cells == 0
        own_count = np.zeros(n_cells + 1, dtype=np.int32)
        own_count[1:] = counts
        subtree_count = np.empty(n_cells + 1, dtype=np.int64)
        subtree_count[0] = len(self._items)
        subtree_count[1:] = counts
        return NodeTable(lo=lo, hi=hi, core_lo=lo.copy(), core_hi=hi.copy(), depth=depth,
                         parent=parent, is_leaf=is_leaf, own_count=own_count,
                         subtree_count=subtree_count,
                         lifespan_left=np.zeros(n_cells + 1, dtype=np.int32),
                         lifespan_max=np.zeros(n_cells + 1, dtype=np.int32), awake=awake,
                         pair_tests=np.zeros(n_cells + 1, dtype=np.int64))

    def _node_objects(self, row):
        n_rows = len(self._coords) + 1 if self.objects.count else 0
        if not 0 <= row < n_rows:
            raise IndexError(f"node row {row} does not exist ({n_rows} nodes)")
        if row == 0:
            return np.empty(0, dtype=np.int64)
        return self._items[self._start[row - 1]: self._start[row]]

    def _validate(self) -> None:
        obj = self.objects
        alive = obj.alive_slots().astype(np.int64)
        ranges, _ = gk.cell_ranges(alive, obj.lo, obj.hi, self._origin, self._inv, self._clamp_lo,
                            self._clamp_hi)
        code, where = gk.check_cells(alive, ranges, self._coords, self._start, self._items,
                                  max(obj.slot_limit, 1), obj.alive)
        if code:
            raise IndexInvariantError("grid: " + _CHECK_MESSAGES[code].format(where))
        if len(self._items) != int(np.prod(ranges[:, 3:] - ranges[:, :3] + 1, axis=1).sum()):
            raise IndexInvariantError("grid: reference count differs from the objects' cell ranges")

    def _leaf_capacity(self) -> float:
        n_cells = max(len(self._coords), 1)
        return max(len(self._items) / n_cells, 1.0)

    def _memory_bytes(self) -> int:
        arrays = (self._dense, self._tkeys, self._tvals, self._coords, self._start, self._items,
                  self._cell_lo, self._cell_hi, self.cell_ranges,
                  *(self._static_cells.tables if self._static_cells is not None else ()))
        return int(sum(a.nbytes for a in arrays))

    def _extra_stats(self) -> dict:
        counts = np.diff(self._start)
        return {
            "mode": self.params.mode,
            "cell_size": self._cell,
            "requested_cell_size": self._requested,
            "coarsened": self._coarsened,
            "grid_dims": self._grid_dims.tolist() if not self._hashed else None,
            "occupied_cells": int(len(counts)),
            "mean_cell_objects": round(float(counts.mean()), 3) if len(counts) else 0.0,
            "max_cell_objects": int(counts.max()) if len(counts) else 0,
        }


def register(registry) -> None:
    """Built-in plugin entry point."""
    registry.add_backend(Grid)
