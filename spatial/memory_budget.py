"""Worst-case memory of a backend's parameter set, checked against a budget before building.

Some in-range parameter sets grow an index without useful bound on dense scenes (a quadtree at
``max_depth=24, max_objects=1, max_duplication=4`` on 5,000 boxes reaches several GB). Each
built-in backend states an upper bound of what its structure can take for given parameters and
boxes (:meth:`~spatial.contract.SpatialIndex.worst_case_bytes`); a parameter set whose bound
exceeds the budget is refused with one line naming the backend, the parameters, the estimate and
the budget, before anything is allocated (:meth:`~spatial.contract.SpatialIndex.build` and
``set_params`` check it). The bounds follow each backend's own growth rules: duplication per
split, reference budgets, leaf capacities, depth and cell-size limits, and the cells a box can
meet at the finest level the parameters allow.

The budget is ``$PARTITION_STUDIO_MEMORY_BUDGET_MB`` (default 4096, ``0`` for none), the same
number the command line uses as its process-wide cap (``editor/cli/limits.py``).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numba
import numpy as np

from .errors import PartitionStudioError

MEMORY_BUDGET_ENV = "PARTITION_STUDIO_MEMORY_BUDGET_MB"
#: megabytes an index (and a command) may take
DEFAULT_MEMORY_BUDGET_MB = 4096
#: what the object table holds per object (ids, two boxes, flags, slot maps), in bytes
OBJECT_BYTES = 128


class MemoryBudgetError(PartitionStudioError, ValueError):
    """A backend's parameters could need more memory than the budget allows."""


def configured_budget_mb() -> int | None:
    """``$PARTITION_STUDIO_MEMORY_BUDGET_MB`` as a whole number of MB; ``0`` (or less) for no
    budget; None when unset or not a whole number."""
    text = os.environ.get(MEMORY_BUDGET_ENV, "").strip()
    try:
        return int(text) if text else None
    except ValueError:
        return None


def physical_memory_mb() -> int | None:
    """The machine's memory in MB, when the platform tells it."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (1 << 20))
    except (AttributeError, ValueError, OSError):
        return None


def memory_budget_mb() -> int | None:
    """The budget an index's worst case is checked against, in MB.

    ``$PARTITION_STUDIO_MEMORY_BUDGET_MB`` when set (``0``: no budget, None returned), else
    the machine's memory (else :data:`DEFAULT_MEMORY_BUDGET_MB`): the worst case of a
    legitimate big level may well exceed a few GB while its real tree stays far below.
    """
    configured = configured_budget_mb()
    if configured is not None:
        return None if configured <= 0 else configured
    return physical_memory_mb() or DEFAULT_MEMORY_BUDGET_MB


def describe_bytes(count: float) -> str:
    """``count`` bytes for a message: ``"512 MB"``, ``"3.2 GB"``, ``"1.4e+09 GB"``."""
    mb = count / (1 << 20)
    if mb < 1024:
        return f"{mb:.0f} MB"
    gb = mb / 1024
    return f"{gb:.1f} GB" if gb < 1e6 else f"{gb:.2g} GB"


def extent_of(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Size of the world the boxes span on each axis (zeros without boxes)."""
    if not len(lo):
        return np.zeros(lo.shape[1] if lo.ndim == 2 else 3)
    return hi.max(axis=0) - lo.min(axis=0)


def cells_met(sizes: np.ndarray, cell: float) -> float:
    """Most cells of a regular grid of side ``cell`` that the boxes of ``sizes`` ``(N, k)``
    can meet together, wherever the grid lies: a closed box of side ``s`` meets at most
    ``floor(s / cell) + 2`` cells a row (touching counts), on each axis."""
    if not len(sizes):
        return 0.0
    if cell <= 0 or not math.isfinite(cell):
        return math.inf
    with np.errstate(over="ignore"):
        return float(np.prod(np.floor(sizes / cell) + 2.0, axis=1).sum())


@numba.njit(cache=True, nogil=True)
def _cells_on_grid(lo, hi, origin, cell):
    total = 0.0
    for i in range(lo.shape[0]):
        cells = 1.0
        for a in range(lo.shape[1]):
            cells *= math.floor((hi[i, a] - origin[a]) / cell) - math.floor(
                (lo[i, a] - origin[a]) / cell) + 1.0
        total += cells
    return total


def cells_met_on_grid(lo: np.ndarray, hi: np.ndarray, origin: np.ndarray, cell: float) -> float:
    """Cells of the grid of side ``cell`` anchored at ``origin`` that the closed boxes
    ``lo``/``hi`` ``(N, k)`` meet together (exact for boxes, an upper bound for what they
    hold). One compiled pass: it runs once a level on up to millions of boxes."""
    if not len(lo):
        return 0.0
    if cell <= 0 or not math.isfinite(cell):
        return math.inf
    return float(_cells_on_grid(np.ascontiguousarray(lo, dtype=np.float64),
                                 np.ascontiguousarray(hi, dtype=np.float64),
                                 np.ascontiguousarray(origin, dtype=np.float64), float(cell)))


def levels_above(side: float, min_size: float, max_depth: int) -> int:
    """Deepest level a cell of ``side`` at the root may be split to: ``max_depth``, or where
    halving would go below ``min_size``."""
    if min_size <= 0 or side <= min_size:
        return max_depth if min_size <= 0 else 0
    return int(min(max_depth, math.floor(math.log2(side / min_size))))


def subdivision_bound(references_at, count: int, max_depth: int, branching: int,
                      capacity: int, copies_per_split: float,
                      reference_budget: float = math.inf) -> tuple[float, float, float]:
    """Most ``(nodes, references in the deepest level, references over all levels)`` of a tree
    that splits a cell into ``branching`` equal children while it holds more than ``capacity``
    references, down to ``max_depth``.

    ``references_at(level)`` bounds the references if every cell of that level were made (the
    cells the boxes meet); the references of a level are also bounded by those of the level
    above times ``copies_per_split``, and all levels together by ``reference_budget``. The
    nodes that split at a level are bounded by its references over ``capacity + 1`` and by
    ``branching ** level``.
    """
    references = float(count)
    every_level = references
    nodes = 1.0
    for level in range(1, max_depth + 1):
        if references <= capacity or every_level >= reference_budget:
            break
        splitting = min(references / (capacity + 1), float(branching) ** (level - 1))
        nodes += branching * max(splitting, 1.0)
        deeper = min(references * copies_per_split, references_at(level),
                     reference_budget - every_level)
        every_level += deeper
        references = max(references, deeper)
    return nodes, references, every_level


def refuse_over_budget(name: str, params_text: str, count: int, estimate: float,
                       budget_mb: int | None) -> None:
    """Raise :class:`MemoryBudgetError` when ``estimate`` bytes exceed ``budget_mb``."""
    if budget_mb is None or estimate <= budget_mb * float(1 << 20):
        return
    source = (f"${MEMORY_BUDGET_ENV}" if configured_budget_mb() is not None else
              f"this machine's memory; ${MEMORY_BUDGET_ENV} sets another")
    raise MemoryBudgetError(
        f"{name} with {params_text} on {count} objects could need up to "
        f"{describe_bytes(estimate)} in the worst case, over the memory budget of {budget_mb} MB "
        f"({source}); choose parameters that bound the tree (smaller depth, less duplication, "
        "larger cells or buckets)")


def _side(lo: np.ndarray, hi: np.ndarray, axes) -> float:
    extent = hi[:, axes].max(axis=0) - lo[:, axes].min(axis=0)
    return max(float(extent.max()), np.finfo(float).tiny)


@dataclass(frozen=True)
class CellTree:
    """The shape of a tree of equal cells that stores an object in every cell it meets
    (quadtree, triangle octree), as :func:`cell_tree_bytes` bounds it.

    ``root`` ``(origin, side)`` is the root cell when the tree's rule fixes it (the references
    of a level are then counted on its exact grid), else the tightest square or cube around the
    boxes and any grid position. ``references_kept`` is ``"deepest"`` for trees that keep the
    references of their leaves only, ``"every"`` for builds that keep every level's lists.
    """

    axes: tuple
    branching: int
    max_depth: int
    capacity: int
    copies_per_split: float
    node_bytes: float
    reference_bytes: float
    min_size: float = 0.0
    reference_budget: float = math.inf
    root: tuple | None = None
    references_kept: str = "deepest"


def cell_tree_bytes(lo: np.ndarray, hi: np.ndarray, tree: CellTree) -> float:
    """Worst case of the cell tree ``tree``: :func:`subdivision_bound` over the boxes
    ``lo``/``hi``."""
    count = len(lo)
    if not count:
        return 0.0
    axes = list(tree.axes)
    root = tree.root
    if root is None:
        side = _side(lo, hi, axes)
        sizes = hi[:, axes] - lo[:, axes]

        def references_at(level):
            return cells_met(sizes, side / 2.0 ** level)
    else:
        origin, side = np.asarray(root[0], dtype=np.float64)[axes], float(root[1])
        box_lo = np.ascontiguousarray(lo[:, axes], dtype=np.float64)
        box_hi = np.ascontiguousarray(hi[:, axes], dtype=np.float64)

        def references_at(level):
            return cells_met_on_grid(box_lo, box_hi, origin, side / 2.0 ** level)
    depth = levels_above(side, tree.min_size, tree.max_depth)
    nodes, deepest, every = subdivision_bound(references_at, count, depth, tree.branching,
                                              tree.capacity, tree.copies_per_split,
                                              tree.reference_budget)
    references = every if tree.references_kept == "every" else deepest
    return nodes * tree.node_bytes + references * tree.reference_bytes + count * OBJECT_BYTES


def stored_once_tree_bytes(lo: np.ndarray, hi: np.ndarray, *, branching: int, max_depth: int,
                           min_size: float, looseness: float, node_bytes: float) -> float:
    """Worst case of a tree that stores each object once, in the deepest cell it fits (the
    octree): a node of level ``l`` exists only above an object that fits a cell of that level
    (side at least its size over ``looseness``), so there are at most as many as such objects
    and at most ``branching ** l``."""
    count = len(lo)
    if not count:
        return 0.0
    side = 2.0 * _side(lo, hi, [0, 1, 2])  # a power of two at least the extent: below twice it
    size = np.sort((hi - lo).max(axis=1))
    nodes = 1.0
    for level in range(1, levels_above(side, min_size, max_depth) + 1):
        cell = side / 2.0 ** level * max(looseness, 1.0)
        fitting = float(np.searchsorted(size, cell, side="right"))
        if fitting == 0:
            break
        nodes += min(fitting, float(branching) ** level)
    return nodes * node_bytes + count * OBJECT_BYTES


def budgeted_tree_bytes(count: int, *, references_per_object: float, max_depth: int,
                        node_bytes: float, reference_bytes: float) -> float:
    """Worst case of a binary tree whose build caps its references at
    ``references_per_object`` times the object count (kd-tree, BSP): every kept split has
    objects on both sides, so there are fewer leaves than references, and at most
    ``2 ** (max_depth + 1)`` nodes."""
    if not count:
        return 0.0
    references = references_per_object * count + count
    nodes = min(2.0 * references, 2.0 ** (max_depth + 1))
    return nodes * node_bytes + references * reference_bytes + count * OBJECT_BYTES
