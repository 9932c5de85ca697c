"""A ray and a box query answered from a backend's object table alone, in numpy.

Every backend keeps its objects' boxes in the shared :class:`~spatial.objects.ObjectTable`,
and every backend's ``query_ray`` and ``query_box`` give exactly the answer of the brute-force
oracle's predicates over that table (the oracle suite checks it). These functions compute that
answer with the same predicates (:func:`spatial.geometry.ray_box`,
:func:`spatial.geometry.boxes_overlap`) straight on the table: no tree and no compiled kernel.

They exist for a process whose query kernels are not loaded yet (a first start compiles them
for seconds elsewhere, see ``editor.warmup``): picking a brush with a click must not wait for
them, and must not call a kernel that would compile on the caller's thread. They test every
object, so an index's own query is the faster one once its kernels are loaded.
"""
from __future__ import annotations

import math

import numpy as np

from .contract import SpatialIndex
from .errors import GeometryError
from .geometry import boxes_overlap, ray_box


def table_query_ray(index: SpatialIndex, origin, direction,
                    max_t: float = math.inf) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, t)`` of every object of ``index`` whose box the ray ``origin + t * direction``
    (``0 <= t <= max_t``) meets, nearest first (ties by id): the ids and order of
    ``index.query_ray(origin, direction, max_t)``."""
    origin = np.asarray(origin, dtype=np.float64).reshape(3)
    direction = np.asarray(direction, dtype=np.float64).reshape(3)
    if not direction.any():
        raise GeometryError("ray direction must not be zero")
    table = index.objects
    slots = table.alive_slots()
    hit, t = ray_box(origin, direction, table.lo[slots], table.hi[slots])
    hit &= t <= max_t
    ids, t = table.ids[slots[hit]], t[hit]
    order = np.lexsort((ids, t))
    return ids[order], t[order]


def table_query_box(index: SpatialIndex, lo, hi) -> np.ndarray:
    """Ids of every object of ``index`` whose box touches the closed box ``lo``..``hi``,
    ascending: the answer of ``index.query_box(lo, hi).ids``."""
    table = index.objects
    slots = table.alive_slots()
    lo = np.asarray(lo, dtype=np.float64).reshape(3)
    hi = np.asarray(hi, dtype=np.float64).reshape(3)
    mask = boxes_overlap(table.lo[slots], table.hi[slots], lo, hi)
    return np.sort(table.ids[slots[mask]])
