"""A live session's boxes as a level (Qt-free): what *Save as level* writes.

:func:`boxes_level` turns the static boxes of a stream's header and the movers of one frame
into a :class:`~editor.model.scene.Scene` that every level writer and the loader take: each
box becomes an axis-aligned box brush (exact bounds) owned by a brush entity of its own,
``func_wall`` (a plain brush entity every Quake-family tool knows), with the keys

* ``targetname``: the name the game sent for the object (``meta.names``), when it sent one;
* ``_ps_live_id``: the object's id in the stream;
* ``_ps_live_role``: ``static`` or ``moving`` (a mover is saved where the frame had it).

A mover becomes a brush, not a point entity, because a point entity's box comes from its class
(``entity_classes.class_box``), so its own size would not survive the round trip; in the saved
level every box is static. A flat box (a plane, zero thickness on an axis) cannot be a brush:
it is thickened to :data:`MIN_THICKNESS` about its middle on that axis. The worldspawn's
``message`` says where the boxes came from.
"""
from __future__ import annotations

import numpy as np

from ..entities import brush_entity
from ..scene import Edit, Scene, Settings
from ..shapes import box_brush

#: the least size of a saved box on any axis (units): a brush must enclose a volume
MIN_THICKNESS = 1.0 / 64.0
#: the brush entity class each box is saved as
BOX_CLASS = "func_wall"


def _solid(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """``lo``/``hi`` with every axis at least :data:`MIN_THICKNESS` wide (about its middle)."""
    lo, hi = np.array(lo, dtype=np.float64), np.array(hi, dtype=np.float64)
    thin = hi - lo < MIN_THICKNESS
    middle = (lo + hi) / 2
    lo[thin], hi[thin] = middle[thin] - MIN_THICKNESS / 2, middle[thin] + MIN_THICKNESS / 2
    return lo, hi


def boxes_level(static: tuple, moving: tuple, names: dict[int, str], message: str = "",
                settings: Settings | None = None) -> Scene:
    """The level of the boxes (see the module docstring).

    Parameters
    ----------
    static, moving : tuple of (ids, lo, hi)
        ``(n,)`` ids and ``(n, 3)`` bounds each: the header's static objects and one frame's movers.
    names : dict
        Object id -> the name the game sent.
    message : str
        The worldspawn's ``message`` (where the boxes came from).
    settings : Settings, optional
        Backend and parameters to save with the level (the editor's current ones).
    """
    scene = Scene()
    objects: dict = {}
    world_props = [("message", message)] if message else []
    objects[scene.allocate_ids(1)[0]] = brush_entity("worldspawn", world_props)
    for role, (ids, lo, hi) in (("static", static), ("moving", moving)):
        for oid, box_lo, box_hi in zip(np.asarray(ids).tolist(), np.asarray(lo), np.asarray(hi)):
            keys = [("targetname", names[oid])] if oid in names else []
            keys += [("_ps_live_id", str(oid)), ("_ps_live_role", role)]
            entity, brush = scene.allocate_ids(2)
            objects[entity] = brush_entity(BOX_CLASS, keys)
            objects[brush] = box_brush(entity, *_solid(box_lo, box_hi))
    scene.apply(Edit(objects, settings=settings))
    return scene
