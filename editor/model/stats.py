"""Scene statistics for reports (the ``scene`` part of ``stats``)."""
from __future__ import annotations

import numpy as np

from .brushes import Brush
from .entities import Entity
from .invalid_brushes import invalid_brushes
from .scene import Scene


def scene_counts(scene: Scene, *, indexed: tuple | None = None) -> dict:
    """Count what the scene holds.

    Parameters
    ----------
    scene : Scene
        The document.
    indexed : (ids, lo, hi), optional
        :meth:`Scene.indexed_ids` and their :meth:`Scene.bounds_of`, when the caller already
        has them (they are the costly part on a big level).

    Returns
    -------
    dict
        ``brushes`` every brush; ``entities`` every entity (worldspawn and brush entities
        included); ``brush_entities`` the entities owning at least one brush; ``faces`` every
        brush face as written; ``objects`` what the spatial index holds (each brush and each
        point entity); ``invalid_brushes`` the brushes bounding no solid, kept as written
        and not indexed (:mod:`.invalid_brushes`); ``bounds`` ``[[x, y, z], [x, y, z]]`` of
        those objects (zeros if none).
    """
    brushes = entities = faces = 0
    owners = set()
    # one pass over brushes and entities (a level holds thousands), none over mesh triangles
    for obj in scene.loose_objects():
        if isinstance(obj, Brush):
            brushes += 1
            faces += len(obj.faces)
            owners.add(obj.entity)
        elif isinstance(obj, Entity):
            entities += 1
    if indexed is None:
        ids = scene.indexed_ids()
        lo, hi = scene.bounds_of(ids)
    else:
        ids, lo, hi = indexed
    if len(ids):
        lo, hi = lo.min(axis=0), hi.max(axis=0)
    else:
        lo = hi = np.zeros(3)
    return {
        "brushes": brushes,
        "entities": entities,
        # a brush's owner is always an entity of the scene (Scene.apply checks it)
        "brush_entities": len(owners),
        "faces": faces,
        "objects": int(len(ids)),
        "invalid_brushes": len(invalid_brushes(scene)),
        "bounds": [[float(v) + 0.0 for v in lo], [float(v) + 0.0 for v in hi]],
    }
