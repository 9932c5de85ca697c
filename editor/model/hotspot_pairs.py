"""Who makes a hot cell cost: the objects stored in it, the tests each causes, the pairs found.

A hotspot (:mod:`.hotspots`) is a cell; a designer fixes objects. For one cell of a frame's
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

import numpy as np

from spatial.contract import NodeTable, SpatialIndex


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


def cell_objects(index: SpatialIndex, nodes: NodeTable, row: int, pairs: np.ndarray | None) -> CellObjects:
    """The objects held in cell ``row`` of ``nodes`` (a table of ``index`` now) and their cost."""
    held = np.asarray(index.node_objects(row), dtype=np.int64)
    tests = _tests_caused(index, nodes, row, held)
    found = np.empty((0, 2), dtype=np.int64)
    if pairs is not None and len(pairs) and len(held):
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        found = pairs[np.isin(pairs, held).any(axis=1)]
    per_object = np.array([int((found == oid).sum()) for oid in held.tolist()], dtype=np.int64)
    order = np.lexsort((held, -per_object, -tests))  # most tests, then most overlaps, then id
    held, tests = held[order], tests[order]
    return CellObjects(int(row), int(nodes.depth[row]), bool(nodes.is_leaf[row]), int(nodes.pair_tests[row]),
                       held, tests, found)


def _subtree(nodes: NodeTable, row: int) -> np.ndarray:
    """Mask of ``row`` and its descendants (parents come before children in a node table):
    marked one generation per pass, as many passes as the subtree is deep (a loop over the
    nodes in Python held the window ~90 ms on a real level each time the simulation paused
    and the Hotspots list refreshed)."""
    inside = np.zeros(len(nodes), dtype=bool)
    inside[row] = True
    parent = np.asarray(nodes.parent)
    has_parent = parent >= 0
    up = np.where(has_parent, parent, 0)
    after = np.arange(len(nodes)) > row
    while True:
        new = after & has_parent & ~inside & inside[up]
        if not new.any():
            return inside
        inside |= new


def _tests_caused(index: SpatialIndex, nodes: NodeTable, row: int, held: np.ndarray) -> np.ndarray:
    """Per held object: the references held in the cell and the cells below it whose bounds
    meet the object's box — the partners a tree walk pruned by bounds still tests it against."""
    if not len(held):
        return np.empty(0, dtype=np.int64)
    rows = np.flatnonzero(_subtree(nodes, row))
    lo, hi, own = nodes.lo[rows], nodes.hi[rows], nodes.own_count[rows].astype(np.int64)
    slots = index.objects.slots_of(held)
    box_lo, box_hi = index.objects.lo[slots], index.objects.hi[slots]
    meets = np.all((lo[None, :, :] <= box_hi[:, None, :]) & (hi[None, :, :] >= box_lo[:, None, :]), axis=2)
    return np.maximum(meets @ own - 1, 0)  # not itself


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
