"""Which nodes an edit created, split, merged or removed: two node tables compared.

A node is known by its depth and its box (the node tables of every backend list rows parents
first, but row numbers shift when a tree grows; the box and depth do not for an untouched
node). Between the table before an edit and the one after:

* **created**: nodes of the new table whose depth and box the old one did not have;
* **removed**: nodes of the old table the new one no longer has;
* **split**: nodes in both, a leaf before and an inner node after;
* **merged**: nodes in both, an inner node before and a leaf after.

A refit that grows a box shows as that node removed and a new one created, which is what
happened to the box a query tests.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spatial.contract import NodeTable

#: box coordinates are compared at this many decimals (a refit by 1e-12 is no change)
_DECIMALS = 6


def _keys(table: NodeTable) -> np.ndarray:
    """One structured key per row: depth and rounded box."""
    rows = np.column_stack([table.depth.astype(np.float64), np.round(table.lo, _DECIMALS),
                            np.round(table.hi, _DECIMALS)]) + 0.0  # no -0.0
    return np.ascontiguousarray(rows).view(np.dtype((np.void, rows.dtype.itemsize * 7))).ravel()


def _empty() -> np.ndarray:
    return np.empty(0, dtype=np.int64)


@dataclass
class TreeDiff:
    """Rows of the new table (``created``, ``split``, ``merged``) and of the old (``removed``)."""

    created: np.ndarray = field(default_factory=_empty)
    split: np.ndarray = field(default_factory=_empty)
    merged: np.ndarray = field(default_factory=_empty)
    removed: np.ndarray = field(default_factory=_empty)

    @property
    def empty(self) -> bool:
        return not (len(self.created) or len(self.split) or len(self.merged) or len(self.removed))

    def counts(self) -> dict[str, int]:
        return {"created": len(self.created), "split": len(self.split),
                "merged": len(self.merged), "removed": len(self.removed)}

    def summary(self) -> str:
        """``tree: 3 created, 1 split, 2 removed`` (kinds with none left out), or
        ``tree unchanged``."""
        parts = [f"{n} {kind}" for kind, n in self.counts().items() if n]
        return "tree: " + ", ".join(parts) if parts else "tree unchanged"


def tree_diff(old: NodeTable, new: NodeTable) -> TreeDiff:
    """Compare the node table before an edit with the one after (see the module docstring)."""
    old_keys, new_keys = _keys(old), _keys(new)
    in_old = np.isin(new_keys, old_keys)
    in_new = np.isin(old_keys, new_keys)
    # for nodes in both, their leaf flag before, looked up by key
    order = np.argsort(old_keys, kind="stable")
    kept = np.flatnonzero(in_old)
    where = order[np.searchsorted(old_keys[order], new_keys[kept])]
    was_leaf = old.is_leaf[where]
    is_leaf = new.is_leaf[kept]
    return TreeDiff(created=np.flatnonzero(~in_old), split=kept[was_leaf & ~is_leaf],
                    merged=kept[~was_leaf & is_leaf], removed=np.flatnonzero(~in_new))
