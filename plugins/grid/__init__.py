"""Built-in grid backend (uniform cells or a spatial hash); see :mod:`plugins.grid.index`."""
from __future__ import annotations

from .index import Grid, GridParams, register

__all__ = ["Grid", "GridParams", "register"]
