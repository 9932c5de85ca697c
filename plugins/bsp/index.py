"""Binary space partitioning with split planes taken from the level's own geometry.

Like Quake's ``qbsp`` and Doom's node builders, every inner node splits its objects with one
plane chosen among candidates by a cost, ``balance_weight * |front - back| +
split_weight * straddlers`` (non-axial planes cost more by ``axial_bonus``, as the Quake
compilers prefer axial planes). Candidates come from the scene:

* planes offered with :meth:`~spatial.contract.SpatialIndex.set_split_planes` (brush faces of a
  map) when there are any; in ``space="2d"`` only those whose normal lies in the partition
  plane, i.e. vertical walls seen as lines on the map, like Doom's linedefs;
* otherwise the faces of the objects' boxes (axial planes; in 2D on the plane's two axes).

Objects only have boxes, so an object whose box meets both closed half-spaces of a plane goes
to both children (touching counts). Splitting the geometry itself along the plane (Doom's seg
splitting) belongs in :func:`plugins.bsp.kernels.goes_to`, the one function that decides where an
object goes, once an importer provides exact segments.

The tree is compiled, not updated per frame: edits are recorded and the next query or
inspection applies them in one batch. A small batch is *refitted*: the planes stay, the edited
objects are removed and pushed down again into every leaf their boxes reach, and the boxes are
recomputed. Once the objects edited since the last build exceed a quarter of all objects, the
tree is rebuilt from scratch with freshly chosen planes (``rebuilds`` and ``refits`` in
:meth:`stats` count both).

Node bounds: every region is a convex polytope. :meth:`nodes` reports its axis-aligned box,
starting from the bounds of all objects at the root and clipped by each axial plane on the way
down; below a non-axial plane the region's box is approximated by the box of the objects in the
node, intersected with the parent's box. Queries cull on a second box per node, the bounds of
every object stored below it, and box queries also on the plane sides (see
:mod:`plugins.bsp.kernels` for why the answers are exact).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

import spatial.contract as C
import spatial.kernels as K
from spatial.contract import NodeTable, SpatialIndex
from spatial.errors import IndexInvariantError, ParamError
from spatial.geometry import boxes_overlap, frustum_box, ray_box, sphere_box
from spatial.memory_budget import budgeted_tree_bytes
from spatial.params import param

from . import kernels
from . import segments as segment_kernels

#: Partition plane -> (its two axes, the up axis).
PLANE_AXES = {"xy": ((0, 1), 2), "xz": ((0, 2), 1)}

#: An offered plane counts as vertical (usable in 2D) when its normal's up component is below this.
VERTICAL_TOLERANCE = 1e-9

#: Edits are applied by re-inserting the edited objects under the existing planes until the
#: objects edited since the last build exceed 1/REFIT_FRACTION of all objects; then the next
#: flush rebuilds (chooses planes again), since planes chosen for old positions fit less and less.
REFIT_FRACTION = 4

#: Straddlers are copied into both children; past this many references per object the build
#: stops splitting, which bounds memory when a cost makes almost every object straddle.
REFERENCE_BUDGET_PER_OBJECT = 32


@dataclass(frozen=True)
class BSPParams:
    """Parameters of :class:`BSPTree`."""

    space: str = param("3d", choices=("3d", "2d"),
                       help="3d splits with planes; 2d splits with lines on a plane, like Doom.")
    plane: str = param("xy", choices=("xy", "xz"), tunable=False,
                       help="Plane of a 2d tree: xy (z up) or xz (y up).")
    max_depth: int = param(24, lo=1, hi=64, unit="levels",
                           help="Deepest level a node may be split to.")
    min_objects: int = param(4, lo=1, hi=1024, unit="objects", scale="log",
                             help="A node holding at most this many objects is not split.")
    balance_weight: float = param(1.0, lo=0.0, hi=100.0, unit="cost/object",
                                  help="Cost per object of imbalance between front and back.")
    split_weight: float = param(8.0, lo=0.0, hi=100.0, unit="cost/object",
                                help="Cost per object straddling a plane (copied to both sides).")
    candidates: int = param(64, lo=1, hi=4096, unit="planes", scale="log",
                            help="Most candidate planes evaluated per node (sampled evenly).")
    axial_bonus: float = param(2.0, lo=1.0, hi=100.0, unit="x",
                               help="Non-axial planes cost this many times more (1 = no preference).")
    leaf: str = param("count", choices=("count", "convex"), tunable=False,
                      help="count: stop at min_objects; convex (2d, with the scene's wall "
                           "segments): split segments until every leaf's bound a convex region.")


class BSPTree(SpatialIndex):
    """A compiled BSP tree over object boxes, split by planes of the scene's geometry."""

    name = "bsp"
    dims = 3
    branching = 2
    description = ("BSP tree: split planes chosen from the level's brush faces (or box faces), "
                   "balancing sides against straddlers; compiled, edits applied in batches.")
    Params = BSPParams
    param_variants: ClassVar[list[dict]] = [
        {"space": "2d"}, {"space": "2d", "plane": "xz"}, {"min_objects": 1}, {"split_weight": 0.0},
    ]

    @classmethod
    def worst_case_bytes(cls, params, lo, hi) -> float:
        """References capped at :data:`REFERENCE_BUDGET_PER_OBJECT` per object; per node its
        plane, links, region and cull boxes, grown by doubling."""
        return budgeted_tree_bytes(len(lo), references_per_object=REFERENCE_BUDGET_PER_OBJECT,
                                   max_depth=params.max_depth, node_bytes=2 * 192,
                                   reference_bytes=2 * 8 + 8)

    # ---------------------------------------------------------------- structure
    def _setup(self) -> None:
        if self.params.leaf == "convex" and self.params.space != "2d":
            raise ParamError("leaf", "convex leaves are built from 2D wall segments: "
                                     "use it with space=2d")
        self.rebuilds = getattr(self, "rebuilds", 0)
        self.refits = getattr(self, "refits", 0)
        self._touched: list[np.ndarray] = []  # slots edited since the last flush
        self._edited_since_build = 0
        self._compile_from(np.empty(0, dtype=np.int64))

    def _compile_from(self, slots: np.ndarray) -> None:
        """Build the tree over ``slots`` with the current parameters and split planes."""
        p = self.params
        obj = self.objects
        self._pieces = None
        if p.leaf == "convex" and self._compile_convex(slots):
            return
        pool, pool_source = self._candidate_pool()
        axes = self._split_axes()
        budget = REFERENCE_BUDGET_PER_OBJECT * max(len(slots), 1)
        (self._planes, self._source, self._front, self._back, self._parent, self._depth,
         self._region_lo, self._region_hi, self._cull_lo, self._cull_hi, self._leaf_start,
         self._leaf_count, self._items, self._subtree) = kernels.build_tree(
            np.ascontiguousarray(slots, dtype=np.int64), obj.lo, obj.hi, pool, pool_source,
            len(pool) > 0, axes, p.max_depth, p.min_objects, float(p.balance_weight),
            float(p.split_weight), p.candidates, float(p.axial_bonus), budget)
        self._refcount = np.bincount(self._items, minlength=obj.slot_limit).astype(np.int64)

    def _compile_convex(self, slots: np.ndarray) -> bool:
        """Doom-style build over the offered segments (see :mod:`plugins.bsp.segments`).

        Partition lines come from the segments of objects in the index; every object (segment
        or not) is then pushed down by its box with the usual closed side test, so the answers
        stay exact. False (and nothing built) when no offered segment belongs to ``slots``.
        """
        obj = self.objects
        segs = self.segments
        known = obj.contains(segs.ids) if len(segs) else np.zeros(0, dtype=bool)
        if known.any():
            known[known] = obj.alive[obj.slots_of(segs.ids[known])]
            member = np.zeros(obj.slot_limit, dtype=bool)
            member[slots] = True
            known[known] = member[obj.slots_of(segs.ids[known])]
        known &= (segs.a != segs.b).any(axis=1) if len(segs) else known
        if not known.any():
            return False
        ids, a, b, two = segs.ids[known], segs.a[known], segs.b[known], segs.two_sided[known]
        dir_a = np.ascontiguousarray(np.concatenate([a, b[two]]))
        dir_b = np.ascontiguousarray(np.concatenate([b, a[two]]))
        dir_ids = np.concatenate([ids, ids[two]])
        p = self.params
        (lines, front, back, parent, depth, piece_start, piece_count, piece_a, piece_b,
         piece_seg, cuts, nonconvex) = segment_kernels.build_segment_tree(
            dir_a, dir_b, p.max_depth, float(p.balance_weight), float(p.split_weight),
            p.candidates)
        (ax0, ax1), up = PLANE_AXES[p.plane]
        planes = np.full((len(front), 4), np.nan)
        inner = front >= 0
        planes[inner, ax0] = lines[inner, 0]
        planes[inner, ax1] = lines[inner, 1]
        planes[inner, up] = 0.0
        planes[inner, 3] = lines[inner, 2]
        n = len(front)
        (self._leaf_start, self._leaf_count, self._items, self._cull_lo, self._cull_hi,
         self._region_lo, self._region_hi, self._subtree) = kernels.refit_tree(
            planes, front, back, parent, np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
            np.empty(0, dtype=np.int64), np.zeros(obj.slot_limit, dtype=bool),
            np.ascontiguousarray(slots, dtype=np.int64), obj.lo, obj.hi, self._split_axes())
        self._planes, self._front, self._back, self._parent, self._depth = (
            planes, front, back, parent, depth)
        self._source = np.full(n, -1, dtype=np.int64)
        self._refcount = np.bincount(self._items, minlength=obj.slot_limit).astype(np.int64)
        self._pieces = {"start": piece_start, "count": piece_count, "a": piece_a, "b": piece_b,
                        "ids": dir_ids[piece_seg], "segments": len(dir_ids), "cuts": int(cuts),
                        "nonconvex": int(nonconvex)}
        return True

    def leaf_segments(self) -> dict:
        """The segment pieces in each leaf of a ``leaf="convex"`` tree.

        Returns
        -------
        dict
            ``leaf`` (node row of each piece), ``ids`` (the segment it was cut from), ``a``,
            ``b`` (``(P, 2)`` endpoints on the plane's axes, front on the right from ``a`` to
            ``b``; a two-sided segment appears once each way). Empty arrays when the tree was
            not built from segments.
        """
        self._flush()
        pieces = self._pieces
        if pieces is None:
            return {"leaf": np.empty(0, np.int64), "ids": np.empty(0, np.int64),
                    "a": np.empty((0, 2)), "b": np.empty((0, 2))}
        leaf = np.repeat(np.arange(len(pieces["count"])), pieces["count"])
        return {"leaf": leaf, "ids": pieces["ids"].copy(), "a": pieces["a"].copy(),
                "b": pieces["b"].copy()}

    def _segments_changed(self) -> None:
        if self.params.leaf == "convex":
            self._compile()

    def _split_axes(self) -> np.ndarray:
        """Axes the partition divides: all three, or the two of a 2D tree's plane."""
        if self.params.space == "2d":
            return np.array(PLANE_AXES[self.params.plane][0], dtype=np.int64)
        return np.arange(3, dtype=np.int64)

    def _candidate_pool(self) -> tuple[np.ndarray, np.ndarray]:
        """Offered planes usable in this space, deduplicated, with their index in ``split_planes``.

        A plane and its flip split alike, and neighbouring brushes repeat each other's faces, so
        each geometric plane is evaluated once (the first offer of it is the one recorded). In 2D,
        if no offered plane is vertical, the box faces are used as if nothing had been offered.
        """
        key = (self.params.space, self.params.plane)
        cached = getattr(self, "_pool_cache", None)
        if cached is not None and cached[0] is self.split_planes and cached[1] == key:
            return cached[2], cached[3]
        planes = np.asarray(self.split_planes, dtype=np.float64).reshape(-1, 4)
        index = np.arange(len(planes), dtype=np.int64)
        if self.params.space == "2d" and len(planes):
            up = PLANE_AXES[self.params.plane][1]
            vertical = np.abs(planes[:, up]) <= VERTICAL_TOLERANCE
            planes, index = planes[vertical], index[vertical]
        if len(planes):
            # canonical orientation: first non-zero normal component positive
            first = np.argmax(np.abs(planes[:, :3]) > 0, axis=1)
            sign = np.sign(planes[np.arange(len(planes)), first])
            canonical = np.round(planes * sign[:, None], 9)
            _, keep = np.unique(canonical, axis=0, return_index=True)
            keep.sort()
            planes, index = planes[keep], index[keep]
        planes = np.ascontiguousarray(planes)
        self._pool_cache = (self.split_planes, key, planes, index)
        return planes, index

    def _compile(self) -> None:
        self._compile_from(self.objects.alive_slots())
        self.rebuilds += 1
        self._touched = []
        self._edited_since_build = 0

    def _build(self, slots) -> None:
        self._compile()

    # Edits are only recorded; the next query or inspection applies them all at once.
    def _insert(self, slots) -> None:
        self._touched.append(np.asarray(slots, dtype=np.int64))

    _remove = _insert
    _update = _insert

    def _flush(self) -> None:
        if not self._touched:
            return
        touched = np.unique(np.concatenate(self._touched))
        self._touched = []
        self._edited_since_build += len(touched)
        if self._edited_since_build * REFIT_FRACTION > self.objects.count:
            self._compile()
        else:
            self._refit(touched)

    def _refit(self, touched: np.ndarray) -> None:
        """Keep the planes and move the edited objects' references (see ``refit_tree``)."""
        obj = self.objects
        mask = np.zeros(obj.slot_limit, dtype=bool)
        mask[touched] = True
        reinsert = touched[obj.alive[touched]]
        (self._leaf_start, self._leaf_count, self._items, self._cull_lo, self._cull_hi,
         self._region_lo, self._region_hi, self._subtree) = kernels.refit_tree(
            self._planes, self._front, self._back, self._parent, self._leaf_start,
            self._leaf_count, self._items, mask, reinsert, obj.lo, obj.hi, self._split_axes())
        self._refcount = np.bincount(self._items, minlength=obj.slot_limit).astype(np.int64)
        self.refits += 1

    def _split_planes_changed(self) -> None:
        self._compile()

    # ---------------------------------------------------------------- queries
    def _tree(self) -> kernels.BspArrays:
        """The compiled tree and the object table as the one structure the kernels take."""
        obj = self.objects
        return kernels.BspArrays(
            self._planes, self._front, self._back, self._parent, self._region_lo,
            self._region_hi, self._cull_lo, self._cull_hi, self._leaf_start, self._leaf_count,
            self._items, self._subtree, self._refcount, obj.lo, obj.hi, obj.ids)

    def _candidates(self, shape, trace):
        slots, visited, rows, culled = kernels.query_candidates(
            shape.kind, shape.params, shape.planes, self._tree(), self.objects.slot_limit,
            bool(trace))
        return slots, visited, (rows if trace else None), (culled if trace else None)

    def _query_box(self, lo, hi, trace):
        slots, visited, rows, _ = self._candidates(K.box_shape(lo, hi), trace)
        hit = boxes_overlap(self.objects.lo[slots], self.objects.hi[slots], lo, hi)
        return C.SlotHits(slots[hit], visited, len(slots), rows)

    def _query_point(self, point, trace):
        return self._query_box(point, point, trace)

    def _query_sphere(self, center, radius, trace):
        slots, visited, rows, _ = self._candidates(K.sphere_shape(center, radius), trace)
        hit = sphere_box(center, radius, self.objects.lo[slots], self.objects.hi[slots])
        return C.SlotHits(slots[hit], visited, len(slots), rows)

    def _query_ray(self, origin, direction, max_t, trace):
        slots, visited, rows, _ = self._candidates(K.ray_shape(origin, direction, max_t), trace)
        hit, t = ray_box(origin, direction, self.objects.lo[slots], self.objects.hi[slots])
        hit &= t <= max_t
        return C.RayHits(slots[hit], t[hit], visited, len(slots), rows)

    def _query_frustum(self, planes, trace):
        slots, visited, rows, culled = self._candidates(K.frustum_shape(planes), trace)
        hit = frustum_box(planes, self.objects.lo[slots], self.objects.hi[slots])
        return C.FrustumHits(slots[hit], visited, len(slots), rows, culled)

    def _query_boxes(self, lo, hi) -> C.BatchResult:
        slots, offsets, visited, tested = kernels.query_boxes(lo, hi, self._tree(),
                                                              self.objects.slot_limit)
        return C.BatchResult(self.objects.ids[slots], offsets, visited, tested)

    def _query_rays(self, origins, directions, max_t) -> C.RayBatchResult:
        slots, t, visited, tested = kernels.query_rays(origins, directions, max_t, self._tree())
        ids = np.full(len(slots), -1, dtype=np.int64)
        ids[slots >= 0] = self.objects.ids[slots[slots >= 0]]
        return C.RayBatchResult(ids, t, visited, tested)

    def _pairs(self, mode):
        active = self.objects.active_mask()
        if len(active) == 0:
            active = np.zeros(1, dtype=bool)
        pairs, node_tests = kernels.leaf_pairs(self._tree(), active, mode == "active")
        return C.PairHits(pairs, int(node_tests.sum()), node_tests)

    # ---------------------------------------------------------------- inspection
    def _is_leaf(self) -> np.ndarray:
        return self._front < 0

    def _nodes(self) -> NodeTable:
        is_leaf = self._is_leaf()
        active = self.objects.active_mask()
        leaf_awake = np.zeros(len(is_leaf), dtype=bool)
        if len(self._items):
            owner = np.repeat(np.arange(len(is_leaf)), self._leaf_count)
            np.logical_or.at(leaf_awake, owner, active[self._items])
        awake = leaf_awake.copy()
        for node in range(len(is_leaf) - 1, 0, -1):  # children follow parents: fold upwards
            if awake[node]:
                awake[self._parent[node]] = True
        return NodeTable.from_columns(
            lo=self._region_lo, hi=self._region_hi, depth=self._depth, parent=self._parent,
            is_leaf=is_leaf, own_count=self._leaf_count, subtree_count=self._subtree,
            lifespan_left=np.zeros(len(is_leaf)), lifespan_max=np.zeros(len(is_leaf)),
            awake=awake, pair_tests=np.zeros(len(is_leaf)))

    def _node_objects(self, row: int) -> np.ndarray:
        if not 0 <= row < len(self._front):
            raise IndexError(f"node row {row} does not exist (the tree has {len(self._front)} nodes)")
        start = self._leaf_start[row]
        return self._items[start:start + self._leaf_count[row]].copy()

    def node_planes(self) -> np.ndarray:
        """Split plane of every row of :meth:`nodes`.

        Returns
        -------
        ndarray, shape (K, 4), float64
            Rows ``(nx, ny, nz, d)`` with a unit normal; NaN for leaves. The front child of a
            node holds the objects whose boxes meet ``n . x + d >= 0``, the back child those
            meeting ``n . x + d <= 0`` (a box touching the plane is in both).
        """
        self._flush()
        return self._planes.copy()

    def node_plane_sources(self) -> np.ndarray:
        """Where each node's split plane came from.

        Returns
        -------
        ndarray, shape (K,), int64
            For an inner node, the row of ``split_planes`` (the planes offered with
            :meth:`set_split_planes`) it split on, or -1 when it split on a face of an object's
            box (nothing usable was offered). -1 for leaves.
        """
        self._flush()
        return self._source.copy()

    def _leaf_capacity(self) -> float:
        return float(self.params.min_objects)

    def _memory_bytes(self) -> int:
        arrays = (self._planes, self._source, self._front, self._back, self._parent, self._depth,
                  self._region_lo, self._region_hi, self._cull_lo, self._cull_hi,
                  self._leaf_start, self._leaf_count, self._items, self._subtree)
        return int(sum(a.nbytes for a in arrays))

    def _extra_stats(self) -> dict:
        inner = np.flatnonzero(~self._is_leaf())
        if len(inner):
            f = self._subtree[self._front[inner]].astype(np.float64)
            b = self._subtree[self._back[inner]].astype(np.float64)
            balance = float(np.mean(np.abs(f - b) / np.maximum(f + b, 1.0)))
        else:
            balance = 0.0
        from_scene = int((self._source[inner] >= 0).sum()) if len(inner) else 0
        extra = {}
        if self._pieces is not None:  # a convex tree counts the segments it cut
            extra = {"segments": self._pieces["segments"], "seg_pieces": len(self._pieces["ids"]),
                     "nonconvex_leaves": self._pieces["nonconvex"]}
        return {
            **extra,
            "splits": (self._pieces["cuts"] if self._pieces is not None
                       else int(len(self._items) - self.objects.count)),
            "balance": round(balance, 6),
            "rebuilds": int(self.rebuilds),
            "refits": int(self.refits),
            "scene_planes": from_scene,
        }

    def _validate(self) -> None:
        obj = self.objects
        code, where = kernels.check_tree(self._tree(), obj.alive_slots().astype(np.int64),
                                         obj.slot_limit)
        if code:
            problems = {
                1: "node {} has a broken parent link",
                2: "region box of node {} is not inside its parent's",
                3: "node {} has an object outside its cull box (or a cull box outside its parent's)",
                4: "object in slot {} lies on the wrong side of an ancestor's plane",
                5: "object in slot {} is missing from a leaf its box reaches",
                6: "leaf {} references a removed or unknown slot",
                7: "subtree count of node {} is wrong",
                8: "leaf {} holds an object twice",
            }
            raise IndexInvariantError("bsp: " + problems[code].format(where))
        if len(self._items) and self._refcount.sum() != len(self._items):
            raise IndexInvariantError("bsp: reference counts disagree with the leaves")
        if obj.count and self._subtree[0] != len(self._items):
            raise IndexInvariantError("bsp: root subtree count differs from the references held")


def register(registry) -> None:
    """Built-in plugin entry point."""
    registry.add_backend(BSPTree)
