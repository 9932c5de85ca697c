"""Dynamic AABB tree (bounding volume hierarchy) in the style of Box2D's ``b2DynamicTree``.

Every object is one leaf whose box is *fattened* by a margin, so small moves need no tree work:
``update`` reinserts an object only when its new box leaves its fat box. The margin is
``margin`` world units per side (``margin_mode="absolute"``) or ``margin`` times the object's
largest edge per side (``margin_mode="relative"``, the default; a point-sized object then gets
no margin).

Insertion picks the sibling by the surface-area cost of Bittner et al. and Box2D (the new
parent's area plus the growth of every ancestor), descending greedily along the child with the
smaller lower bound as Box2D v3 does, then walks up refitting boxes and rotating nodes whose
children's heights differ by more than one (the AVL-style rotations of
``b2DynamicTree::Balance``), which keeps the height near ``log2 N``.
``build`` either builds the whole tree top-down with binned SAH on the centroids
(``build_method="binned_sah"``, the default: a tree with less overlap than inserting one by
one gives) or inserts every object as above
(``"incremental"``); later edits are always incremental, and
:meth:`~spatial.contract.SpatialIndex.rebuild` rebuilds with the chosen method.

Queries and pairs read a depth-first copy of the tree (rebuilt lazily after an edit) whose
boxes are refitted around the objects' own boxes: the fat boxes exist so that small moves need
no tree work, but pruning with them would test every pair of fat boxes that touch. ``nodes()``
shows the fat boxes as ``lo/hi`` and the tight ones as ``core_lo/core_hi``. ``update`` keeps
the copy: the next query refits the rows above the moved objects (:mod:`.copy_refit`) instead
of repacking it, until more objects have moved than the copy holds.

``pairs`` descends the tree against itself (each unordered pair of subtrees once, splitting the
larger box); in ``active`` mode a subtree pair is skipped unless one side holds an active
object, and when few objects are active each active leaf queries the tree instead. Pair tests are
counted on the node where the two subtrees that met split apart (their
lowest common ancestor).
All node storage is pooled arrays with a free list; no recursion anywhere.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import spatial.contract as C
import spatial.kernels as K
from spatial.contract import NodeTable, SpatialIndex
from spatial.errors import IndexInvariantError
from spatial.memory_budget import OBJECT_BYTES
from spatial.params import param
from spatial.tree_queries import ClosestRayQueries

from . import copy_refit, pair_kernels, tree_kernels


@dataclass(frozen=True)
class BvhParams:
    """Parameters of :class:`DynamicBvh`."""

    margin: float = param(0.1, lo=0.0, hi=1e6, scale="linear",
                          help="Fat-box margin per side: world units, or a fraction of the "
                               "object's largest edge (see margin_mode).")
    margin_mode: str = param("relative", choices=("relative", "absolute"),
                             help="Whether margin is a fraction of object size or world units.")
    build_method: str = param("binned_sah", choices=("binned_sah", "incremental"),
                              help="Full build: top-down binned SAH, or insert objects one by one.")
    sah_bins: int = param(16, lo=2, hi=256, unit="bins", scale="log",
                          help="Centroid bins per axis of the binned-SAH build.")


#: In ``active`` mode, up to this fraction of active objects each query the tree (Box2D's moved
#: proxies); above it the self-traversal with sleeping subtrees skipped is faster. On 100k
#: mixed-size boxes the two cost the same at about a fifth of the objects active.
ACTIVE_QUERY_FRACTION = 0.2
#: the cell arrays of a tree that stores each object once (no reference-point test)
_NO_CELLS = np.zeros((0, 3))


# --------------------------------------------------------------------------- backend
@dataclass
class _Packed:
    """Arrays of :func:`~plugins.bvh.pair_kernels.pack_tree`, one row per node in preorder (see there)."""

    order: np.ndarray
    parents: np.ndarray
    depths: np.ndarray
    left: np.ndarray
    right: np.ndarray
    slots: np.ndarray
    items: np.ndarray
    tight_lo: np.ndarray
    tight_hi: np.ndarray
    box: np.ndarray
    area: np.ndarray
    complete: bool
    #: ``item_start`` of the query kernels: a leaf row keeps its one slot at its own row
    row_index: np.ndarray


class DynamicBvh(ClosestRayQueries, SpatialIndex):
    """Dynamic AABB tree with fat leaves, SAH sibling choice and height-balancing rotations."""

    name = "bvh"
    dims = 3
    description = "Dynamic AABB tree (Box2D style): fat leaves, incremental SAH insertion, rotations."
    Params = BvhParams
    branching = 2
    param_variants = [{"build_method": "incremental"}, {"margin_mode": "absolute", "margin": 2.0},
                      {"margin": 0.0}]

    @classmethod
    def worst_case_bytes(cls, params, lo, hi) -> float:
        """One leaf per object: under two nodes an object, each with its pooled columns
        (grown by doubling) and the depth-first copy queries read."""
        return len(lo) * (2 * (2 * 104 + 152) + 8 + OBJECT_BYTES)

    # ---------------------------------------------------------------- pool
    def _setup(self) -> None:
        self._cap = 0
        self._lo = np.empty((0, 3))
        self._hi = np.empty((0, 3))
        self._parent = np.empty(0, dtype=np.int64)
        self._c1 = np.empty(0, dtype=np.int64)
        self._c2 = np.empty(0, dtype=np.int64)
        self._height = np.empty(0, dtype=np.int64)
        self._node_slot = np.empty(0, dtype=np.int64)
        self._item_count = np.empty(0, dtype=np.int64)
        self._free_next = np.empty(0, dtype=np.int64)
        self._free_head = -1
        self._free_count = 0
        self._leaf_of = np.empty(0, dtype=np.int64)
        self._root = -1
        self._reinserts = 0
        self._order_cache = None
        self._copy_exact = False  # the copy's rows mirror the tree's nodes (not refitted since)
        self._row_of_slot: np.ndarray | None = None  # copy_refit.leaf_rows of the copy
        self._refit_pending: list[np.ndarray] = []  # slots moved since the copy was refitted
        self._moved_since_pack = 0

    def _reserve(self, extra_nodes: int) -> None:
        """Make room for ``extra_nodes`` more nodes and for every slot of the object table."""
        slot_cap = len(self.objects.lo)
        if len(self._leaf_of) < slot_cap:
            grown = np.full(slot_cap, -1, dtype=np.int64)
            grown[: len(self._leaf_of)] = self._leaf_of
            self._leaf_of = grown
        if self._free_count >= extra_nodes:
            return
        old = self._cap
        cap = max(64, 2 * old, old + extra_nodes - self._free_count)

        def grow(arr, fill):
            new = np.full((cap,) + arr.shape[1:], fill, dtype=arr.dtype)
            new[:old] = arr
            return new

        self._lo, self._hi = grow(self._lo, 0.0), grow(self._hi, 0.0)
        self._parent, self._c1, self._c2 = grow(self._parent, -1), grow(self._c1, -1), grow(self._c2, -1)
        self._height = grow(self._height, 0)
        self._node_slot = grow(self._node_slot, -1)
        self._item_count = grow(self._item_count, 0)
        self._free_next = grow(self._free_next, -1)
        # chain the new nodes in front of the existing free list
        self._free_next[old:cap - 1] = np.arange(old + 1, cap)
        self._free_next[cap - 1] = self._free_head
        self._free_head = old
        self._free_count += cap - old
        self._cap = cap

    def _pool(self) -> tree_kernels.BvhPool:
        """The node arrays as the edit kernels take them (rebuilt per call: ``_reserve`` may
        have replaced the arrays)."""
        return tree_kernels.BvhPool(self._lo, self._hi, self._parent, self._c1, self._c2, self._height,
                                    self._node_slot, self._item_count, self._leaf_of, self._free_next)

    def _margin(self):
        return float(self.params.margin), self.params.margin_mode == "relative"

    def _edited(self, free_head: int) -> None:
        self._free_head = int(free_head)
        self._order_cache = None
        self._refit_pending = []

    # ---------------------------------------------------------------- edits
    def _build(self, slots) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        self._reserve(2 * len(slots))
        margin, relative = self._margin()
        if self.params.build_method == "binned_sah":
            root, free = tree_kernels.build_binned_sah(self._pool(), slots, self.objects.lo,
                                                       self.objects.hi, self._free_head, margin,
                                                       relative, self.params.sah_bins)
            self._root = int(root)
            self._free_count -= 2 * len(slots) - 1 if len(slots) else 0
            self._edited(free)
        else:
            self._insert(slots)

    def _insert(self, slots) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        if len(slots) == 0:
            return
        self._reserve(2 * len(slots))
        margin, relative = self._margin()
        root, free = tree_kernels.insert_objects(self._pool(), slots, self.objects.lo, self.objects.hi,
                                                 self._root, self._free_head, margin, relative)
        had_root = self._root >= 0
        self._root = int(root)
        # every leaf costs one node, and every leaf but a first one into an empty tree a parent
        self._free_count -= 2 * len(slots) - (0 if had_root else 1)
        self._edited(free)

    def _remove(self, slots) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        root, free = tree_kernels.remove_objects(self._pool(), slots, self._root, self._free_head)
        self._root = int(root)
        self._free_count += 2 * len(slots) - (1 if self._root < 0 else 0)
        self._edited(free)

    def _update(self, slots) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        margin, relative = self._margin()
        root, free, reinserts = tree_kernels.update_objects(self._pool(), slots, self.objects.lo,
                                                            self.objects.hi, self._root, self._free_head,
                                                            margin, relative)
        self._root = int(root)
        self._reinserts = int(reinserts)
        self._free_head = int(free)
        if self._order_cache is not None:  # refitted at the next query, not repacked
            self._refit_pending.append(slots)
            # a reinserted leaf moved in the tree, not in the copy: its rows stop mirroring it
            self._copy_exact = self._copy_exact and not reinserts

    # ---------------------------------------------------------------- queries
    def _packed(self, exact: bool = False) -> _Packed:
        """The depth-first tight copy of the tree.

        Packed at the first query after an insert, removal or build. Moves only refit it
        (:func:`.copy_refit.refit_tight`): answers stay exact, but the rows no longer mirror the
        tree's nodes once a moved object was reinserted, so ``exact`` (node rows reported:
        :meth:`nodes`, traced queries, validation) repacks it. A full repack also follows once
        the objects moved since the last pack outnumber the objects, which bounds how far the
        copy's topology drifts from the objects' places.
        """
        if self._order_cache is not None and self._refit_pending:
            moved = np.concatenate(self._refit_pending)
            self._refit_pending = []
            self._moved_since_pack += len(moved)
            if self._moved_since_pack > self.objects.count:
                self._order_cache = None
            else:
                p = self._order_cache
                if self._row_of_slot is None:
                    self._row_of_slot = copy_refit.leaf_rows(p.slots, len(self.objects.lo))
                rows = copy_refit.refit_tight(p.parents, p.left, p.right, self._row_of_slot,
                                              p.tight_lo, p.tight_hi, self.objects.lo,
                                              self.objects.hi, moved)
                # the pair traversal's copies of the changed rows: packed boxes and areas
                tlo, thi = p.tight_lo[rows], p.tight_hi[rows]
                p.box[rows, :3], p.box[rows, 3:] = tlo, thi
                size = thi - tlo
                p.area[rows] = 2.0 * (size[:, 0] * size[:, 1] + size[:, 1] * size[:, 2]
                                      + size[:, 2] * size[:, 0])
        if self._order_cache is not None and exact and not self._copy_exact:
            self._order_cache = None
        if self._order_cache is None:
            n_nodes = self._cap - self._free_count if self._root >= 0 else 0
            parts = pair_kernels.pack_tree(self._root, self._c1, self._c2, self._node_slot,
                                           self.objects.lo, self.objects.hi, n_nodes)
            self._order_cache = _Packed(*parts, row_index=np.arange(len(parts[0])))
            self._copy_exact = True
            self._row_of_slot = None
            self._moved_since_pack = 0
        return self._order_cache

    def _order(self):
        """Preorder node ids, parent rows and depths of the rows of :meth:`nodes`."""
        packed = self._packed(exact=True)
        return packed.order, packed.parents, packed.depths

    def _tree(self, exact: bool = False):
        """Query kernels' view of the packed copy: node ids there are rows of :meth:`nodes`
        when ``exact`` (else of the refitted copy)."""
        p = self._packed(exact)
        root = 0 if len(p.order) else -1
        return K.TreeArrays(root, p.tight_lo, p.tight_hi, p.left, p.right, p.row_index, p.items,
                            p.slots, self.objects.lo, self.objects.hi)

    def _query(self, shape, trace):
        return K.query_tree(self._tree(exact=trace), shape, trace)

    def _query_box(self, lo, hi, trace):
        hits = self._query(K.box_shape(lo, hi), trace)
        return C.SlotHits(hits.slots, hits.visited, hits.tested, hits.rows if trace else None)

    def _query_sphere(self, center, radius, trace):
        hits = self._query(K.sphere_shape(center, radius), trace)
        return C.SlotHits(hits.slots, hits.visited, hits.tested, hits.rows if trace else None)

    def _query_ray(self, origin, direction, max_t, trace):
        hits = self._query(K.ray_shape(origin, direction, max_t), trace)
        return C.RayHits(hits.slots, hits.t, hits.visited, hits.tested, hits.rows if trace else None)

    def _query_frustum(self, planes, trace):
        hits = self._query(K.frustum_shape(planes), trace)
        return C.FrustumHits(hits.slots, hits.visited, hits.tested, (hits.rows if trace else None),
                (hits.culled if trace else None))

    def _query_boxes(self, lo, hi) -> C.BatchResult:
        slots, offsets, visited, tested = K.tree_query_boxes(self._tree(), lo, hi, False,
                                                             _NO_CELLS, _NO_CELLS)
        return C.BatchResult(self.objects.ids[slots], offsets, visited, tested)

    # ---------------------------------------------------------------- pairs
    def _flags(self):
        """Per row of :meth:`nodes`: subtree object count and whether it holds an active one."""
        p = self._packed(exact=True)
        return pair_kernels.subtree_flags(p.parents, p.left, p.slots, self._active())

    def _active(self) -> np.ndarray:
        """Per slot: dynamic and awake (false for free slots)."""
        active = np.zeros(max(len(self.objects.lo), 1), dtype=bool)
        active[: self.objects.slot_limit] = self.objects.active_mask()
        return active

    def _pairs(self, mode):
        hits = self._pair_hits(mode)
        # tests per row are rows of nodes() only while the copy mirrors the tree
        return hits if self._copy_exact else hits._replace(node_tests=None)

    def _pair_hits(self, mode):
        p = self._packed()
        if mode != "active":
            return C.PairHits(*pair_kernels.self_pairs(p.box, p.left, p.right, p.slots, p.area,
                                                     np.zeros(len(p.order), dtype=bool), False))
        active = self._active()
        count, awake = pair_kernels.subtree_flags(p.parents, p.left, p.slots, active)
        leaf_rows = np.flatnonzero(p.left < 0)
        active_rows = leaf_rows[active[p.slots[leaf_rows]]]
        if len(active_rows) <= ACTIVE_QUERY_FRACTION * len(leaf_rows):
            return C.PairHits(*pair_kernels.active_leaf_pairs(p.box, p.left, p.right, p.slots, count,
                                                            active_rows, active))
        return C.PairHits(*pair_kernels.self_pairs(p.box, p.left, p.right, p.slots, p.area, awake, True))

    # ---------------------------------------------------------------- inspection
    def _nodes(self) -> NodeTable:
        order, parents, depths = self._order()
        if len(order) == 0:
            return NodeTable.empty(0)
        count, awake = self._flags()
        p = self._packed(exact=True)
        is_leaf = p.left < 0
        # lo/hi show the stored (fat) boxes; core_lo/core_hi the tight ones queries prune with
        return NodeTable.from_columns(
            lo=self._lo[order], hi=self._hi[order], core_lo=p.tight_lo.copy(),
            core_hi=p.tight_hi.copy(), depth=depths, parent=parents, is_leaf=is_leaf,
            own_count=is_leaf.astype(np.int32), subtree_count=count, awake=awake)

    def _node_objects(self, row):
        order = self._order()[0]
        if not 0 <= row < len(order):
            raise IndexError(f"node row {row} does not exist ({len(order)} nodes)")
        node = order[row]
        return self._node_slot[node:node + 1] if self._c1[node] < 0 else np.empty(0, dtype=np.int64)

    def _validate(self) -> None:
        def fail(message):
            raise IndexInvariantError("bvh: " + message)

        alive = self.objects.alive_slots()
        order = self._order()[0]
        in_use = self._cap - self._free_count
        if not self._packed(exact=True).complete:
            fail(f"more nodes reachable from the root than the {in_use} in use")
        if len(order) != in_use:
            fail(f"{len(order)} nodes reachable from the root but {in_use} in use")
        if len(alive) == 0:
            if self._root >= 0:
                fail("empty index with a root node")
            return
        if self._parent[self._root] != -1:
            fail(f"root {self._root} has a parent")
        inner = order[self._c1[order] >= 0]
        leaves = order[self._c1[order] < 0]
        if len(leaves) != len(alive):
            fail(f"{len(leaves)} leaves for {len(alive)} objects")
        for child in (self._c1[inner], self._c2[inner]):
            if (self._parent[child] != inner).any():
                fail(f"node {int(child[self._parent[child] != inner][0])} has a wrong parent link")
            bad = ((self._lo[child] < self._lo[inner]) | (self._hi[child] > self._hi[inner])).any(axis=1)
            if bad.any():
                fail(f"node {int(inner[bad][0])} does not enclose its child {int(child[bad][0])}")
        expect = 1 + np.maximum(self._height[self._c1[inner]], self._height[self._c2[inner]])
        if (self._height[inner] != expect).any() or (self._height[leaves] != 0).any():
            fail("stored heights are inconsistent with the children")
        slots = self._node_slot[leaves]
        if not np.array_equal(np.sort(slots), alive):
            fail("leaves do not hold exactly the live objects")
        if not np.array_equal(self._leaf_of[slots], leaves):
            fail("the object-to-leaf map does not point back to the leaves")
        olo, ohi = self.objects.lo[slots], self.objects.hi[slots]
        escaped = ((olo < self._lo[leaves]) | (ohi > self._hi[leaves])).any(axis=1)
        if escaped.any():
            fail(f"object slot {int(slots[escaped][0])} is outside its leaf's fat box")

    def _memory_bytes(self) -> int:
        arrays = (self._lo, self._hi, self._parent, self._c1, self._c2, self._height,
                  self._node_slot, self._item_count, self._free_next,
                  self._leaf_of)
        packed = self._order_cache
        if packed is not None:  # the depth-first copy queries and pairs read
            arrays += (packed.order, packed.parents, packed.depths, packed.left, packed.right,
                       packed.slots, packed.items, packed.tight_lo, packed.tight_hi, packed.box,
                       packed.area, packed.row_index)
        if self._row_of_slot is not None:
            arrays += (self._row_of_slot,)
        return int(sum(a.nbytes for a in arrays))

    def area_ratio(self) -> float:
        """Sum of inner node areas over the root area (Box2D's ``GetAreaRatio``)."""
        order = self._order()[0]
        if len(order) == 0:
            return 0.0
        inner = order[self._c1[order] >= 0]
        d = self._hi[inner] - self._lo[inner]
        areas = 2.0 * (d[:, 0] * d[:, 1] + d[:, 1] * d[:, 2] + d[:, 2] * d[:, 0])
        dr = self._hi[self._root] - self._lo[self._root]
        root_area = 2.0 * (dr[0] * dr[1] + dr[1] * dr[2] + dr[2] * dr[0])
        return float(areas.sum() / root_area) if root_area > 0 else 0.0

    def height(self) -> int:
        """Height of the tree (0 for a single leaf, -1 when empty)."""
        return int(self._height[self._root]) if self._root >= 0 else -1

    def _extra_stats(self) -> dict:
        n = self.objects.count
        return {
            "height": self.height(),
            "ideal_height": math.ceil(math.log2(n)) if n > 1 else 0,
            "area_ratio": round(self.area_ratio(), 4),
            "fat_reinserts_last_update": self._reinserts,
            "build_method": self.params.build_method,
        }


def register(registry) -> None:
    """Built-in plugin entry point."""
    registry.add_backend(DynamicBvh)
