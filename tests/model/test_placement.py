"""The floor below a point, found by a downward ray through the document's own index."""
from __future__ import annotations

import pytest

from editor.model import Edit, IndexSync, Scene, brush_entity, point_entity
from editor.model.level_geometry import Triangle
from editor.model.placement import floor_below
from editor.model.shapes import box_brush


def _scene(objects) -> tuple[Scene, IndexSync]:
    scene = Scene()
    ids = scene.allocate_ids(len(objects) + 1)
    world = ids[0]
    built = {world: brush_entity("worldspawn")}
    for oid, make in zip(ids[1:], objects):
        built[oid] = make(world)
    scene.apply(Edit(objects=built))
    return scene, IndexSync(scene, backend="octree")


def _box(lo, hi):
    return lambda world: box_brush(world, lo, hi)


def test_the_enclosed_floor_wins_over_the_roof():
    scene, sync = _scene([_box((0, 0, -16), (256, 256, 0)),      # floor
                          _box((0, 0, 128), (256, 256, 144)),    # roof
                          _box((0, 0, 300), (64, 64, 310))])     # a beam high above one corner
    assert floor_below(scene, sync.index, 128, 128, clearance=56) == pytest.approx(0.0)
    # under the beam the roof top is enclosed too, and comes first
    assert floor_below(scene, sync.index, 32, 32, clearance=56) == pytest.approx(144.0)


def test_a_gap_lower_than_the_clearance_is_passed_over():
    scene, sync = _scene([_box((0, 0, 40), (256, 256, 56)),      # a crawlspace's ceiling
                          _box((0, 0, -16), (256, 256, 0)),      # its floor, 40 below
                          _box((0, 0, -216), (256, 256, -200))])  # the cellar floor
    assert floor_below(scene, sync.index, 128, 128, clearance=32) == pytest.approx(0.0)
    assert floor_below(scene, sync.index, 128, 128, clearance=56) == pytest.approx(-200.0)


def test_open_air_takes_the_first_surface_and_nothing_gives_none():
    scene, sync = _scene([_box((0, 0, -16), (256, 256, 0)),
                          lambda w: point_entity("info_player_start", (128, 128, 24))])
    assert floor_below(scene, sync.index, 10, 10) == pytest.approx(0.0)
    assert floor_below(scene, sync.index, 1000, 1000) is None, "off the level"
    assert floor_below(scene, sync.index, 128, 128) == pytest.approx(0.0), "entities are not floors"


def test_mesh_floors_are_their_level_triangles():
    scene, sync = _scene([lambda w: Triangle((0, 0, 8), (100, 0, 8), (0, 100, 8)),
                          lambda w: Triangle((0, 0, 200), (100, 0, 200), (0, 100, 200)),
                          lambda w: Triangle((0, 0, 0), (0, 100, 0), (0, 0, 300))])  # a wall
    assert floor_below(scene, sync.index, 10, 10, clearance=56) == pytest.approx(8.0)
