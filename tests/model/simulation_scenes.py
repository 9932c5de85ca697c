"""Small scenes and a scripted behaviour for the simulation tests."""
from __future__ import annotations

import numpy as np

from editor.model import AddObjects, Scene, UndoStack, brush_entity, point_entity
from editor.model.motion import Behaviour
from editor.model.shapes import box_brush


class Scripted(Behaviour):
    """Puts each body exactly where ``script(entity_id, frame)`` says (a test's own motion).

    The script is given per entity by the test through :func:`scripted_registry`.
    """

    name = "script"
    description = "test motion: positions from a function of the frame"
    scripts: dict = {}

    def __init__(self, rows, entries, world):
        super().__init__(rows, entries, world)
        self.entity_ids = [e.entity_id for e in entries]

    def steer(self, ctx):
        b = ctx.bodies
        for row in ctx.rows:
            eid = self.entity_ids[int(self.position(np.array([row]))[0])]
            target = np.asarray(self.scripts[eid](ctx.frame), dtype=float)
            b.velocity[row] = (target - b.center[row]) / ctx.dt


def scripted_registry(scripts: dict):
    """A registry with the real backends and motions plus the ``script`` behaviour."""
    from spatial.registry import Registry

    registry = Registry()
    registry.load_builtins()
    behaviour = type("ScriptedForTest", (Scripted,), {"scripts": dict(scripts)})
    registry.add_motion("script", behaviour, behaviour.description)
    return registry


def scene_with(brushes=(), points=()) -> Scene:
    """A scene with world brushes ``(lo, hi)`` and point entities ``(classname, origin, keys)``.

    Ids: 0 worldspawn, then the brushes, then the point entities, in order.
    """
    scene = Scene()
    objects = {}
    world = scene.allocate_ids(1)[0]
    objects[world] = brush_entity("worldspawn")
    for lo, hi in brushes:
        objects[scene.allocate_ids(1)[0]] = box_brush(world, lo, hi)
    for classname, origin, keys in points:
        objects[scene.allocate_ids(1)[0]] = point_entity(classname, origin, list(keys.items()))
    UndoStack(scene).push(AddObjects(objects))
    return scene


def arena(points=(), half=256.0) -> Scene:
    """A floor and four walls around ``[-half, half]²`` with the given point entities."""
    t = 16.0
    brushes = [((-half, -half, -t), (half, half, 0)),
               ((-half, -half, 0), (-half + t, half, 128)), ((half - t, -half, 0), (half, half, 128)),
               ((-half + t, -half, 0), (half - t, -half + t, 128)),
               ((-half + t, half - t, 0), (half - t, half, 128))]
    return scene_with(brushes, points)
