"""Triangle octree: mesh triangles stored in every leaf cube they truly intersect.

The structure: the root is a cube with a power-of-two side
enclosing every object (centred on them); a node splits into octants while it holds more than
``max_triangles`` items and its side can halve above ``min_size``; an item goes into *every*
child it meets, a triangle by the exact triangle-box test (:mod:`spatial.triangles`), so a
large triangle crossing many cells is found from each of them, and a thin one only where it
really passes. Empty octants get no node.

Objects are triangles when the scene offered them with
:meth:`~spatial.contract.SpatialIndex.set_triangles` (a mesh, one triangle per id) and boxes
otherwise. Answers:

* queries return each object once, tested exactly against its own geometry: a triangle
  against the box, point, sphere (closest point) or ray (Möller–Trumbore, ``t`` of the hit);
  for frusta a triangle is kept unless its three corners are outside one plane. Box objects
  use the reference box predicates, so without triangles the answers equal brute force.
  ``objects_tested`` is the number of distinct candidates the leaves handed over: the
  "potential colliders" figure a designer judges the tree by (``stats --probe-radius``);
* ``pairs`` reports pairs whose boxes overlap *and* that share a leaf: every overlapping pair
  of boxes, and for triangles every pair that really touches (both meet the cell of a common
  point), but not two triangles whose boxes overlap where the triangles do not come near.

Meshes are static: an edit is recorded and the next query or inspection rebuilds the tree.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import spatial.kernels as K
from spatial.contract import FrustumHits, NodeTable, PairHits, RayHits, SlotHits, SpatialIndex
from spatial.errors import GeometryError, IndexInvariantError
from spatial.geometry import boxes_overlap, frustum_box, ray_box, sphere_box
from spatial.memory_budget import CellTree, cell_tree_bytes
from spatial.pair_count import count_bucket_pairs
from spatial.params import param

from . import kernels

#: The build stops splitting once its item lists hold this many entries per item: items are
#: copied into every cell they meet, and big ones among many small ones would otherwise be
#: copied into ever more cells down to ``max_depth``.
REFERENCE_BUDGET_PER_ITEM = 64


@dataclass(frozen=True)
class TriangleOctreeParams:
    """Parameters of :class:`TriangleOctree`."""

    max_triangles: int = param(30, lo=1, hi=4096, unit="items", scale="log",
                               help="A leaf holding more items than this splits in eight.")
    max_depth: int = param(12, lo=1, hi=24, unit="levels",
                           help="Deepest level a cube may be split to.")
    min_size: float = param(1e-3, lo=1e-6, hi=1e6, unit="units", scale="log",
                            help="Cubes are not split below this side (small: meshes come in "
                                 "metres as often as in map units).")


def _root_cell(lo: np.ndarray, hi: np.ndarray, min_size: float) -> tuple[np.ndarray, float]:
    """``(corner, side)`` of the root: a cube with a power-of-two side around the boxes,
    centred on them."""
    world_lo, world_hi = lo.min(axis=0), hi.max(axis=0)
    extent = float((world_hi - world_lo).max())
    side = 2.0 ** math.ceil(math.log2(max(extent, min_size, 1e-9)))
    if side < extent:  # rounding in log2
        side *= 2.0
    return (world_lo + world_hi) / 2 - side / 2, side


class TriangleOctree(SpatialIndex):
    """Octree of mesh triangles (or boxes), each stored in every leaf it truly intersects."""

    name = "triangle_octree"
    dims = 3
    branching = 8
    description = ("Triangle octree: each triangle in every leaf cube it truly intersects "
                   "(triangle-box test), split above a threshold; exact triangle queries.")
    Params = TriangleOctreeParams
    # tiny buckets stay shallow: box objects straddle many cubes, and splitting dense
    # overlapping boxes to the full depth multiplies references without bound
    param_variants = [{"max_triangles": 1, "max_depth": 5}, {"max_triangles": 4, "max_depth": 3}]

    @classmethod
    def worst_case_bytes(cls, params, lo, hi) -> float:
        """Items are copied into every cell they meet (on the root's own grid), the lists of
        every level kept until the end and capped at :data:`REFERENCE_BUDGET_PER_ITEM` per
        item; per node the build's growing columns, the finished copies and cull boxes; per
        item its corners and flags."""
        count = len(lo)
        if not count:
            return 0.0
        root_lo, side = _root_cell(lo, hi, float(params.min_size))
        tree = cell_tree_bytes(lo, hi, CellTree(
            axes=(0, 1, 2), branching=8, max_depth=params.max_depth,
            capacity=params.max_triangles, copies_per_split=8.0,
            node_bytes=2 * 128 + 176, reference_bytes=2 * 8 + 8 + 1,
            min_size=float(params.min_size), reference_budget=REFERENCE_BUDGET_PER_ITEM * count,
            root=(root_lo, side), references_kept="every"))
        return tree + count * (2 * 72 + 8 + 1)

    # ---------------------------------------------------------------- structure
    def _setup(self) -> None:
        self._dirty = False
        self._is_tri = np.zeros(0, dtype=bool)
        self._tri = np.zeros((0, 3, 3))
        self._compile(np.empty(0, dtype=np.int64))

    def _geometry(self):
        """Per-slot triangle flags and corners from the offered triangles of live objects."""
        obj = self.objects
        limit = max(obj.slot_limit, 1)
        is_tri = np.zeros(limit, dtype=bool)
        tri = np.zeros((limit, 3, 3))
        offered = self.triangles
        if len(offered) and obj.slot_limit:
            known = obj.contains(offered.ids)
            every = bool(known.all())
            slots = obj.slots_of(offered.ids if every else offered.ids[known])
            is_tri[slots] = True
            for corner, points in enumerate((offered.v0, offered.v1, offered.v2)):
                tri[slots, corner] = points if every else points[known]
            # culling relies on each object's box holding its triangle; checked corner by
            # corner on the (N, 3) columns, which is far cheaper than reducing (N, 3, 3)
            outside = np.zeros(len(slots), dtype=bool)
            box_lo, box_hi = obj.lo[slots], obj.hi[slots]
            for corner in range(3):
                points = tri[slots, corner]
                outside |= ((points < box_lo) | (points > box_hi)).any(axis=1)
            if outside.any():
                bad = int(obj.ids[slots[np.flatnonzero(outside)[0]]])
                raise GeometryError(f"triangle of object {bad} is not inside its box")
        return is_tri, tri

    def _compile(self, slots: np.ndarray) -> None:
        obj = self.objects
        if len(slots):
            self._is_tri, self._tri = self._geometry()
        else:  # an empty tree reads no corners (the base build sets up one before building)
            self._is_tri = np.zeros(max(obj.slot_limit, 1), dtype=bool)
            self._tri = np.zeros((1, 3, 3))
        lo, hi = obj.lo, obj.hi
        if len(slots):
            root_lo, side = _root_cell(lo[slots], hi[slots], self.params.min_size)
        else:
            side, root_lo = 1.0, np.zeros(3)
        p = self.params
        (self._cell_lo, self._size, self._depth, self._parent, self._child, self._leaf_start,
         self._leaf_count, self._items, self._cull_lo, self._cull_hi) = kernels.build(
            np.ascontiguousarray(slots, dtype=np.int64), lo, hi, self._is_tri, self._tri,
            np.ascontiguousarray(root_lo, dtype=np.float64), float(side), p.max_triangles,
            p.max_depth, float(p.min_size), REFERENCE_BUDGET_PER_ITEM * max(len(slots), 1))
        self._dirty = False

    def _build(self, slots) -> None:
        self._compile(np.asarray(slots, dtype=np.int64))

    def _mark(self, slots) -> None:
        self._dirty = True

    _insert = _mark
    _remove = _mark
    _update = _mark

    def _flush(self) -> None:
        if self._dirty:
            self._compile(self.objects.alive_slots())

    def _triangles_changed(self) -> None:
        self._compile(self.objects.alive_slots())

    # ---------------------------------------------------------------- queries
    def _tree(self) -> kernels.TriOctreeArrays:
        """The tree and the item table as the one structure the kernels take."""
        obj = self.objects
        return kernels.TriOctreeArrays(
            self._cell_lo, self._size, self._parent, self._child, self._leaf_start,
            self._leaf_count, self._items, self._cull_lo, self._cull_hi, obj.lo, obj.hi,
            self._is_tri, self._tri)

    def _candidates(self, shape, trace):
        slots, visited, rows, culled = kernels.candidates(
            shape.kind, shape.params, shape.planes, self._tree(), self.objects.slot_limit,
            bool(trace))
        return slots, visited, (rows if trace else None), (culled if trace else None)

    def _exact(self, shape, slots, box_hit):
        """Combine the box predicate (box objects) with the exact triangle test (triangles)."""
        tri = self._is_tri[slots]
        hit = box_hit.copy()
        t = None
        if tri.any():
            tri_hit, t = kernels.exact_triangles(shape.kind, shape.params, shape.planes,
                                                 slots[tri], self._tri)
            hit[tri] = tri_hit
        return hit, tri, t

    def _query_box(self, lo, hi, trace):
        shape = K.box_shape(lo, hi)
        slots, visited, rows, _ = self._candidates(shape, trace)
        box_hit = boxes_overlap(self.objects.lo[slots], self.objects.hi[slots], lo, hi)
        hit, _, _ = self._exact(shape, slots, box_hit)
        return SlotHits(slots[hit], visited, len(slots), rows)

    def _query_sphere(self, center, radius, trace):
        shape = K.sphere_shape(center, radius)
        slots, visited, rows, _ = self._candidates(shape, trace)
        box_hit = sphere_box(center, radius, self.objects.lo[slots], self.objects.hi[slots])
        hit, _, _ = self._exact(shape, slots, box_hit)
        return SlotHits(slots[hit], visited, len(slots), rows)

    def _query_ray(self, origin, direction, max_t, trace):
        shape = K.ray_shape(origin, direction, max_t)
        slots, visited, rows, _ = self._candidates(shape, trace)
        box_hit, t = ray_box(origin, direction, self.objects.lo[slots], self.objects.hi[slots])
        box_hit &= t <= max_t
        hit, tri, tri_t = self._exact(shape, slots, box_hit)
        t = np.asarray(t, dtype=np.float64).copy()
        if tri_t is not None:
            t[tri] = tri_t
        return RayHits(slots[hit], t[hit], visited, len(slots), rows)

    def _query_frustum(self, planes, trace):
        shape = K.frustum_shape(planes)
        slots, visited, rows, culled = self._candidates(shape, trace)
        box_hit = frustum_box(planes, self.objects.lo[slots], self.objects.hi[slots])
        hit, _, _ = self._exact(shape, slots, box_hit)
        return FrustumHits(slots[hit], visited, len(slots), rows, culled)

    def _pairs(self, mode):
        active = self.objects.active_mask()
        if len(active) == 0:
            active = np.zeros(1, dtype=bool)
        pairs, node_tests = kernels.leaf_pairs(self._tree(), active, mode == "active")
        if len(pairs):
            pairs = np.unique(pairs, axis=0)
        return PairHits(pairs, int(node_tests.sum()), node_tests)

    def _count_pairs(self, mode):
        # counted where the two first share a leaf (spatial.pair_count): no pair list to dedupe
        active = self.objects.active_mask()
        if len(active) == 0:
            active = np.zeros(1, dtype=bool)
        count, node_tests = count_bucket_pairs(self._leaf_start, self._leaf_count, self._items,
                                               self.objects.lo, self.objects.hi, active,
                                               mode == "active")
        return int(count), int(node_tests.sum()), node_tests  # a PairCount in order

    # ---------------------------------------------------------------- inspection
    def _is_leaf(self) -> np.ndarray:
        return (self._child < 0).all(axis=1)

    def _nodes(self) -> NodeTable:
        is_leaf = self._is_leaf()
        n = len(is_leaf)
        subtree = self._leaf_count.copy()
        for row in range(n - 1, 0, -1):
            subtree[self._parent[row]] += subtree[row]
        active = self.objects.active_mask()
        awake = np.zeros(n, dtype=bool)
        if len(self._items):
            owner = np.repeat(np.arange(n), self._leaf_count)
            np.logical_or.at(awake, owner, active[self._items])
        for row in range(n - 1, 0, -1):
            if awake[row]:
                awake[self._parent[row]] = True
        hi = self._cell_lo + self._size[:, None]
        return NodeTable.from_columns(lo=self._cell_lo, hi=hi, depth=self._depth,
                                      parent=self._parent, is_leaf=is_leaf,
                                      own_count=self._leaf_count, subtree_count=subtree,
                                      awake=awake)

    def _node_objects(self, row: int) -> np.ndarray:
        if not 0 <= row < len(self._leaf_start):
            raise IndexError(f"node row {row} does not exist (the tree has "
                             f"{len(self._leaf_start)} nodes)")
        start = self._leaf_start[row]
        return self._items[start:start + self._leaf_count[row]].copy()

    def _leaf_capacity(self) -> float:
        return float(self.params.max_triangles)

    def _memory_bytes(self) -> int:
        arrays = (self._cell_lo, self._size, self._depth, self._parent, self._child,
                  self._leaf_start, self._leaf_count, self._items, self._cull_lo, self._cull_hi)
        return int(sum(a.nbytes for a in arrays))

    def _extra_stats(self) -> dict:
        alive = self.objects.alive_slots()
        triangles = int(self._is_tri[alive].sum()) if len(self._is_tri) else 0
        leaves = self._is_leaf()
        counts = self._leaf_count[leaves]
        return {"triangles": triangles,
                "mean_leaf_items": round(float(counts.mean()), 3) if len(counts) else 0.0,
                "max_leaf_items": int(counts.max()) if len(counts) else 0}

    def _validate(self) -> None:
        obj = self.objects
        code, where = kernels.check(self._tree(), obj.alive_slots().astype(np.int64),
                                    obj.slot_limit)
        if code:
            problems = {
                1: "node {} has a broken parent link",
                2: "cell of node {} is not an octant of its parent's",
                3: "leaf {} holds an item outside its cull box",
                4: "item in slot {} is stored in a leaf it does not meet",
                5: "item in slot {} is not stored in exactly the leaves it meets",
                6: "leaf {} references a removed or unknown slot",
            }
            raise IndexInvariantError("triangle_octree: " + problems[code].format(where))


def register(registry) -> None:
    """Built-in plugin entry point."""
    registry.add_backend(TriangleOctree)
