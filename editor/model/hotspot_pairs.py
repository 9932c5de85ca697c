"""Who makes a hot cell cost: the objects stored in it, the tests each causes, the pairs found.

A hotspot (:mod:`.hotspots`) is a cell; a designer fixes objects. :func:`hot_cells` gives the
Hotspots list its cells. For one cell of a frame's
tree, :func:`cell_objects` lists the objects the cell itself holds (``index.node_objects``: for
an octree's root, the objects that straddle its splits; for a leaf, the objects in it) and, for
each, the candidate tests it causes in that frame: a tree compares an object held in a cell
with the objects held in the cell and in every cell below it whose bounds meet its box, so a
large brush held at the root of a level meets most of it. (Backends prune further, so the
figure is an upper bound; the cell's own measured tests come from the node table.) The
overlapping pairs of the frame that involve a held object are the pairs found there.

:func:`object_label` names an object for these lists: a name a game sent (``meta.names``), else
what the level holds under that id (brush, entity class, wall, triangle).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from spatial.contract import NodeTable, SpatialIndex

if TYPE_CHECKING:
    from .hotspots import Hotspot, HotspotWindow


@dataclass
class CellObjects:
    """The objects of one cell and what they cost (see the module docstring)."""

    row: int               # row of the cell in the node table
    depth: int
    leaf: bool
    cell_tests: int        # tests the cell made in the frame (node table)
    held: np.ndarray       # ids stored in the cell, heaviest first
    tests: np.ndarray      # upper bound of the candidate tests each held object causes a frame
    pairs: np.ndarray      # (k, 2) overlapping pairs of the frame with a held object, heaviest first

    @property
    def straddling(self) -> bool:
        """True for an inner cell: its objects are held there because they straddle its splits."""
        return not self.leaf


def find_cell(nodes: NodeTable, lo, hi) -> int:
    """Row of the cell whose core bounds are ``lo``..``hi`` (-1 when the tree has none)."""
    key = np.concatenate([np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)])
    cells = np.hstack([nodes.core_lo, nodes.core_hi])
    rows = np.flatnonzero(np.all(cells == key, axis=1))
    return int(rows[0]) if len(rows) else -1


def hot_cells(window: HotspotWindow, count: int, index: SpatialIndex, nodes: NodeTable | None,
              pairs: np.ndarray | None) -> list[tuple[Hotspot, CellObjects | None]]:
    """The ``count`` hottest cells of hotspot ``window`` and, for each still in the tree
    ``nodes`` of ``index``, the objects stored there and the pairs found there (None for a
    cell gone from it): what the Hotspots list shows. Reads only what it is given, so any
    thread may run it on a frame's own copies."""
    return [(spot, cell_objects(index, nodes, row, pairs) if nodes is not None and row >= 0 else None)
            for spot, row in ((spot, _row_of(spot, nodes)) for spot in window.ranking(count))]


def _row_of(spot: Hotspot, nodes: NodeTable | None) -> int:
    """Row of ``spot``'s cell in ``nodes``: the row the ranking found in the window's latest
    table when ``nodes`` has that cell there (a live frame's own table), else a search."""
    if nodes is None:
        return -1
    lo, hi = np.array(spot.lo), np.array(spot.hi)
    row = spot.row
    if 0 <= row < len(nodes) and np.array_equal(nodes.core_lo[row], lo) and \
            np.array_equal(nodes.core_hi[row], hi):
        return row
    return find_cell(nodes, lo, hi)


def cell_objects(index: SpatialIndex, nodes: NodeTable, row: int, pairs: np.ndarray | None) -> CellObjects:
    """The objects held in cell ``row`` of ``nodes`` (a table of ``index`` now) and their cost."""
    held = np.asarray(index.node_objects(row), dtype=np.int64)
    tests = _tests_caused(index, nodes, row, held)
    found = np.empty((0, 2), dtype=np.int64)
    per_object = np.zeros(len(held), dtype=np.int64)
    if pairs is not None and len(pairs) and len(held):
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        hit = np.isin(pairs, held)
        found = pairs[hit.any(axis=1)]
        # overlaps per held object: its pairs found here (a pair of two held objects counts
        # for both)
        ids, counts = np.unique(pairs[hit], return_counts=True)
        at = np.minimum(np.searchsorted(ids, held), max(len(ids) - 1, 0))
        if len(ids):
            per_object = np.where(ids[at] == held, counts[at], 0)
    order = np.lexsort((held, -per_object, -tests))  # most tests, then most overlaps, then id
    held, tests = held[order], tests[order]
    return CellObjects(int(row), int(nodes.depth[row]), bool(nodes.is_leaf[row]), int(nodes.pair_tests[row]),
                       held, tests, found)


def _subtree(nodes: NodeTable, row: int) -> np.ndarray:
    """Mask of ``row`` and its descendants: the rows whose ancestor at ``row``'s depth is
    ``row`` (climbed one level at a time for every row at once)."""
    depth = np.asarray(nodes.depth, dtype=np.int64)
    parent = np.asarray(nodes.parent, dtype=np.int64)
    top = int(depth[row])
    ancestor = np.arange(len(nodes), dtype=np.int64)
    ancestor[depth < top] = -1  # above the cell: never inside it
    for _ in range(int(depth.max(initial=0)) - top):
        deeper = ancestor >= 0
        deeper[deeper] = depth[ancestor[deeper]] > top
        ancestor[deeper] = parent[ancestor[deeper]]
    return ancestor == row


#: held objects compared with the cells at a time (bounds the boolean work array)
_TESTS_CHUNK_CELLS = 4_000_000


def _tests_caused(index: SpatialIndex, nodes: NodeTable, row: int, held: np.ndarray) -> np.ndarray:
    """Per held object: the references held in the cell and the cells below it whose bounds
    meet the object's box — the partners a tree walk pruned by bounds still tests it against."""
    if not len(held):
        return np.empty(0, dtype=np.int64)
    rows = np.flatnonzero(_subtree(nodes, row))
    own = nodes.own_count[rows].astype(np.int64)
    rows, own = rows[own > 0], own[own > 0]  # cells holding nothing add no partners
    lo, hi = nodes.lo[rows], nodes.hi[rows]
    slots = index.objects.slots_of(held)
    box_lo, box_hi = index.objects.lo[slots], index.objects.hi[slots]
    partners = np.empty(len(held), dtype=np.int64)
    step = max(1, _TESTS_CHUNK_CELLS // max(len(rows), 1))
    for start in range(0, len(held), step):
        part = slice(start, start + step)
        meets = np.ones((len(box_lo[part]), len(rows)), dtype=bool)
        for axis in range(3):
            meets &= (lo[None, :, axis] <= box_hi[part, axis, None]) & (hi[None, :, axis] >= box_lo[part, axis, None])
        partners[part] = meets @ own
    return np.maximum(partners - 1, 0)  # not itself


def object_label(oid: int, scene=None, names: dict[int, str] | None = None) -> str:
    """``"ogre 7"``, ``"brush 1234"``, ``"monster_army 12"``, ``"wall 88"``... for a list."""
    if names and oid in names:
        return f"{names[oid]} {oid}"
    obj = scene.get(oid) if scene is not None else None
    if obj is None:
        return f"object {oid}"
    kind = type(obj).__name__
    if kind == "Entity":
        return f"{getattr(obj, 'classname', '') or 'entity'} {oid}"
    if kind == "Segment":
        return f"wall {oid}"
    return f"{kind.lower()} {oid}"


def describe_cell(cell: CellObjects, label) -> list[str]:
    """One line for each held object: ``"brush 1234 straddles the root: 2,999 tests a frame"``."""
    if cell.straddling:
        where = "straddles the root" if cell.depth == 0 else f"straddles a cell at depth {cell.depth}"
    else:
        where = f"in a leaf at depth {cell.depth}"
    return [f"{label(int(oid))} {where}: up to {int(t):,} tests a frame" for oid, t in zip(cell.held, cell.tests)]
