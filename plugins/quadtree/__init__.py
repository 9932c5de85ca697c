"""Built-in quadtree backend (2D buckets on a chosen plane); see :mod:`plugins.quadtree.index`."""
from __future__ import annotations

from .index import Quadtree, QuadtreeParams, register

__all__ = ['Quadtree', 'QuadtreeParams', "register"]
