"""Keeping a big tree readable: a focused subtree, and a depth limit that bounds what is drawn.

Qt-free numpy over a :class:`~spatial.contract.NodeTable` (rows parents first):

* :func:`subtree_mask` marks a node and everything below it (the focus; the rest is dimmed);
* :func:`auto_depth_limit` is the deepest level down to which at most ``budget`` nodes are
  drawn, so a tree of thousands of nodes shows its coarse shape instead of burying the level.
"""
from __future__ import annotations

import numpy as np

#: nodes a view draws before the automatic depth limit sets in
READABLE_NODES = 1500


def subtree_mask(parent: np.ndarray, root: int) -> np.ndarray:
    """``(N,)`` bool: ``root`` and its descendants (rows list parents before children)."""
    n = len(parent)
    mask = np.zeros(n, dtype=bool)
    if not 0 <= root < n:
        return mask
    mask[root] = True
    # one pass suffices: a child's row comes after its parent's
    for row in range(root + 1, n):
        up = parent[row]
        if up >= 0 and mask[up]:
            mask[row] = True
    return mask


def auto_depth_limit(depth: np.ndarray, budget: int = READABLE_NODES) -> int | None:
    """The deepest level ``d`` such that the nodes of depth ``<= d`` number at most ``budget``
    (at least the root's level); None when the whole tree fits."""
    if len(depth) <= budget:
        return None
    counts = np.cumsum(np.bincount(np.asarray(depth, dtype=np.int64)))
    fits = np.flatnonzero(counts <= budget)
    return int(fits[-1]) if len(fits) else 0


def dim_outside_focus(table, rows: np.ndarray, focus: int, colours: np.ndarray,
                      bins: np.ndarray) -> np.ndarray | None:
    """Dim the drawn ``rows`` outside node ``focus``'s subtree, in place: ``colours``
    (RGBA per drawn row) darker and translucent, ``bins`` (2D colour bins) the lowest.

    Returns the mask of drawn rows inside the focus, or None when nothing is focused.
    """
    if not 0 <= focus < len(table):
        return None
    focused = subtree_mask(table.parent, focus)[rows]
    colours[~focused, :3] *= 0.3
    colours[~focused, 3] *= 0.35
    bins[~focused] = 0
    return focused
