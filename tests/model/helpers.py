"""Small scenes for the model tests."""
from __future__ import annotations

import numpy as np

from editor.model import AddObjects, Scene, UndoStack, brush_entity, point_entity
from editor.model.shapes import box_brush, prism_brush, ramp_brush


def private_registry():
    """A private registry: the oracle plus a tunable copy of it (stable, unlike real backends)."""
    from plugins.brute import BruteForce
    from spatial.params import param
    from spatial.registry import Registry
    from tests.spatial.tuning_helpers import one_param

    class TunedBrute(BruteForce):
        name = "tuned-brute"
        Params = one_param("TunedParams", "chunk", param(256, lo=1, hi=4096, unit="objects",
                                                          help="A parameter to change."))

        def _split_planes_changed(self):
            self.planes_offered = getattr(self, "planes_offered", 0) + 1

    registry = Registry()
    registry.add_backend(BruteForce)
    registry.add_backend(TunedBrute)
    return registry


def small_scene():
    """A world with three brushes, a func_door with one brush and two point entities.

    Returns ``(scene, stack, ids)`` with ``ids`` a dict of names to ids; the stack is clean.
    """
    scene = Scene()
    stack = UndoStack(scene)
    names = ["world", "floor", "ramp", "pillar", "door", "door_brush", "player", "ogre"]
    ids = dict(zip(names, scene.allocate_ids(len(names))))
    world, door = ids["world"], ids["door"]
    stack.push(AddObjects({
        world: brush_entity("worldspawn", [("wad", "base.wad")]),
        ids["floor"]: box_brush(world, (-256, -256, -16), (256, 256, 0), "floor"),
        ids["ramp"]: ramp_brush(world, (0, 0, 0), (128, 64, 64), 0, "ramp"),
        ids["pillar"]: prism_brush(world, (-128, 128), 24, (0, 128), sides=5, angle_deg=7),
        door: brush_entity("func_door", [("angle", "90")]),
        ids["door_brush"]: box_brush(door, (-32, -256, 0), (32, -240, 96), "door", valve=True),
        ids["player"]: point_entity("info_player_start", (0, -128, 24), [("angle", "90")]),
        ids["ogre"]: point_entity("monster_ogre", (96, 96, 24)),
    }))
    stack.clear()
    return scene, stack, ids


def fresh_index_view(scene, like):
    """``(ids, lo, hi, pairs)`` of an index like ``like`` (class, params) built from scratch."""
    index = type(like)(like.params)
    ids = scene.indexed_ids()
    lo, hi = scene.bounds_of(ids)
    index.build(ids, lo, hi)
    return index_view(index)


def index_view(index):
    """``(ids, lo, hi, pairs)`` of what an index holds, ids ascending."""
    obj = index.objects
    slots = obj.alive_slots()
    order = np.argsort(obj.ids[slots])
    slots = slots[order]
    return (obj.ids[slots].copy(), obj.lo[slots].copy(), obj.hi[slots].copy(),
            index.pairs("all").pairs)


def assert_index_matches(sync):
    """The live index is valid and equals a fresh build of the scene."""
    sync.index.validate()
    live = index_view(sync.index)
    fresh = fresh_index_view(sync.scene, sync.index)
    for a, b in zip(live, fresh):
        np.testing.assert_array_equal(a, b)
    # brushes static, point entities dynamic
    obj = sync.index.objects
    for oid in sync.scene.indexed_ids():
        slot = obj.slots_of([oid])[0]
        assert bool(obj.dynamic[slot]) == sync.scene[int(oid)].__class__.__name__.startswith("Entity")
