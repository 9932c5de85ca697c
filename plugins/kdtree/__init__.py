"""Built-in kd-tree backend (SAH or median splits); see :mod:`plugins.kdtree.index`."""
from __future__ import annotations

from .index import KdParams, KdTree, register

__all__ = ["KdParams", "KdTree", "register"]
