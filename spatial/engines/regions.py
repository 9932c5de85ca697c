"""Region grids shared by the PhysX MBP and Unity profiles: subdivisions to a cell size."""
from __future__ import annotations

from .profile import LevelFrame


def region_cell(frame: LevelFrame, subdivisions: int) -> float:
    """Edge (level units) of one of ``subdivisions`` x ``subdivisions`` regions over the ground
    plane of ``frame``. Our grid's cells are cubes, so the up axis is cut at the same size: the
    model's approximation of the engines' columns."""
    return frame.horizontal_extent / max(int(subdivisions), 1)
