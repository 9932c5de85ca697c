"""What a click picks: the objects a ray from the viewer meets, nearest first.

The index answers for boxes; a brush is then tested exactly against its face planes
(:func:`editor.model.placement.ray_convex_entry`, numpy), so a click beside a slanted brush
inside its box does not pick it. The boxes come from the index's compiled ``query_ray``, or,
while the editor's query kernels are not loaded yet (a first start compiles them in another
process), from :func:`spatial.table_queries.table_query_ray`: the same answer from the
index's object table in numpy, with no compiled kernel to wait for.
"""
from __future__ import annotations

import numpy as np

from spatial.contract import SpatialIndex
from spatial.table_queries import table_query_box, table_query_ray

from .brushes import Brush
from .placement import ray_convex_entry
from .scene import Scene


def box_hits(index: SpatialIndex, origin, direction, compiled: bool = True
             ) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, t)`` of the boxes the ray meets, nearest first: through the index's kernels
    (``compiled``) or its object table in numpy (the same answer, no kernel called)."""
    if compiled:
        result = index.query_ray(origin, direction)
        return result.ids, result.t
    return table_query_ray(index, origin, direction)


def pick_ray(scene: Scene, index: SpatialIndex, origin, direction,
             compiled: bool = True) -> list[int]:
    """Ids of the objects the ray ``origin + t * direction`` meets, nearest first: boxes from
    :func:`box_hits`, a brush refined on its face planes (a box hit that misses the solid is
    dropped, and the solid's entry distance orders it)."""
    origin = np.asarray(origin, dtype=np.float64)
    direction = np.asarray(direction, dtype=np.float64)
    ids, ts = box_hits(index, origin, direction, compiled)
    hits = []
    for oid, t_box in zip(ids.tolist(), ts.tolist()):
        obj = scene.get(oid)
        if isinstance(obj, Brush):
            t = ray_convex_entry(origin, direction, *obj.planes())
            if t is None:
                continue
            hits.append((t, oid))
        else:
            hits.append((t_box, oid))
    hits.sort()
    return [oid for _, oid in hits]


def box_touching(index: SpatialIndex, lo, hi, compiled: bool = True) -> np.ndarray:
    """Ids of the objects whose boxes touch the box ``lo``..``hi`` (a box selection's
    candidates), ascending: through the index's kernels or its object table in numpy."""
    if compiled:
        return index.query_box(lo, hi).ids
    return table_query_box(index, lo, hi)
