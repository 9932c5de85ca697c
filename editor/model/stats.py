"""Scene statistics for reports (the ``scene`` part of ``stats``)."""
from __future__ import annotations

from .scene import Scene


def scene_counts(scene: Scene) -> dict:
    """Count what the scene holds.

    Returns
    -------
    dict
        ``brushes`` every brush; ``entities`` every entity (worldspawn and brush entities
        included); ``brush_entities`` the entities owning at least one brush; ``faces`` every
        brush face as written; ``objects`` what the spatial index holds (each brush and each
        point entity); ``bounds`` ``[[x, y, z], [x, y, z]]`` of those objects (zeros if none).
    """
    brush_ids = scene.brush_ids()
    entity_ids = scene.entity_ids()
    lo, hi = scene.bounds()
    return {
        "brushes": len(brush_ids),
        "entities": len(entity_ids),
        "brush_entities": sum(1 for e in entity_ids if scene.brushes_of(e)),
        "faces": sum(len(scene[b].faces) for b in brush_ids),
        "objects": int(len(scene.indexed_ids())),
        "bounds": [[float(v) + 0.0 for v in lo], [float(v) + 0.0 for v in hi]],
    }
