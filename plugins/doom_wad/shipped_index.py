"""The ``shipped_bsp`` backend: a Doom map's own BSP (its NODES lump) behind the backend contract.

The editor shows it with the same overlay, node inspector and statistics as the trees built
here, so a designer compares the node builder's tree with ours on one map.

* **Where the tree comes from.** The Doom importer records the WAD file and the map name in the
  document's metadata (``source_format`` ``doom-wad``/``hexen-wad``, ``wad``, ``map``); the
  document offers that metadata with :meth:`~spatial.contract.SpatialIndex.set_source` and this
  backend reads the map's NODES, SSECTORS and SEGS from it (:class:`.shipped_bsp.ShippedBSP`).
  Without such a source (a Quake map, a random scene) there is no shipped tree: one root leaf
  holds every object, like the brute-force oracle, so every query still answers right.
* **Read-only tree.** The node builder's tree never changes: parameters, offered split planes
  and edits to the level do not reshape it. Objects that move are re-placed in the fixed tree.
* **Objects.** Each object is stored in the deepest node whose box contains its box (a linedef
  split by a partition line stays in the node that split it; a thing goes down to its
  subsector). Node boxes are the shipped ones grown to hold what they store, so a query that
  skips a node's box never misses an object in its subtree.
* **Queries** test every node box at once, keep a node when its parent was kept (rows are
  parents before children), then test the objects of the kept nodes exactly.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatial.contract import FrustumHits, NodeTable, PairHits, RayHits, SlotHits, SpatialIndex
from spatial.errors import IndexInvariantError
from spatial.geometry import box_contains_point, boxes_overlap, frustum_box, ray_box, sphere_box

from .shipped_bsp import ShippedBSP, load_shipped_bsp
from .wad import WadError

#: document ``source_format`` values that come with a shipped node tree
DOOM_SOURCES = ("doom-wad", "hexen-wad")
#: object rows tested per block when finding pairs (bounds the N x nodes working set)
_PAIR_BLOCK = 512


@dataclass(frozen=True)
class ShippedParams:
    """The shipped tree is the node builder's: nothing here to tune."""


class ShippedBSPIndex(SpatialIndex):
    """A Doom map's shipped BSP as a read-only backend (see the module docstring)."""

    name = "shipped_bsp"
    dims = 3
    description = ("Shipped BSP: the Doom map's own node tree (NODES/SSECTORS/SEGS) as its node "
                   "builder made it; read-only, for comparison with the trees built here.")
    Params = ShippedParams
    branching = 2
    source_formats = DOOM_SOURCES

    def _setup(self) -> None:
        self.tree: ShippedBSP | None = getattr(self, "tree", None)
        self.source_error = getattr(self, "source_error", "")
        self._reset_rows()

    def _reset_rows(self) -> None:
        tree = self.tree
        if tree is None:
            self._lo0 = np.zeros((1, 3))
            self._hi0 = np.zeros((1, 3))
            self._parent = np.array([-1], dtype=np.int64)
            self._depth = np.zeros(1, dtype=np.int64)
            self._leaf = np.ones(1, dtype=bool)
        else:
            self._lo0, self._hi0 = tree.lo.copy(), tree.hi.copy()
            self._parent = tree.parent.astype(np.int64)
            self._depth = tree.depth.astype(np.int64)
            self._leaf = tree.is_leaf.copy()
        n = len(self._parent)
        self._children = np.full((n, 2), -1, dtype=np.int64)
        for row in range(1, n):  # each inner node has two children, right first
            up = self._parent[row]
            self._children[up, 0 if self._children[up, 0] < 0 else 1] = row
        self._by_depth = [np.flatnonzero(self._depth == d) for d in range(1, int(self._depth.max()) + 1)]
        self._node_of = np.full(self.objects.slot_limit, -1, dtype=np.int64)
        self._lo, self._hi = self._lo0.copy(), self._hi0.copy()

    # ---------------------------------------------------------------- the map's tree
    def _source_changed(self) -> None:
        tree, self.source_error = None, ""
        if self.source.get("source_format") in DOOM_SOURCES and self.source.get("wad"):
            try:
                tree = load_shipped_bsp(self.source["wad"], self.source.get("map"))
            except (WadError, OSError) as exc:
                self.source_error = str(exc)
        self.tree = tree
        if self.objects.count:
            self.rebuild()

    # ---------------------------------------------------------------- placement
    def _place(self, slots: np.ndarray) -> None:
        """Store ``slots`` in the deepest node whose shipped box holds their box."""
        if self._node_of.shape[0] < self.objects.slot_limit:
            grown = np.full(self.objects.slot_limit, -1, dtype=np.int64)
            grown[: len(self._node_of)] = self._node_of
            self._node_of = grown
        lo, hi = self.objects.lo[slots], self.objects.hi[slots]
        node = np.zeros(len(slots), dtype=np.int64)
        moving = np.ones(len(slots), dtype=bool)
        while moving.any():
            idx = np.flatnonzero(moving)
            kids = self._children[node[idx]]
            moved = np.zeros(len(idx), dtype=bool)
            for side in (0, 1):
                child = kids[:, side]
                ok = ~moved & (child >= 0)
                c = np.where(ok, child, 0)
                ok &= np.all((self._lo0[c] <= lo[idx]) & (hi[idx] <= self._hi0[c]), axis=1)
                node[idx[ok]] = child[ok]
                moved |= ok
            moving[idx[~moved]] = False
        self._node_of[slots] = node
        self._grow_boxes()

    def _grow_boxes(self) -> None:
        """Node boxes: the shipped box grown to hold its objects and its children's boxes."""
        lo, hi = self._lo0.copy(), self._hi0.copy()
        alive = self.objects.alive_slots()
        node = self._node_of[alive]
        np.minimum.at(lo, node, self.objects.lo[alive])
        np.maximum.at(hi, node, self.objects.hi[alive])
        for rows in reversed(self._by_depth):  # deepest first: fold children into parents
            np.minimum.at(lo, self._parent[rows], lo[rows])
            np.maximum.at(hi, self._parent[rows], hi[rows])
        if self.tree is None:  # no shipped tree: the root is the objects' bounds
            if len(alive):
                lo[0], hi[0] = self.objects.lo[alive].min(axis=0), self.objects.hi[alive].max(axis=0)
        self._lo, self._hi = lo, hi

    def _build(self, slots) -> None:
        self._place(slots)  # _setup() has just reset the rows for the current tree

    def _insert(self, slots) -> None:
        self._place(slots)

    def _update(self, slots) -> None:
        self._place(slots)

    def _remove(self, slots) -> None:
        self._node_of[slots] = -1
        self._grow_boxes()

    # ---------------------------------------------------------------- queries
    def _kept(self, overlap: np.ndarray) -> np.ndarray:
        """Nodes reached from the root: overlapping the query and every ancestor too."""
        kept = overlap.copy()
        for rows in self._by_depth:
            kept[rows] &= kept[self._parent[rows]]
        return kept

    def _candidates(self, kept: np.ndarray) -> np.ndarray:
        alive = self.objects.alive_slots()
        return alive[kept[self._node_of[alive]]]

    def _answer(self, overlap: np.ndarray, test, trace: bool):
        kept = self._kept(overlap)
        cand = self._candidates(kept)
        mask = test(self.objects.lo[cand], self.objects.hi[cand])
        rows = np.flatnonzero(kept) if trace else None
        return cand, mask, int(kept.sum()), rows, kept

    def _query_box(self, lo, hi, trace):
        cand, mask, visited, rows, _ = self._answer(
            boxes_overlap(self._lo, self._hi, lo, hi), lambda a, b: boxes_overlap(a, b, lo, hi), trace)
        return SlotHits(cand[mask], visited, len(cand), rows)

    def _query_sphere(self, center, radius, trace):
        cand, mask, visited, rows, _ = self._answer(
            sphere_box(center, radius, self._lo, self._hi),
            lambda a, b: sphere_box(center, radius, a, b), trace)
        return SlotHits(cand[mask], visited, len(cand), rows)

    def _query_point(self, point, trace):
        cand, mask, visited, rows, _ = self._answer(
            box_contains_point(self._lo, self._hi, point),
            lambda a, b: box_contains_point(a, b, point), trace)
        return SlotHits(cand[mask], visited, len(cand), rows)

    def _query_ray(self, origin, direction, max_t, trace):
        node_hit, node_t = ray_box(origin, direction, self._lo, self._hi)
        kept = self._kept(node_hit & (node_t <= max_t))
        cand = self._candidates(kept)
        hit, t = ray_box(origin, direction, self.objects.lo[cand], self.objects.hi[cand])
        hit &= t <= max_t
        rows = np.flatnonzero(kept) if trace else None
        return RayHits(cand[hit], t[hit], int(kept.sum()), len(cand), rows)

    def _query_frustum(self, planes, trace):
        overlap = frustum_box(planes, self._lo, self._hi)
        cand, mask, visited, rows, kept = self._answer(
            overlap, lambda a, b: frustum_box(planes, a, b), trace)
        culled = None
        if trace:  # reached (parent kept) but outside the frustum
            reached = np.zeros(len(kept), dtype=bool)
            reached[0] = True
            for depth_rows in self._by_depth:
                reached[depth_rows] = kept[self._parent[depth_rows]]
            culled = np.flatnonzero(reached & ~overlap)
        return FrustumHits(cand[mask], visited, len(cand), rows, culled)

    def _pairs(self, mode):
        """Every object queries the tree with its own box and is tested against the objects of
        the nodes it reaches; a pair is tested once, by its lower slot."""
        alive = self.objects.alive_slots()
        lo, hi = self.objects.lo, self.objects.hi
        active = self.objects.active_mask()
        node = self._node_of[alive]
        order = np.argsort(node, kind="stable")
        members = alive[order]                                  # slots grouped by node
        count = np.bincount(node, minlength=len(self._parent))
        first = np.concatenate([[0], np.cumsum(count)[:-1]])
        out, tests = [], 0
        node_tests = np.zeros(len(self._parent), dtype=np.int64)
        for start in range(0, len(alive), _PAIR_BLOCK):
            block = alive[start:start + _PAIR_BLOCK]
            # (nodes, B): a node's row of flags is contiguous for the parent pass below
            reach = np.ones((len(self._parent), len(block)), dtype=bool)
            for axis in range(3):  # per axis in 2D: no (nodes, B, 3) temporaries
                reach &= self._lo[:, axis][:, None] <= hi[block, axis][None, :]
                reach &= lo[block, axis][None, :] <= self._hi[:, axis][:, None]
            for rows in self._by_depth:
                reach[rows] &= reach[self._parent[rows]]
            rows, a_idx = np.nonzero(reach & (count > 0)[:, None])
            # expand each (object, reached node) into the node's objects
            per = count[rows]
            a = np.repeat(block[a_idx], per)
            b_node = np.repeat(rows, per)
            offset = np.arange(len(a)) - np.repeat(np.cumsum(per) - per, per)
            b = members[first[b_node] + offset]
            keep = b > a
            if mode == "active":
                keep &= active[a] | active[b]
            a, b, b_node = a[keep], b[keep], b_node[keep]
            tests += len(a)
            np.add.at(node_tests, b_node, 1)
            hit = np.all((lo[a] <= hi[b]) & (lo[b] <= hi[a]), axis=1)
            out.append(np.stack([a[hit], b[hit]], axis=1))
        pairs = np.concatenate(out) if out else np.empty((0, 2), dtype=np.int64)
        return PairHits(pairs.astype(np.int64), tests, node_tests)

    # ---------------------------------------------------------------- inspection
    def _nodes(self) -> NodeTable:
        alive = self.objects.alive_slots()
        own = np.bincount(self._node_of[alive], minlength=len(self._parent)).astype(np.int64)
        subtree = own.copy()
        awake = np.zeros(len(own), dtype=bool)
        awake[self._node_of[alive[self.objects.active_mask()[alive]]]] = True
        for rows in reversed(self._by_depth):
            np.add.at(subtree, self._parent[rows], subtree[rows])
            np.logical_or.at(awake, self._parent[rows], awake[rows])
        return NodeTable.from_columns(lo=self._lo, hi=self._hi, depth=self._depth, parent=self._parent,
                                      is_leaf=self._leaf, own_count=own, subtree_count=subtree,
                                      awake=awake)

    def _node_objects(self, row):
        if not 0 <= row < len(self._parent):
            raise IndexError(f"node row {row} does not exist (the shipped tree has "
                             f"{len(self._parent)} nodes)")
        alive = self.objects.alive_slots()
        return alive[self._node_of[alive] == row]

    def node_planes(self) -> np.ndarray:
        """Partition line of every row of :meth:`nodes` as a vertical plane.

        Returns
        -------
        ndarray, shape (K, 4), float64
            Rows ``(nx, ny, 0, d)`` with a unit normal pointing to the node's right child
            (Doom's front side); NaN for leaves and without a shipped tree.
        """
        planes = np.full((len(self._parent), 4), np.nan)
        if self.tree is None:
            return planes
        lines = self.tree.lines
        inner = ~self.tree.is_leaf
        x, y, dx, dy = (lines[inner, k] for k in range(4))
        length = np.hypot(dx, dy)
        length[length == 0] = 1.0
        nx, ny = dy / length, -dx / length
        planes[inner, 0], planes[inner, 1], planes[inner, 2] = nx, ny, 0.0
        planes[inner, 3] = -(nx * x + ny * y)
        return planes

    def _leaf_capacity(self) -> float:
        return 1.0

    def _memory_bytes(self) -> int:
        return int(self._lo.nbytes + self._hi.nbytes + self._parent.nbytes + self._depth.nbytes
                   + self._children.nbytes + self._node_of.nbytes)

    def _extra_stats(self) -> dict:
        if self.tree is None:
            return {"shipped": False, "source_error": self.source_error}
        shipped = self.tree.stats()
        return {"shipped": True, "map": self.tree.data.name, "segs": shipped["references"],
                "splits": shipped["splits"]}

    def _validate(self) -> None:
        if self.tree is not None:
            self.tree.validate()
        alive = self.objects.alive_slots()
        node = self._node_of[alive]
        if (node < 0).any() or (node >= len(self._parent)).any():
            raise IndexInvariantError("shipped_bsp: an object is stored in no node")
        if (self.objects.lo[alive] < self._lo[node]).any() or (self.objects.hi[alive] > self._hi[node]).any():
            raise IndexInvariantError("shipped_bsp: an object lies outside its node's box")
        for rows in self._by_depth:
            up = self._parent[rows]
            if (self._lo[rows] < self._lo[up]).any() or (self._hi[rows] > self._hi[up]).any():
                raise IndexInvariantError("shipped_bsp: a node's box is not inside its parent's")
