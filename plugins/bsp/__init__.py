"""Built-in BSP backend (split planes from the level's own geometry); see :mod:`plugins.bsp.index`."""
from __future__ import annotations

from .index import BSPParams, BSPTree, register

__all__ = ['BSPParams', 'BSPTree', "register"]
