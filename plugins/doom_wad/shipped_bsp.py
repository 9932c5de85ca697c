"""The BSP a Doom map ships with (NODES, SSECTORS, SEGS), as a read-only structure.

The game's node builder cut the linedefs into *segs* and grouped them into convex
*subsectors* (the leaves) under a tree of partition lines (the nodes). This module shows that
tree the way our backends show theirs, so the editor can overlay it next to a tree built here
and ``benchmarks/doom_bsp.py`` can compare them:

* :meth:`ShippedBSP.nodes` — a :class:`~spatial.contract.NodeTable`, parents before children
  (breadth-first from the root, which is the last record of NODES). A node's box is the union
  of the two child boxes the NODES record stores; a leaf's box is the one its parent stores for
  it; heights span the map's lowest floor to its highest ceiling. ``own_count`` of a leaf is
  its number of segs.
* :meth:`ShippedBSP.stats` — the same figures as ``SpatialIndex.stats()`` where they apply:
  nodes (inner and leaves), leaves, max depth, references (segs) and ``splits``: segs beyond
  one per linedef side, i.e. the cuts the node builder made.
* :meth:`ShippedBSP.validate` — every seg in exactly one leaf, every node and leaf reached
  exactly once, boxes nested, each seg inside its leaf's box.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatial.contract import NodeTable
from spatial.errors import IndexInvariantError

from .mapdata import SUBSECTOR_BIT, MapData, open_map
from .wad import WadError


@dataclass
class ShippedBSP:
    """The map's own BSP. Build it with :meth:`from_map` or :func:`load_shipped_bsp`."""

    data: MapData
    #: per row: NODES record (inner) or subsector (leaf) number
    record: np.ndarray
    is_leaf: np.ndarray
    parent: np.ndarray
    depth: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    #: per row: partition line ``(x, y, dx, dy)`` (NaN for leaves)
    lines: np.ndarray

    name = "shipped-bsp"

    @classmethod
    def from_map(cls, data: MapData) -> ShippedBSP:
        """Walk the tree breadth-first; a node reached twice or a cycle raises ``WadError``."""
        if data.nodes is None:
            raise WadError(data.path, "the map has no standard node build (missing or extended "
                                      "NODES)", f"{data.name}/NODES")
        nodes = data.nodes
        floor = float(data.sectors["floor"].min()) if len(data.sectors) else 0.0
        ceiling = float(data.sectors["ceiling"].max()) if len(data.sectors) else 0.0
        rows_record, rows_leaf, rows_parent, rows_depth, rows_lo, rows_hi, rows_line = ([] for _ in range(7))
        seen_nodes = np.zeros(len(nodes), dtype=bool)

        def box_of(raw) -> tuple[list, list]:  # Doom stores top, bottom, left, right
            top, bottom, left, right = (float(v) for v in raw)
            return [left, bottom, floor], [right, top, ceiling]

        if len(nodes) == 0:  # a single-subsector map
            queue = [(SUBSECTOR_BIT | 0, -1, 0, None)]
        else:
            root = nodes[-1]
            lo_r, hi_r = box_of(root["right_box"])
            lo_l, hi_l = box_of(root["left_box"])
            queue = [(len(nodes) - 1, -1, 0, (np.minimum(lo_r, lo_l), np.maximum(hi_r, hi_l)))]
        head = 0
        while head < len(queue):
            child, parent, depth, box = queue[head]
            head += 1
            row = len(rows_record)
            rows_parent.append(parent)
            rows_depth.append(depth)
            if box is None:  # no nodes: the one leaf spans the vertexes
                v = data.vertexes
                box = ([float(v["x"].min()), float(v["y"].min()), floor],
                       [float(v["x"].max()), float(v["y"].max()), ceiling])
            rows_lo.append(box[0])
            rows_hi.append(box[1])
            if child & SUBSECTOR_BIT:
                rows_record.append(child & ~SUBSECTOR_BIT)
                rows_leaf.append(True)
                rows_line.append([np.nan] * 4)
                continue
            if seen_nodes[child]:
                raise WadError(data.path, f"node {child} is reached twice (the tree has a cycle "
                                          f"or a shared child)", f"{data.name}/NODES")
            seen_nodes[child] = True
            node = nodes[child]
            rows_record.append(child)
            rows_leaf.append(False)
            rows_line.append([float(node[k]) for k in ("x", "y", "dx", "dy")])
            for side in ("right", "left"):
                lo, hi = box_of(node[f"{side}_box"])
                queue.append((int(node[side]), row, depth + 1, (lo, hi)))
        return cls(data, np.asarray(rows_record, dtype=np.int64), np.asarray(rows_leaf, dtype=bool),
                   np.asarray(rows_parent, dtype=np.int32), np.asarray(rows_depth, dtype=np.int32),
                   np.asarray(rows_lo, dtype=np.float64), np.asarray(rows_hi, dtype=np.float64),
                   np.asarray(rows_line, dtype=np.float64))

    # ---------------------------------------------------------------- backend-like API
    def leaf_segs(self, row: int) -> np.ndarray:
        """Seg numbers of leaf ``row`` (empty for an inner node)."""
        if not self.is_leaf[row]:
            return np.empty(0, dtype=np.int64)
        sub = self.data.subsectors[self.record[row]]
        return np.arange(int(sub["first"]), int(sub["first"]) + int(sub["count"]), dtype=np.int64)

    def seg_lines(self) -> np.ndarray:
        """``(S, 2, 2)`` start and end of every seg (for drawing the overlay)."""
        v = self.data.vertexes
        segs = self.data.segs
        a = np.stack([v["x"][segs["v1"]], v["y"][segs["v1"]]], axis=1).astype(np.float64)
        b = np.stack([v["x"][segs["v2"]], v["y"][segs["v2"]]], axis=1).astype(np.float64)
        return np.stack([a, b], axis=1)

    def nodes(self) -> NodeTable:
        """The tree as a :class:`NodeTable` (see the module docstring)."""
        own = np.zeros(len(self.record), dtype=np.int64)
        leaves = np.flatnonzero(self.is_leaf)
        own[leaves] = self.data.subsectors["count"][self.record[leaves]]
        subtree = own.copy()
        for row in range(len(own) - 1, 0, -1):  # children follow parents: fold upwards
            subtree[self.parent[row]] += subtree[row]
        return NodeTable.from_columns(lo=self.lo, hi=self.hi, depth=self.depth, parent=self.parent,
                                      is_leaf=self.is_leaf, own_count=own, subtree_count=subtree)

    def splits(self) -> int:
        """Segs beyond one per linedef side: how many cuts the node builder made."""
        segs = self.data.segs
        sides = np.unique(segs["linedef"].astype(np.int64) * 2 + segs["direction"].astype(np.int64))
        return int(len(segs) - len(sides))

    def stats(self) -> dict:
        """Nodes (inner and leaves), leaves, max depth, references (segs) and splits."""
        return {"backend": self.name, "nodes": int(len(self.record)),
                "leaves": int(self.is_leaf.sum()), "max_depth": int(self.depth.max()),
                "references": int(len(self.data.segs)), "splits": self.splits()}

    def validate(self) -> None:
        """Raise :class:`IndexInvariantError` when the shipped tree is inconsistent."""
        subs = self.data.subsectors
        leaf_records = self.record[self.is_leaf]
        if len(np.unique(leaf_records)) != len(leaf_records) or len(leaf_records) != len(subs):
            raise IndexInvariantError("shipped bsp: every subsector must be a leaf exactly once")
        owner = np.full(len(self.data.segs), -1, dtype=np.int64)
        for row in np.flatnonzero(self.is_leaf):
            segs = self.leaf_segs(row)
            if (owner[segs] >= 0).any():
                raise IndexInvariantError(f"shipped bsp: seg {int(segs[owner[segs] >= 0][0])} "
                                          f"is in two leaves")
            owner[segs] = row
        if (owner < 0).any():
            raise IndexInvariantError(f"shipped bsp: seg {int(np.flatnonzero(owner < 0)[0])} "
                                      f"is in no leaf")
        inner = ~self.is_leaf
        if len(np.unique(self.record[inner])) != int(inner.sum()):
            raise IndexInvariantError("shipped bsp: a node is reached twice")
        for row in range(1, len(self.record)):
            up = self.parent[row]
            if (self.lo[row] < self.lo[up]).any() or (self.hi[row] > self.hi[up]).any():
                raise IndexInvariantError(f"shipped bsp: box of row {row} is not inside its "
                                          f"parent's")
        ends = self.seg_lines()
        leaf_lo, leaf_hi = self.lo[owner, :2], self.hi[owner, :2]
        outside = ((ends < leaf_lo[:, None, :]) | (ends > leaf_hi[:, None, :])).any(axis=(1, 2))
        if outside.any():
            raise IndexInvariantError(f"shipped bsp: seg {int(np.flatnonzero(outside)[0])} lies "
                                      f"outside its leaf's box")


def load_shipped_bsp(path, member: str | None = None) -> ShippedBSP:
    """The shipped BSP of map ``member`` (the first map when None) of a WAD."""
    return ShippedBSP.from_map(open_map(path, member))
