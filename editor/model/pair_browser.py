"""The pairs of a frame, one row each: the two objects, whether their boxes overlap, and the node
whose test compared them.

Two lists, both for the frame on display:

* :func:`frame_pairs` — the frame's overlapping pairs, the pairs in the costliest nodes first.
* :func:`cell_pairs` — the pairs one cell compares, overlapping or not: each object the cell
  stores against the objects stored in the cell and in the cells below it whose bounds meet its
  box (the partners a walk pruned by bounds reaches; a backend that prunes further tests fewer,
  so the list is what the cell *may* test, and its length an upper bound).

*The node that tested a pair* is, in the trees that store objects in inner nodes (octree,
quadtree) and in leaves (grid, kd-tree, BSP), the deepest node storing one of the two whose
subtree stores the other; in a tree whose pair search descends two subtrees at once (a BVH) no
single node stores both, and the row names the deepest node above both (where their two
subtrees met). Each row also carries that node's pair tests this frame and, from the hotspot
window, in how many of its frames the pair overlapped.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatial.contract import NodeTable, SpatialIndex
from spatial.geometry import boxes_overlap

from .hotspots import pair_keys

#: rows listed at most (the total is reported beside)
DEFAULT_LIMIT = 200
#: cells of the (stored objects x nodes below) overlap matrix made at once
_MEETS_CELLS = 4_000_000


@dataclass(frozen=True)
class BrowsedPair:
    """One pair of the browser (see the module docstring)."""

    a: int
    b: int
    overlap: bool
    node: int            # node table row of the node that tested it (-1 when none holds them)
    depth: int           # that node's depth (-1 with no node)
    node_tests: int      # that node's pair tests this frame
    frames: int          # frames of the hotspot window in which the pair overlapped

    def as_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "overlap": self.overlap, "node": self.node,
                "depth": self.depth, "node_tests": self.node_tests, "frames": self.frames}


@dataclass(frozen=True)
class PairList:
    """Rows of the browser and how many pairs there were in all (``bound``: at most that
    many, when counting them exactly would mean listing them all)."""

    rows: list[BrowsedPair]
    total: int
    bound: bool = False


class _Holders:
    """Which nodes store each object: one pass over the storing nodes, then binary searches."""

    def __init__(self, index: SpatialIndex, nodes: NodeTable) -> None:
        self.index, self.nodes = index, nodes
        stores = np.flatnonzero(np.asarray(nodes.own_count) > 0)
        self._contents = {int(r): np.asarray(index.node_objects(int(r)), dtype=np.int64)
                          for r in stores.tolist()}
        parts = list(self._contents.values())
        ids = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
        owners = np.repeat(stores, [len(p) for p in parts]) if parts else np.empty(0, np.int64)
        order = np.lexsort((owners, ids))  # by id, then parents before children
        self._ids, self._rows = ids[order], owners[order]

    def box(self, oid: int) -> tuple[np.ndarray, np.ndarray]:
        slot = self.index.objects.slots_of(np.array([oid], dtype=np.int64))[0]
        return self.index.objects.lo[slot], self.index.objects.hi[slot]

    def contents(self, row: int) -> np.ndarray:
        return self._contents.get(int(row), np.empty(0, dtype=np.int64))

    def rows_of(self, oid: int) -> np.ndarray:
        """Rows storing ``oid`` (parents before children, as in the table)."""
        lo = np.searchsorted(self._ids, oid, side="left")
        hi = np.searchsorted(self._ids, oid, side="right")
        return self._rows[lo:hi]

    def heaviest(self, oids: np.ndarray) -> np.ndarray:
        """For each of ``oids``, the most pair tests of a node storing it (0 if none does)."""
        tests = np.asarray(self.nodes.pair_tests, dtype=np.int64)
        if not len(self._ids):
            return np.zeros(len(oids), dtype=np.int64)
        starts = np.flatnonzero(np.r_[True, self._ids[1:] != self._ids[:-1]])
        best = np.maximum.reduceat(tests[self._rows], starts)
        unique = self._ids[starts]
        at = np.minimum(np.searchsorted(unique, oids), len(unique) - 1)
        return np.where(unique[at] == oids, best[at], 0)


def _ancestors(parent: np.ndarray, row: int) -> list[int]:
    """``row`` and its ancestors, deepest first."""
    chain = []
    while row >= 0:
        chain.append(row)
        row = int(parent[row])
    return chain


def node_that_tested(holders: _Holders, a: int, b: int) -> int:
    """The node that tested the pair ``(a, b)`` (see the module docstring); -1 if neither is
    stored in the tree."""
    parent = holders.nodes.parent
    rows_a, rows_b = holders.rows_of(a), holders.rows_of(b)
    best = -1
    for mine, other in ((rows_a, rows_b), (rows_b, rows_a)):
        other_chains = [set(_ancestors(parent, int(r))) for r in other]
        for row in mine.tolist():  # a node storing one whose subtree stores the other
            if any(row in chain for chain in other_chains):
                if best < 0 or holders.nodes.depth[row] > holders.nodes.depth[best]:
                    best = row
    if best >= 0 or not len(rows_a) or not len(rows_b):
        return best
    above_a = _ancestors(parent, int(rows_a[-1]))  # where the two subtrees met
    above_b = set(_ancestors(parent, int(rows_b[-1])))
    return next((r for r in above_a if r in above_b), -1)


def _row(holders: _Holders, a: int, b: int, overlap: bool, frames: int) -> BrowsedPair:
    node = node_that_tested(holders, a, b)
    nodes = holders.nodes
    if node < 0:
        return BrowsedPair(a, b, overlap, -1, -1, 0, frames)
    return BrowsedPair(a, b, overlap, node, int(nodes.depth[node]), int(nodes.pair_tests[node]),
                       frames)


def _window_frames(window, pairs: np.ndarray) -> np.ndarray:
    if window is None or not len(pairs):
        return np.zeros(len(pairs), dtype=np.int64)
    return window.pair_frames(pairs)


def frame_pairs(index: SpatialIndex, nodes: NodeTable, pairs: np.ndarray | None, window=None,
                limit: int = DEFAULT_LIMIT) -> PairList:
    """The frame's overlapping ``pairs`` (of ``index``, whose node table is ``nodes``), each
    with the node that tested it; the pairs of the nodes with the most tests first, then by
    ids. ``window`` (a :class:`~.hotspots.HotspotWindow`) adds the frames each overlapped."""
    if pairs is None or not len(pairs):
        return PairList([], 0)
    pairs = np.sort(np.asarray(pairs, dtype=np.int64).reshape(-1, 2), axis=1)
    holders = _Holders(index, nodes)
    # rank by the most tests of a node storing either object: cheap, before the exact node
    # of each listed pair is found
    weight = np.maximum(holders.heaviest(pairs[:, 0]), holders.heaviest(pairs[:, 1]))
    order = np.lexsort((pairs[:, 1], pairs[:, 0], -weight))
    chosen = pairs[order[:limit]]
    frames = _window_frames(window, chosen)
    rows = [_row(holders, a, b, True, int(f)) for (a, b), f in zip(chosen.tolist(), frames)]
    rows.sort(key=lambda r: (-r.node_tests, r.a, r.b))
    return PairList(rows, len(pairs))


def cell_pairs(index: SpatialIndex, nodes: NodeTable, row: int, window=None,
               limit: int = DEFAULT_LIMIT) -> PairList:
    """The pairs cell ``row`` compares (see the module docstring; each row names that cell):
    the stored objects that cause the most tests first, each with its overlapping partners
    before the others, up to ``limit`` rows. ``total`` counts the pairs when every stored
    object was listed, else it is the upper bound of the comparisons (``bound``)."""
    holders = _Holders(index, nodes)
    held = holders.contents(row)
    if not len(held):
        return PairList([], 0)
    inside = _subtree_mask(nodes, row)
    below = np.flatnonzero(inside & (np.asarray(nodes.own_count) > 0))
    objects = index.objects
    slots = objects.slots_of(held)
    held_lo, held_hi = objects.lo[slots], objects.hi[slots]
    node_lo, node_hi = nodes.lo[below], nodes.hi[below]
    own = np.asarray(nodes.own_count, dtype=np.int64)[below]
    # comparisons each stored object causes: the references of the cells it meets, less itself
    caused = np.zeros(len(held), dtype=np.int64)
    step = max(1, _MEETS_CELLS // max(len(below), 1))  # bounds the (held x nodes) matrix
    for start in range(0, len(held), step):
        part = slice(start, start + step)
        meets = boxes_overlap(held_lo[part, None, :], held_hi[part, None, :],
                              node_lo[None, :, :], node_hi[None, :, :])
        caused[part] = np.maximum(meets @ own - 1, 0)
    seen: set[int] = set()
    rows: list[BrowsedPair] = []
    depth, tests = int(nodes.depth[row]), int(nodes.pair_tests[row])
    listed_all = True
    for k in np.lexsort((held, -caused)).tolist():
        if len(rows) >= limit:
            listed_all = False
            break
        meets = boxes_overlap(held_lo[k], held_hi[k], node_lo, node_hi)
        partners = np.unique(np.concatenate([holders.contents(int(r)) for r in below[meets]]))
        partners = partners[partners != held[k]]
        pairs = np.column_stack([np.minimum(partners, held[k]), np.maximum(partners, held[k])])
        fresh = np.array([key not in seen for key in pair_keys(pairs).tolist()], dtype=bool)
        pairs = pairs[fresh] if len(pairs) else pairs
        if not len(pairs):
            continue
        seen.update(pair_keys(pairs).tolist())
        other = objects.slots_of(np.where(pairs[:, 0] == held[k], pairs[:, 1], pairs[:, 0]))
        overlap = boxes_overlap(held_lo[k], held_hi[k], objects.lo[other], objects.hi[other])
        order = np.lexsort((pairs[:, 1], pairs[:, 0], ~overlap))[:limit - len(rows)]
        frames = _window_frames(window, pairs[order])
        rows.extend(BrowsedPair(int(a), int(b), bool(overlap[j]), row, depth, tests, int(f))
                    for j, (a, b), f in zip(order.tolist(), pairs[order].tolist(), frames))
        if len(order) < len(pairs):
            listed_all = False
    if listed_all:
        return PairList(rows, len(seen))
    return PairList(rows, int(caused.sum()), bound=True)


def _subtree_mask(nodes: NodeTable, row: int) -> np.ndarray:
    """``row`` and every row below it (parents come before children in a node table)."""
    inside = np.zeros(len(nodes), dtype=bool)
    inside[row] = True
    parent = np.asarray(nodes.parent)
    for r in range(row + 1, len(nodes)):
        p = parent[r]
        inside[r] = p >= 0 and inside[p]
    return inside
