"""Measure a Blender scene as the boxes Partition Studio indexes (needs Blender's numpy, no UI).

Every mesh object the depsgraph evaluates (modifiers, shape keys, armatures and animation
applied) is one axis-aligned box: the world-space bounds of its evaluated vertices through
``matrix_world``, exact, in metres. An object is *static* when it sits in the collection named
``Static`` or in any collection inside it, or carries the custom property ``ps_static`` set to
a true value; every other mesh object is *moving* and sent each frame.
"""
from __future__ import annotations

import numpy as np

from .scene_stream import Box, Snapshot

#: objects in this collection (or one inside it) are static
STATIC_COLLECTION = "Static"
#: an object with this custom property set true is static wherever it is
STATIC_PROPERTY = "ps_static"


def static_collections(collections) -> set[str]:
    """Names of the collection ``Static`` and of every collection inside it (``bpy.data.collections``)."""
    root = collections.get(STATIC_COLLECTION)
    if root is None:
        return set()
    return {root.name_full, *(child.name_full for child in root.children_recursive)}


def is_static(obj, static_names: set[str]) -> bool:
    """True for an object of a static collection or with ``ps_static`` set (``obj`` may be
    the evaluated copy: its original carries the property and the collections)."""
    original = obj.original
    if bool(original.get(STATIC_PROPERTY, False)):
        return True
    return any(c.name_full in static_names for c in original.users_collection)


def world_bounds(obj_eval) -> Box | None:
    """World-space bounds of the evaluated mesh's vertices, or ``None`` for an empty mesh."""
    mesh = obj_eval.to_mesh()
    try:
        count = len(mesh.vertices)
        if count == 0:
            return None
        co = np.empty(count * 3, dtype=np.float32)  # the vertices' own type: one bulk copy
        mesh.vertices.foreach_get("co", co)
    finally:
        obj_eval.to_mesh_clear()
    matrix = np.array(obj_eval.matrix_world, dtype=np.float64)
    world = co.reshape(count, 3).astype(np.float64) @ matrix[:3, :3].T + matrix[:3, 3]
    lo, hi = world.min(axis=0), world.max(axis=0)
    return (float(lo[0]), float(lo[1]), float(lo[2]), float(hi[0]), float(hi[1]), float(hi[2]))


def measure(depsgraph, collections, with_static: bool = True) -> Snapshot:
    """The scene of ``depsgraph`` as a :class:`Snapshot`: the moving boxes always, the static
    ones only ``with_static`` (they go in the header; a frame needs only their names)."""
    static_names_in = static_collections(collections)
    moving: list[tuple[str, Box]] = []
    static: list[tuple[str, Box]] = []
    static_names = set()
    for obj in depsgraph.objects:
        if obj.type != "MESH":
            continue
        name = obj.name_full
        if is_static(obj, static_names_in):
            static_names.add(name)
            if not with_static:
                continue
            box = world_bounds(obj)
            if box is not None:
                static.append((name, box))
        else:
            box = world_bounds(obj)
            if box is not None:
                moving.append((name, box))
    return Snapshot(int(depsgraph.scene.frame_current), moving, static if with_static else None,
                    frozenset(static_names))
