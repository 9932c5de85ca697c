"""Built-in octree backend (classic and loose); see :mod:`plugins.octree.index`."""
from __future__ import annotations

from .index import Octree, OctreeParams

__all__ = ["Octree", "OctreeParams", "register"]


def register(registry) -> None:
    """Built-in plugin entry point."""
    registry.add_backend(Octree)
