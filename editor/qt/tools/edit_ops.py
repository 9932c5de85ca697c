"""Edits that are not gestures: delete, duplicate, nudge, select; each one command."""
from __future__ import annotations

import numpy as np

from editor.model import AddObjects, Brush, Entity, RemoveObjects, SetSelection, Transform, brush_entity
from editor.model.scene import SceneEditError

from ..scene_geometry import selection_bounds


def combine_selection(current: frozenset, picked, modifiers_add: bool, modifiers_toggle: bool) -> frozenset:
    """The new selection after picking ``picked`` ids with Shift (add) or Ctrl (toggle)."""
    picked = frozenset(picked)
    if modifiers_toggle:
        return current ^ picked
    if modifiers_add:
        return current | picked
    return picked


def select(document, ids, text: str = "Select") -> bool:
    return document.push(SetSelection(ids, text=text))


def delete_selection(document) -> bool:
    ids = [i for i in document.selection if i in document.scene]
    if not ids:
        return False
    return document.push(RemoveObjects(ids, text=f"Delete {len(ids)} object{'s' * (len(ids) != 1)}"))


def duplicate_selection(document, offset) -> bool:
    """Copy the selected objects (a brush entity with its brushes), moved by ``offset``; the
    copies become the selection."""
    scene = document.scene
    offset = np.asarray(offset, dtype=np.float64)
    sel = sorted(i for i in document.selection if i in scene)
    if not sel:
        return False
    new: dict = {}
    for oid in sel:
        obj = scene[oid]
        if isinstance(obj, Entity) and not obj.is_point:
            if obj.classname == "worldspawn":
                continue
            eid = scene.allocate_ids(1)[0]
            new[eid] = obj
            for bid in scene.brushes_of(oid):
                new[scene.allocate_ids(1)[0]] = scene[bid].with_entity(eid).translated(offset)
        elif isinstance(obj, Entity):
            new[scene.allocate_ids(1)[0]] = obj.translated(offset)
        elif isinstance(obj, Brush):
            if any(isinstance(scene.get(s), Entity) and s == obj.entity for s in sel):
                continue  # copied with its entity
            new[scene.allocate_ids(1)[0]] = obj.translated(offset)
    if not new:
        return False
    return document.push(AddObjects(new, text="Duplicate", select=True))


def next_grid_line(value: float, direction: int, grid: float) -> float:
    """The first grid line strictly beyond ``value`` in ``direction`` (+1 or -1)."""
    if direction > 0:
        return (np.floor(value / grid + 1e-9) + 1) * grid
    return (np.ceil(value / grid - 1e-9) - 1) * grid


def nudge_selection(document, unit_delta, grid: float, snap: bool) -> bool:
    """Move the selection one grid step along ``unit_delta`` (one axis, +-1).

    With snapping on, the selection's low corner lands on the next grid line, so a
    selection off the grid snaps onto it with its first step.
    """
    scene = document.scene
    b = selection_bounds(scene, document.selection)
    if b is None:
        return False
    lo = b[0]
    delta = np.zeros(3)
    for axis in range(3):
        step = int(np.sign(unit_delta[axis]))
        if step:
            delta[axis] = (next_grid_line(lo[axis], step, grid) - lo[axis]) if snap else step * grid
    try:
        return document.push(Transform(sorted(document.selection), delta=delta, text="Move"))
    except SceneEditError:
        return False


def ensure_worldspawn(document, new: dict) -> int:
    """Id of the worldspawn entity; adds one to ``new`` when the scene has none."""
    wid = document.scene.worldspawn_id()
    if wid is None:
        wid = document.scene.allocate_ids(1)[0]
        new[wid] = brush_entity("worldspawn")
    return wid
