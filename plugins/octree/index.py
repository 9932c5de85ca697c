"""The octree backend: a classic or loose octree with lazy insertion and empty-node lifespans.

Structure
---------
The root is a cube with a power-of-two side enclosing the objects at build time. An object lives
in the deepest node that fully contains it (straddlers stay in the parent); a node holding at
most one object is not split, nor one whose side has reached ``min_size`` or whose depth is
``max_depth``, and no node is created for an empty region. With ``looseness`` ``k > 1`` every
node's containment bounds are its centre ± ``k`` × half its side (a loose octree), so objects
near split planes sink deeper.

Edits
-----
* ``insert`` queues objects in a pending list, flushed in one batch before the next query or
  inspection; ``build`` is eager.
* ``update`` climbs each moved object to the first ancestor that encloses it, then sinks it as
  deep as it fits (possibly several levels either way); the levels moved are reported in
  :meth:`stats`.
* A node left empty and childless is not freed at once: it counts down a lifespan on ``step``
  (``max_lifespan_initial`` frames at first) and is pruned at zero; if an object enters it
  during the countdown, the countdown stops and its lifespan doubles (up to
  ``max_lifespan_cap``), so regions that keep being reused keep their nodes longer.
* Objects outside the root follow ``out_of_bounds``: grow the root (doubling towards them) and
  rebuild, keep them in the root, or raise :class:`~spatial.errors.GeometryError`.

The tree is a pool of node rows (see :mod:`.layout`) edited by compiled kernels
(:mod:`.tree_kernels`, :mod:`.query_kernels`, :mod:`.pair_kernels`); nothing recurses.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import spatial.kernels as K
from spatial.contract import (
    BatchResult,
    FrustumHits,
    NodeTable,
    PairCount,
    PairHits,
    RayBatchResult,
    RayHits,
    SlotHits,
    SpatialIndex,
)
from spatial.errors import GeometryError, IndexInvariantError, ParamError
from spatial.geometry import as_boxes
from spatial.memory_budget import stored_once_tree_bytes
from spatial.params import param

from . import build_kernels, packed_kernels, pair_kernels, query_kernels, tree_kernels
from . import layout as L

OUT_OF_BOUNDS_POLICIES = ("grow", "keep_in_root", "error")


@dataclass(frozen=True)
class OctreeParams:
    """Tunables of :class:`Octree`."""

    max_depth: int = param(16, lo=1, hi=30, unit="levels",
                           help="Deepest level a node may have (the root is level 0).")
    min_size: float = param(1.0, lo=1e-6, hi=1e9, unit="units", scale="log",
                            help="Nodes whose side has reached this size are not subdivided.")
    looseness: float = param(1.0, lo=1.0, hi=4.0, unit="x half side",
                             help="Containment bounds = centre ± k·half side (1 classic, 2 loose).")
    max_lifespan_initial: int = param(8, lo=0, hi=1 << 16, unit="frames",
                                      help="Frames an emptied leaf lingers before it is pruned, at first.")
    max_lifespan_cap: int = param(64, lo=0, hi=1 << 20, unit="frames",
                                  help="Upper limit of a lingering leaf's lifespan, which doubles on reuse.")
    out_of_bounds: str = param("grow", choices=OUT_OF_BOUNDS_POLICIES, unit="policy", tunable=False,
                               help="Objects outside the root: grow the root and rebuild, keep them "
                                    "in the root, or raise an error.")


#: ``check_tree`` result codes and what they mean
CHECK_MESSAGES = {
    1: "node {node} is reachable twice",
    2: "node {node} is linked into the tree but marked pruned",
    3: "node {node} has a wrong parent or depth",
    4: "node {node} has cell coordinates that do not match its octant",
    5: "bounds of node {node} are not nested in its parent's (or loose bounds miss the cell)",
    6: "node {node} has children although it may not split (max_depth/min_size)",
    7: "node {node} has a wrong child count",
    8: "node {node} holds slot {slot}, which is removed or still pending",
    9: "object list of node {node} is broken at slot {slot}",
    10: "node {node} has a wrong own-object count",
    11: "object id {id} in node {node} is not enclosed by the node's bounds",
    12: "object id {id} in node {node} fits a child but was not pushed down",
    13: "node {node} is empty and childless but no lifespan countdown runs",
    14: "node {node} counts down its lifespan although it holds objects or children",
    15: "node {node} has a countdown outside [1, max] or a max lifespan outside [initial, cap]",
    16: "node {node} is alive but not reachable from the root",
    17: "object id {id} (slot {slot}) is not reachable in the tree",
    18: "slot {slot} is removed or pending but still linked into node {node}",
}

def _stable_order(code: np.ndarray) -> np.ndarray:
    """``np.argsort(code, kind="stable")`` for 30-bit Morton codes, about twice as fast: the
    position rides in the low bits of each key, so a plain sort of values keeps ties in order."""
    if len(code) >= 1 << 33:
        return np.argsort(code, kind="stable")
    low = np.int64(33)
    keys = np.sort((code << low) | np.arange(len(code), dtype=np.int64))
    return keys & np.int64((1 << 33) - 1)


def _reserve(max_depth: int) -> int:
    """Node rows one placement may create: its own path plus one pushed-down occupant's."""
    return 2 * (max_depth + 2)


class Octree(SpatialIndex):
    """Octree (classic or loose) with lazy batch insertion and empty-node lifespans."""

    name = "octree"
    dims = 3
    branching = 8
    description = ("Octree: objects in the deepest enclosing cube; lazy insertion, climb-and-sink "
                   "updates, lingering empty leaves, optional loose bounds.")
    Params = OctreeParams
    param_variants = [{"looseness": 2.0}, {"max_depth": 3}, {"min_size": 16.0},
                      {"out_of_bounds": "keep_in_root"}]

    @classmethod
    def worst_case_bytes(cls, params, lo, hi) -> float:
        """Each object is stored once; nodes lie only above objects that fit their cell, down
        to ``max_depth`` or ``min_size``; node arrays grow by doubling."""
        return stored_once_tree_bytes(lo, hi, branching=8, max_depth=params.max_depth,
                                      min_size=float(params.min_size),
                                      looseness=float(params.looseness),
                                      node_bytes=2 * 8 * (L.NI_COLUMNS + L.NF_COLUMNS))

    # ------------------------------------------------------------------ state
    def _setup(self) -> None:
        p = self.params
        if p.max_lifespan_initial > p.max_lifespan_cap:
            raise ParamError("max_lifespan_initial",
                             f"{p.max_lifespan_initial} exceeds max_lifespan_cap {p.max_lifespan_cap}")
        self._ci = np.zeros(L.CI_SIZE, dtype=np.int64)
        self._ci[L.CI_MAX_DEPTH] = p.max_depth
        self._ci[L.CI_LIFE_INITIAL] = p.max_lifespan_initial
        self._ci[L.CI_LIFE_CAP] = p.max_lifespan_cap
        self._ci[L.CI_KEEP_IN_ROOT] = p.out_of_bounds == "keep_in_root"
        self._cf = np.zeros(L.CF_SIZE)
        self._cf[L.CF_LOOSENESS] = p.looseness
        self._cf[L.CF_MIN_SIZE] = p.min_size
        self._meta = np.zeros(L.META_SIZE, dtype=np.int64)
        self._ni = np.zeros((0, L.NI_COLUMNS), dtype=np.int64)
        self._nf = np.zeros((0, L.NF_COLUMNS))
        self._free = np.zeros(0, dtype=np.int64)
        self._ob = np.full((0, L.OB_COLUMNS), -1, dtype=np.int64)
        self._pending_mask = np.zeros(0, dtype=bool)
        self._pending: list[np.ndarray] = []
        self._has_root = False
        self.flushes = 0
        self.grows = 0
        self._order_cache: tuple | None = None  # (order, row_of) until the next edit
        self._packed_cache: tuple | None = None  # the query copy (see _packed)
        self._tight: np.ndarray | None = None  # packed_kernels.tight_bounds of the copy
        self._packed_exact = False  # the copy's lists and rows mirror the tree (traced queries)
        self._refit_links: tuple | None = None  # packed_kernels.refit_links of the copy
        self._refit_pending: list[np.ndarray] = []  # slots moved since the copy was refitted
        self._moved_since_pack = 0

    @property
    def pending(self) -> int:
        """Objects inserted but not yet placed (the next query or inspection flushes them)."""
        return int(self._pending_mask.sum())

    def _sync_object_capacity(self) -> None:
        cap = len(self.objects.ids)
        old = len(self._ob)
        if cap > old:
            ob = np.full((cap, L.OB_COLUMNS), -1, dtype=np.int64)
            ob[:old] = self._ob
            self._ob = ob
            mask = np.zeros(cap, dtype=bool)
            mask[:old] = self._pending_mask
            self._pending_mask = mask

    def _ensure_nodes(self, rows: int) -> None:
        """Grow the node pool so that at least ``rows`` rows can be taken."""
        have = len(self._ni) - int(self._meta[L.USED]) + int(self._meta[L.FREE_TOP])
        if have >= rows:
            return
        cap = max(len(self._ni) * 2, len(self._ni) + rows - have, 64)
        ni = np.full((cap, L.NI_COLUMNS), -1, dtype=np.int64)
        ni[: len(self._ni)] = self._ni
        nf = np.zeros((cap, L.NF_COLUMNS))
        nf[: len(self._nf)] = self._nf
        free = np.zeros(cap, dtype=np.int64)
        free[: len(self._free)] = self._free
        self._ni, self._nf, self._free = ni, nf, free

    def _edited(self) -> None:
        self._order_cache = None
        self._packed_cache = None
        self._refit_links = None
        self._refit_pending = []
        self._last_node_tests = None

    def _reshaped(self) -> None:
        """Nodes moved, appeared or went, but the object set is the same: the query copy stays
        valid for answers (refitted at the next query), no longer for node rows."""
        self._order_cache = None
        self._last_node_tests = None
        self._packed_exact = False

    def _moved(self, slots: np.ndarray) -> None:
        """``slots`` changed bounds in place: refit the query copy at the next query instead of
        repacking it."""
        self._reshaped()
        if self._packed_cache is not None:
            self._refit_pending.append(slots)

    # ------------------------------------------------------------------ root
    def _root_cube(self, slots: np.ndarray) -> tuple[np.ndarray, float]:
        """Origin and power-of-two side of a cube enclosing the slots' boxes (side 1 for a
        point)."""
        world_lo, world_hi = tree_kernels.bounds_of(self.objects.lo, self.objects.hi, slots)
        extent = float((world_hi - world_lo).max())
        side = 2.0 ** math.ceil(math.log2(extent)) if extent > 0 else 1.0
        while True:
            # centred on the world, so the spare room is shared by both ends of every axis
            origin = (world_lo + world_hi) * 0.5 - side * 0.5
            origin = np.minimum(origin, world_lo)
            if not ((origin + side) < world_hi).any():  # rounding of origin + side
                return origin, side
            side *= 2.0

    def _grown_cube(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, float]:
        """Double the root towards the boxes until its loose bounds enclose them all."""
        origin = self._cf[L.CF_ORIGIN:L.CF_ORIGIN + 3].copy()
        side = float(self._cf[L.CF_SIDE])
        k = float(self._cf[L.CF_LOOSENESS])
        need_lo, need_hi = lo.min(axis=0), hi.max(axis=0)
        for _ in range(2100):  # far more doublings than a finite float range allows
            pad = (k - 1.0) * 0.5 * side
            below = need_lo < origin - pad
            above = need_hi > origin + side + pad
            if not (below.any() or above.any()):
                return origin, side
            origin = np.where(below, origin - side, origin)  # grow towards the objects
            side *= 2.0
        raise GeometryError("cannot grow the octree root to enclose the objects")

    def _reset_tree(self, origin: np.ndarray, side: float) -> None:
        self._cf[L.CF_ORIGIN:L.CF_ORIGIN + 3] = origin
        self._cf[L.CF_SIDE] = side
        self._ensure_nodes(1)
        tree_kernels.init_root(self._ni, self._nf, self._meta, self._cf)
        self._ob[:] = -1
        self._has_root = True
        self._edited()

    def _place(self, slots: np.ndarray) -> None:
        """Sink ``slots`` from the root in one batch, in Morton order of their centres."""
        if len(slots) == 0:
            return
        obj = self.objects
        slots = slots[self._morton_order(slots)]
        reserve = _reserve(self.params.max_depth)
        start = 0
        while True:
            self._ensure_nodes(max(reserve, len(slots) // 4 - start // 4))
            start = tree_kernels.place_batch(self._ni, self._nf, self._ob, self._meta, self._free,
                                             self._ci, self._cf, obj.lo, obj.hi, slots, start, reserve)
            if start == tree_kernels.DONE:
                break
        self._edited()

    def _place_fresh(self, slots: np.ndarray) -> None:
        """Place ``slots`` into a tree holding only its root, in one top-down partition (the
        same tree as :meth:`_place` builds; see :mod:`.build_kernels`)."""
        if len(slots) == 0:
            return
        obj = self.objects
        levels, index_bits = build_kernels.presort_levels(len(slots))
        keys = np.sort(build_kernels.presort_keys(self._cf, obj.lo, obj.hi, slots, levels,
                                                  index_bits))
        slots = slots[keys & np.int64((1 << index_bits) - 1)]
        self._ni, self._nf, self._free = build_kernels.build_tree(
            self._ni, self._nf, self._ob, self._meta, self._free, self._ci, self._cf,
            obj.lo, obj.hi, slots)
        self._edited()

    def _morton_order(self, slots: np.ndarray) -> np.ndarray:
        """Order by the Morton code of the centres: neighbours are placed one after another."""
        if len(slots) < 2:
            return np.arange(len(slots))
        code = tree_kernels.morton_codes(self._cf, self.objects.lo, self.objects.hi, slots)
        return _stable_order(code)

    def _rebuild_all(self, origin: np.ndarray, side: float) -> None:
        """Re-place every held object into a fresh root cube (pending ones included)."""
        slots = self.objects.alive_slots()
        self._pending_mask[:] = False
        self._pending.clear()
        self._reset_tree(origin, side)
        self._place_fresh(slots)

    def _handle_outside(self, slots: np.ndarray) -> np.ndarray:
        """Apply the out-of-bounds policy; returns the slots still to place normally."""
        obj = self.objects
        outside = tree_kernels.outside_root(self._nf, obj.lo, obj.hi, slots)
        if not outside.any():
            return slots
        policy = self.params.out_of_bounds
        if policy == "keep_in_root":
            return slots  # the kernels store them in the root
        if policy == "error":
            raise GeometryError(self._outside_message(slots[outside][0]))
        grow = slots[outside]
        origin, side = self._grown_cube(obj.lo[grow], obj.hi[grow])
        self.grows += 1
        self._rebuild_all(origin, side)
        return slots[:0]

    def _outside_message(self, slot: int) -> str:
        o = self.objects
        lo = self._nf[0, L.LOOSE_LO:L.LOOSE_LO + 3]
        hi = self._nf[0, L.LOOSE_HI:L.LOOSE_HI + 3]
        return (f"object id {int(o.ids[slot])} with bounds {o.lo[slot].tolist()}..{o.hi[slot].tolist()} "
                f"lies outside the octree root {lo.tolist()}..{hi.tolist()} "
                f"(out_of_bounds='error')")

    # ------------------------------------------------------------------ edit hooks
    def _build(self, slots) -> None:
        self._sync_object_capacity()
        if len(slots) == 0:
            self._reset_tree(np.zeros(3), 1.0)
            self._has_root = False  # the first flushed batch fits the root to its objects
            return
        origin, side = self._root_cube(np.asarray(slots, dtype=np.int64))
        self._reset_tree(origin, side)
        self._place_fresh(np.asarray(slots, dtype=np.int64))
        self._meta[L.LEVELS_MOVED] = 0
        self._meta[L.MAX_LEVELS_MOVED] = 0

    def _insert(self, slots) -> None:
        self._sync_object_capacity()
        self._pending_mask[slots] = True
        self._pending.append(np.asarray(slots, dtype=np.int64))

    def _flush(self) -> None:
        if not self._pending:
            return
        slots = np.unique(np.concatenate(self._pending))
        self._pending.clear()
        slots = slots[self._pending_mask[slots]]
        self._pending_mask[slots] = False
        self.flushes += 1
        if len(slots) == 0:
            return
        if not self._has_root or not self._tree_holds_objects():
            # nothing placed yet: the root is fitted to everything held
            alive = self.objects.alive_slots()
            origin, side = self._root_cube(alive)
            self._rebuild_all(origin, side)
            return
        slots = self._handle_outside(slots)
        self._place(slots)

    def _tree_holds_objects(self) -> bool:
        return bool((self._ob[: self.objects.slot_limit, L.NODE] >= 0).any())

    def _remove(self, slots) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        self._pending_mask[slots] = False
        if self._has_root:
            tree_kernels.remove_batch(self._ni, self._ob, slots)
        self._edited()

    def _update(self, slots) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        if not self._has_root:
            return  # everything is pending; the flush places the new bounds
        placed = slots[self._ob[slots, L.NODE] >= 0]
        self._meta[L.LEVELS_MOVED] = 0
        self._meta[L.MAX_LEVELS_MOVED] = 0
        if self.params.out_of_bounds == "grow":
            obj = self.objects
            outside = tree_kernels.outside_root(self._nf, obj.lo, obj.hi, placed)
            if outside.any():
                grow = placed[outside]
                origin, side = self._grown_cube(obj.lo[grow], obj.hi[grow])
                self.grows += 1
                self._rebuild_all(origin, side)
                return
        reserve = _reserve(self.params.max_depth)
        start = 0
        while True:
            self._ensure_nodes(reserve)
            start = tree_kernels.move_batch(self._ni, self._nf, self._ob, self._meta, self._free,
                                            self._ci, self._cf, self.objects.lo, self.objects.hi,
                                            placed, start, reserve)
            if start == tree_kernels.DONE:
                break
        self._moved(placed)

    def _step(self, frames: int) -> None:
        if self._has_root and frames:
            tree_kernels.step_lifespans(self._ni, self._meta, self._free, frames)
            self._reshaped()  # only empty nodes are pruned: no object changes its bounds

    # the error policy must refuse before the object table changes
    def insert(self, ids, lo, hi, dynamic=None, awake=None) -> None:
        if self.params.out_of_bounds == "error":
            self._refuse_outside(ids, lo, hi)
        super().insert(ids, lo, hi, dynamic, awake)

    def update(self, ids, lo, hi) -> None:
        if self.params.out_of_bounds == "error":
            self._refuse_outside(ids, lo, hi)
        super().update(ids, lo, hi)

    def _refuse_outside(self, ids, lo, hi) -> None:
        if not (self._has_root and self._tree_holds_objects()):
            return  # the root is fitted to the objects at the next flush
        lo, hi = as_boxes(lo, hi, what="bounds")
        root_lo = self._nf[0, L.LOOSE_LO:L.LOOSE_LO + 3]
        root_hi = self._nf[0, L.LOOSE_HI:L.LOOSE_HI + 3]
        outside = ((lo < root_lo) | (hi > root_hi)).any(axis=1)
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            ids = np.asarray(ids).reshape(-1)
            which = ids[i] if i < len(ids) else "?"
            raise GeometryError(f"object id {which} with bounds {lo[i].tolist()}..{hi[i].tolist()} lies "
                                f"outside the octree root {root_lo.tolist()}..{root_hi.tolist()} "
                                f"(out_of_bounds='error')")

    # ------------------------------------------------------------------ rows
    def _order(self):
        """Alive node ids in breadth-first order and the row of each node id."""
        if self._order_cache is None:
            if not self._has_root:
                order = np.zeros(0, dtype=np.int64)
            else:
                order = tree_kernels.breadth_first(self._ni, self._meta)
            row_of = np.full(len(self._ni), -1, dtype=np.int64)
            row_of[order] = np.arange(len(order))
            self._order_cache = (order, row_of)
        return self._order_cache

    @staticmethod
    def _rows(rows, trace):
        """Traced node rows as the query kernels report them (rows of :meth:`nodes`)."""
        return rows if trace else None

    @property
    def _root_always(self) -> bool:
        return self.params.out_of_bounds == "keep_in_root"

    # ------------------------------------------------------------------ queries
    def _empty_query(self, trace, frustum=False):
        rows = np.zeros(0, dtype=np.int64) if trace else None
        empty = np.zeros(0, dtype=np.int64)
        return (empty, 0, 0, rows, rows) if frustum else (empty, 0, 0, rows)

    def _packed(self, exact: bool = False):
        """The query copy: nodes in breadth-first rows and each node's objects grouped with a
        small tree over them.

        Packed at the first query after an insert, removal or rebuild. Moves only refit it
        (:func:`.packed_kernels.refit`): the answers stay exact, but the copy's rows then
        stop mirroring the tree, so ``exact`` (traced queries, which report node rows)
        repacks it. A full repack also follows once the objects moved since the last pack
        outnumber the objects, which bounds how far the copy's bounds drift from the cells.
        """
        if self._packed_cache is not None and self._refit_pending:
            moved = np.concatenate(self._refit_pending)
            self._refit_pending = []
            self._moved_since_pack += len(moved)
            if self._moved_since_pack > len(self._packed_cache[0]):
                self._packed_cache = None
            else:
                if self._refit_links is None:
                    self._refit_links = packed_kernels.refit_links(self._packed_cache)
                o = self.objects
                packed_kernels.refit(self._packed_cache, self._tight, self._refit_links, o.lo, o.hi,
                                     moved)
        if self._packed_cache is not None and exact and not self._packed_exact:
            self._packed_cache = None
        if self._packed_cache is None:
            o = self.objects
            self._packed_cache = packed_kernels.pack(self._ni, self._nf, self._ob, o.lo, o.hi,
                                                     self._order()[0])
            self._tight = packed_kernels.tight_bounds(self._packed_cache)
            self._packed_exact = True
            self._refit_links = None
            self._refit_pending = []
            self._moved_since_pack = 0
        return self._packed_cache

    def _shape(self, shape, trace):
        """``(slots, t, visited, tested, visited rows, culled rows)`` of a :class:`QueryShape`."""
        slots, t, visited, tested, vis, culled = query_kernels.query_shape(
            self._packed(exact=trace), shape.kind, shape.params, shape.planes, self._root_always,
            trace)
        return slots, t, visited, tested, self._rows(vis, trace), self._rows(culled, trace)

    def _query_box(self, lo, hi, trace):
        if not self._has_root:
            return self._empty_query(trace)
        slots, _, visited, tested, rows, _ = self._shape(K.box_shape(lo, hi), trace)
        return SlotHits(slots, visited, tested, rows)

    def _query_sphere(self, center, radius, trace):
        if not self._has_root:
            return self._empty_query(trace)
        slots, _, visited, tested, rows, _ = self._shape(K.sphere_shape(center, radius), trace)
        return SlotHits(slots, visited, tested, rows)

    def _query_frustum(self, planes, trace):
        if not self._has_root:
            return self._empty_query(trace, frustum=True)
        planes = np.ascontiguousarray(planes, dtype=np.float64)
        slots, _, visited, tested, rows, culled = self._shape(K.frustum_shape(planes), trace)
        return FrustumHits(slots, visited, tested, rows, culled)

    def _query_ray(self, origin, direction, max_t, trace):
        if not self._has_root:
            empty = np.zeros(0, dtype=np.int64)
            return RayHits(empty, np.zeros(0), 0, 0, (empty if trace else None))
        return RayHits(*self._shape(K.ray_shape(origin, direction, max_t), trace)[:5])

    def _query_boxes(self, lo, hi) -> BatchResult:
        q = len(lo)
        if not self._has_root:
            zeros = np.zeros(q, dtype=np.int64)
            return BatchResult(np.zeros(0, dtype=np.int64), np.zeros(q + 1, dtype=np.int64), zeros, zeros.copy())
        o = self.objects
        perm = self._locality_order(lo, hi)
        slots, offsets, visited, tested = query_kernels.query_boxes(
            self._packed(), np.ascontiguousarray(lo[perm]),
            np.ascontiguousarray(hi[perm]), self._root_always)
        # back to the caller's query order
        counts = np.diff(offsets)
        back = np.empty(q, dtype=np.int64)
        back[perm] = np.arange(q)
        new_offsets = np.zeros(q + 1, dtype=np.int64)
        np.cumsum(counts[back], out=new_offsets[1:])
        shift = offsets[:-1][back] - new_offsets[:-1]
        gather = np.repeat(shift, counts[back]) + np.arange(new_offsets[-1])
        return BatchResult(o.ids[slots[gather]], new_offsets, visited[back], tested[back])

    def _query_rays(self, origins, directions, max_t) -> RayBatchResult:
        q = len(origins)
        if not self._has_root:
            zeros = np.zeros(q, dtype=np.int64)
            return RayBatchResult(np.full(q, -1, dtype=np.int64), np.full(q, np.inf), zeros, zeros.copy())
        o = self.objects
        perm = self._locality_order(origins, origins)
        packed = self._packed()
        slots, t, visited, tested = query_kernels.query_rays_closest(
            packed, self._tight, o.ids, np.ascontiguousarray(origins[perm]),
            np.ascontiguousarray(directions[perm]), max_t, self._root_always)
        back = np.empty(q, dtype=np.int64)
        back[perm] = np.arange(q)
        slots, t, visited, tested = slots[back], t[back], visited[back], tested[back]
        ids = np.where(slots >= 0, o.ids[np.maximum(slots, 0)], -1)
        return RayBatchResult(ids, t, visited, tested)

    def _locality_order(self, lo, hi):
        """Batch queries in Morton order of their centres: neighbouring queries run one after
        another and find the nodes and objects they read still in cache (the answers do not
        depend on the order)."""
        return _stable_order(tree_kernels.morton_codes(self._cf, lo, hi, np.arange(len(lo))))

    # ------------------------------------------------------------------ pairs
    def _node_awake(self):
        """Per node id: its subtree holds an active (dynamic and awake) object."""
        order, _ = self._order()
        _, _, _, awake_rows = self._columns(order)
        awake = np.zeros(len(self._ni), dtype=bool)
        awake[order] = awake_rows
        return awake

    def _columns(self, order):
        o = self.objects
        active = np.zeros(len(o.ids), dtype=bool)
        active[: o.slot_limit] = o.active_mask()
        return tree_kernels.node_columns(self._ni, self._ob, order, active, o.alive_slots())

    def _pairs(self, mode):
        pairs, _, tests, per_node = self._find_pairs(mode, count_only=False)
        return PairHits(pairs, tests, per_node)

    def _count_pairs(self, mode):
        _, count, tests, per_node = self._find_pairs(mode, count_only=True)
        return PairCount(count, tests, per_node)

    def _find_pairs(self, mode, count_only):
        """``(pairs, count, tests, tests per node row)``; with ``count_only`` the kernel
        counts the pairs without writing them."""
        if not self._has_root:
            return np.zeros((0, 2), dtype=np.int64), 0, 0, np.zeros(0, dtype=np.int64)
        o = self.objects
        active = np.zeros(len(o.ids), dtype=bool)
        active[: o.slot_limit] = o.active_mask()
        only_active = mode == "active"
        # only the active mode reads which subtrees are awake; its per-node pass is skipped
        # otherwise
        awake = self._node_awake() if only_active else np.zeros(len(self._ni), dtype=bool)
        pairs, count, tests, per_node = pair_kernels.find_pairs(
            self._ni, self._nf, self._ob, o.lo, o.hi, active, only_active, awake, count_only)
        order, _ = self._order()
        return pairs, int(count), int(tests), per_node[order]

    # ------------------------------------------------------------------ inspection
    def _nodes(self) -> NodeTable:
        order, _ = self._order()
        if len(order) == 0:
            return NodeTable.empty(0)
        ni = self._ni[order]
        nf = self._nf[order]
        row_of, own, subtree, awake = self._columns(order)
        parent = np.where(ni[:, L.PARENT] >= 0, row_of[np.maximum(ni[:, L.PARENT], 0)], -1)
        left = np.maximum(ni[:, L.LIFE_LEFT], 0)
        life_max = ni[:, L.LIFE_MAX].copy()
        life_max[0] = 0  # the root never expires
        return NodeTable.from_columns(
            lo=nf[:, L.LOOSE_LO:L.LOOSE_LO + 3], hi=nf[:, L.LOOSE_HI:L.LOOSE_HI + 3],
            core_lo=nf[:, L.CORE_LO:L.CORE_LO + 3], core_hi=nf[:, L.CORE_HI:L.CORE_HI + 3],
            depth=ni[:, L.DEPTH], parent=parent, is_leaf=ni[:, L.NCHILD] == 0,
            own_count=own, subtree_count=subtree, lifespan_left=left, lifespan_max=life_max,
            awake=awake, pair_tests=np.zeros(len(order), dtype=np.int64))

    def _node_objects(self, row: int) -> np.ndarray:
        order, _ = self._order()
        if not 0 <= row < len(order):
            raise IndexError(f"node row {row} does not exist (the octree has {len(order)} nodes)")
        return tree_kernels.objects_of(self._ni, self._ob, order[row])

    def _leaf_capacity(self) -> float:
        return 1.0

    def _memory_bytes(self) -> int:
        return int(self._ni.nbytes + self._nf.nbytes + self._free.nbytes + self._ob.nbytes
                   + self._pending_mask.nbytes)

    def _extra_stats(self) -> dict:
        outside = 0
        if self._has_root:
            in_root = tree_kernels.objects_of(self._ni, self._ob, 0)
            if len(in_root):
                lo, hi = self.objects.lo[in_root], self.objects.hi[in_root]
                root_lo = self._nf[0, L.LOOSE_LO:L.LOOSE_LO + 3]
                root_hi = self._nf[0, L.LOOSE_HI:L.LOOSE_HI + 3]
                outside = int(((lo < root_lo) | (hi > root_hi)).any(axis=1).sum())
        counting = 0
        if self._has_root:
            order, _ = self._order()
            counting = int((self._ni[order, L.LIFE_LEFT] >= 0).sum())
        return {
            "pending": self.pending,
            "flushes": int(self.flushes),
            "levels_moved_last_update": int(self._meta[L.LEVELS_MOVED]),
            "max_levels_moved_last_update": int(self._meta[L.MAX_LEVELS_MOVED]),
            "loose": float(self.params.looseness),
            "root_side": float(self._cf[L.CF_SIDE]) if self._has_root else 0.0,
            "root_origin": self._cf[L.CF_ORIGIN:L.CF_ORIGIN + 3].tolist() if self._has_root else None,
            "root_grows": int(self.grows),
            "pruned_total": int(self._meta[L.PRUNED_TOTAL]),
            "counting_down": counting,
            "outside_root": outside,
        }

    # ------------------------------------------------------------------ validation
    def _validate(self) -> None:
        o = self.objects
        limit = o.slot_limit
        if not self._has_root:
            if self._tree_holds_objects():
                raise IndexInvariantError("octree has no root but objects are linked into nodes")
            return
        pending = np.zeros(limit, dtype=bool)
        pending[:] = self._pending_mask[:limit]
        code, node, slot = tree_kernels.check_tree(
            self._ni, self._nf, self._ob, self._meta, self._ci, self._cf, o.lo, o.hi,
            o.alive[:limit].copy(), pending)
        if code:
            ident = int(o.ids[slot]) if 0 <= slot < len(o.ids) else -1
            row = self._order()[1][node] if 0 <= node < len(self._ni) else -1
            where = f"{node}" + (f" (row {row})" if row >= 0 else "")
            raise IndexInvariantError("octree: " + CHECK_MESSAGES[code].format(
                node=where, slot=slot, id=ident))
