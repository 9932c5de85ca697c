"""Built-in triangle octree (triangles in every leaf they truly meet); see
:mod:`plugins.triangle_octree.index`."""
from __future__ import annotations

from .index import TriangleOctree, TriangleOctreeParams, register

__all__ = ['TriangleOctree', 'TriangleOctreeParams', "register"]
