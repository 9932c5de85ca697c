"""Built-in dynamic AABB tree backend (Box2D style); see :mod:`plugins.bvh.index`."""
from __future__ import annotations

from .index import BvhParams, DynamicBvh, register

__all__ = ["BvhParams", "DynamicBvh", "register"]
