"""Brush face planes offered to a spatial index as split candidates.

A geometry-driven backend (a BSP) chooses its splits among the planes of the level's brush
faces. :func:`scene_split_planes` gathers them once per plane (a plane and its flip split
space the same way), and each brush caches its own rows so an edit recomputes only the brushes
it touched. Both the index record (:mod:`.index_input`) and the live index
(:mod:`.index_sync`) read them from here.
"""
from __future__ import annotations

import numpy as np

from .brushes import Brush
from .scene import Scene

#: planes closer than this (in normal components and distance) are offered once
_PLANE_DECIMALS = 9


def brush_split_rows(brush: Brush) -> np.ndarray:
    """A brush's face planes as canonical ``(F, 4)`` rows (see :func:`scene_split_planes`).

    Cached on the brush value, so an edit only computes the rows of the brushes it touched.
    """
    rows = brush._cache.get("split_rows")
    if rows is None:
        rows = _canonical_rows(*brush.planes())
        brush._cache["split_rows"] = rows
    return rows


def _canonical_rows(normals: np.ndarray, dists: np.ndarray) -> np.ndarray:
    rows = np.round(np.column_stack([normals, -dists]), _PLANE_DECIMALS) + 0.0  # no -0.0
    first = np.argmax(rows[:, :3] != 0, axis=1)
    flip = rows[np.arange(len(rows)), first] < 0
    rows[flip] = -rows[flip] + 0.0
    return rows


def _cache_split_rows(brushes: list[Brush]) -> None:
    """Compute and cache the split rows of many brushes in one vectorised pass (a loaded level)."""
    if not brushes:
        return
    planes = [b.planes() for b in brushes]
    counts = [len(d) for _, d in planes]
    rows = _canonical_rows(np.concatenate([n for n, _ in planes]),
                           np.concatenate([d for _, d in planes]))
    for brush, part in zip(brushes, np.split(rows, np.cumsum(counts)[:-1])):
        brush._cache["split_rows"] = part


def scene_split_planes(scene: Scene) -> np.ndarray:
    """Unique face planes of every brush as ``(K, 4)`` rows ``(nx, ny, nz, d)``, ``n.p + d = 0``.

    A plane and its flip split space the same way, so each is offered once, oriented with the
    first non-zero normal component positive (two brushes sharing a wall give one candidate).
    Rows are sorted, so the same scene always offers the same planes in the same order.
    """
    brushes = [scene.brush(oid) for oid in scene.brush_ids()]
    _cache_split_rows([b for b in brushes if "split_rows" not in b._cache])
    rows = [b._cache["split_rows"] for b in brushes]
    if not rows:
        return np.empty((0, 4))
    planes = np.concatenate(rows)
    order = np.lexsort(planes.T[::-1])  # sort by nx, then ny, nz, d
    planes = planes[order]
    keep = np.ones(len(planes), dtype=bool)
    keep[1:] = np.any(planes[1:] != planes[:-1], axis=1)
    return planes[keep]
