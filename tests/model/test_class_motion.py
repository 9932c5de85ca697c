"""Level entities move as their class does: the table, the key merging and the wander behaviour."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model import point_entity
from editor.model.class_motion import (
    DOOM_MONSTERS,
    QUAKE_MONSTERS,
    class_default,
    family,
    motion_keys,
)
from editor.model.entities import Entity
from editor.model.simulation import Simulation, SimulationConfig

from .simulation_scenes import arena, scene_with

ANIMATE = SimulationConfig(class_motion=True, record=False, inspect_nodes=False)


def doom_thing(classname: str, origin=(0, 0, 0), **keys) -> Entity:
    return point_entity(classname, origin, [("doomednum", "1"), *keys.items()])


# ---------------------------------------------------------------------- the table
def test_monsters_wander_shooters_fire_and_everything_else_stays_still():
    grunt = class_default(point_entity("monster_army", (0, 0, 0)))
    assert grunt["_ps_motion"] == "wander" and float(grunt["_ps_fire_period"]) > 0
    assert "_ps_fire_period" not in class_default(point_entity("monster_dog", (0, 0, 0)))
    imp = class_default(doom_thing("monster_imp"))
    assert imp["_ps_motion"] == "wander" and float(imp["_ps_projectile_speed"]) == 350
    assert "_ps_fire_period" not in class_default(doom_thing("monster_demon"))
    for still in ("light", "item_health", "weapon_nailgun", "info_player_start", "path_corner"):
        assert class_default(point_entity(still, (0, 0, 0))) is None, still
    assert class_default(doom_thing("decoration_barrel")) is None
    assert class_default(doom_thing("monster_boss_brain")) is None
    mod_monster = class_default(point_entity("monster_from_a_mod", (0, 0, 0)))
    assert mod_monster["_ps_motion"] == "wander" and "_ps_fire_period" not in mod_monster


def test_the_same_class_name_follows_its_game():
    quake, doom = point_entity("monster_hell_knight", (0, 0, 0)), doom_thing("monster_hell_knight")
    assert class_default(quake) == QUAKE_MONSTERS["monster_hell_knight"]
    assert class_default(doom) == DOOM_MONSTERS["monster_hell_knight"]
    assert family(quake).startswith("Quake monster") and family(doom).startswith("Doom monster")
    assert family(point_entity("light", (0, 0, 0))) == "static"


def test_every_doom_monster_thing_has_a_class_motion():
    from plugins.doom_wad.things import THING_CLASSES

    monsters = {name for name in THING_CLASSES.values() if name.startswith("monster_")}
    assert monsters - set(DOOM_MONSTERS) == set()


def test_a_trap_shooter_fires_along_its_angle_every_wait_seconds():
    keys = class_default(point_entity("trap_shooter", (0, 0, 0), [("angle", "90"), ("wait", "0.5")]))
    assert keys["_ps_motion"] == "emitter" and float(keys["_ps_rate"]) == 2.0
    np.testing.assert_allclose([float(v) for v in keys["_ps_direction"].split()], [0, 1, 0], atol=1e-6)


# ---------------------------------------------------------------------- explicit keys win
def test_explicit_keys_override_the_class_default_one_by_one():
    ent = point_entity("monster_army", (0, 0, 0), [("_ps_speed", "5")])
    keys = motion_keys(ent, class_motion=True)
    assert keys["_ps_motion"] == "wander" and keys["_ps_speed"] == "5"
    assert keys["_ps_fire_period"] == QUAKE_MONSTERS["monster_army"]["_ps_fire_period"]


def test_another_behaviour_or_none_replaces_the_class_default():
    patrol = point_entity("monster_army", (0, 0, 0), [("_ps_motion", "patrol"), ("_ps_points", "64 0 0")])
    assert "_ps_fire_period" not in motion_keys(patrol, class_motion=True)
    still = point_entity("monster_army", (0, 0, 0), [("_ps_motion", "none")])
    assert motion_keys(still, class_motion=True)["_ps_motion"] == "none"
    cleared = point_entity("monster_army", (0, 0, 0), [("_ps_motion", "")])
    assert motion_keys(cleared, class_motion=True)["_ps_motion"] == "wander"


def test_without_class_motion_only_the_entity_keys_count():
    ent = point_entity("monster_army", (0, 0, 0))
    assert "_ps_motion" not in motion_keys(ent, class_motion=False)


# ---------------------------------------------------------------------- wandering in a room
def two_rooms(points):
    """The 512-unit arena split by a solid wall at x = 0 (no door)."""
    scene = arena(points)
    walls = [((-8, -240, 0), (8, 240, 128))]
    from editor.model import AddObjects, UndoStack
    from editor.model.shapes import box_brush

    world = scene.worldspawn_id()
    objects = {scene.allocate_ids(1)[0]: box_brush(world, lo, hi) for lo, hi in walls}
    UndoStack(scene).push(AddObjects(objects))
    return scene


def run(scene, frames, seed=0, config=ANIMATE):
    sim = Simulation(scene, "octree", seed=seed, config=config)
    track = []
    for _ in range(frames):
        stats = sim.step()
        ids, lo, hi, awake = sim.bodies_bounds()
        track.append((stats, ids, lo, hi, awake))
    return sim, track


def test_a_monster_wanders_inside_its_room_sleeps_and_wakes_again():
    scene = two_rooms([("monster_dog", (-128, 0, 24), {}), ("monster_knight", (128, 64, 24), {})])
    dog, knight = scene.point_entity_ids()
    sim, track = run(scene, 60 * 30)
    for monster, inside in ((dog, lambda lo, hi: hi[0] <= -8), (knight, lambda lo, hi: lo[0] >= 8)):
        rows = [(lo[ids == monster][0], hi[ids == monster][0], awake[ids == monster][0])
                for _, ids, lo, hi, awake in track]
        assert all(inside(lo, hi) for lo, hi, _ in rows), "walked through the wall"
        assert all((lo[:2] >= -240).all() and (hi[:2] <= 240).all() for lo, hi, _ in rows)
        path = np.array([lo for lo, _, _ in rows])
        assert np.ptp(path[:, 0]) > 64 and np.ptp(path[:, 1]) > 64  # it does get around
        moving = np.any(np.diff(path, axis=0) != 0, axis=1)
        stops = np.count_nonzero(moving[:-1] & ~moving[1:])
        assert stops >= 3, "walks and stops take turns"
        awake = np.array([a for _, _, a in rows])
        asleep = np.flatnonzero(~awake)
        assert len(asleep) and awake[asleep[0]:].any(), "never slept, or never woke again"
    assert sim.level.rays_cast > 0


def test_a_monster_keeps_off_a_pit():
    half = 256.0
    floor = ((-half, -half, -16), (0, half, 0))  # the east half has no floor
    walls = [((-half, -half, 0), (-half + 16, half, 128)), ((half - 16, -half, -512), (half, half, 128)),
             ((-half, -half, -512), (half, -half + 16, 128)), ((-half, half - 16, -512), (half, half, 128)),
             ((0, -half, -528), (half, half, -512))]
    scene = scene_with([floor, *walls], [("monster_dog", (-128, 0, 24), {})])
    dog = scene.point_entity_ids()[0]
    _, track = run(scene, 60 * 20)
    centres = np.array([((lo + hi) / 2)[ids == dog][0] for _, ids, lo, hi, _ in track])
    assert centres[:, 0].max() <= 0 and np.ptp(centres[:, 0]) > 32


def test_a_shooter_fires_projectiles_that_despawn_at_the_walls():
    scene = two_rooms([("monster_ogre", (-128, 0, 24), {"_ps_fire_period": "0.5"})])
    _, track = run(scene, 60 * 10)
    spawned = sum(s.spawned for s, *_ in track)
    despawned = sum(s.despawned for s, *_ in track)
    assert spawned >= 10 and despawned >= spawned - 3
    first = scene.next_id
    for _, ids, lo, hi, _ in track:
        shots = ids >= first
        assert (hi[shots, 0] <= -8).all(), "a projectile flew through the dividing wall"
        assert (lo[shots, :2] >= -240).all() and (hi[shots, 1] <= 240).all()


def test_explicit_none_keeps_a_monster_still_and_asleep():
    scene = arena([("monster_dog", (0, 0, 24), {"_ps_motion": "none"})])
    _, track = run(scene, 120)
    assert all(s.moved == 0 for s, *_ in track)
    assert not track[-1][4].any()


def test_without_class_motion_monsters_stand_still():
    scene = arena([("monster_dog", (0, 0, 24), {})])
    _, track = run(scene, 120, config=SimulationConfig(record=False, inspect_nodes=False))
    assert all(s.moved == 0 for s, *_ in track)


def test_wandering_is_deterministic_for_a_seed():
    scene = arena([("monster_army", (-64, 0, 24), {}), ("monster_dog", (64, 64, 24), {})])

    def positions(seed):
        _, track = run(scene, 600, seed=seed)
        return np.concatenate([lo for _, _, lo, _, _ in track])

    a, b, c = positions(3), positions(3), positions(4)
    assert np.array_equal(a, b)
    assert a.shape != c.shape or not np.array_equal(a, c)


def test_seeking_back_replays_the_same_wandering():
    scene = arena([("monster_army", (-64, 0, 24), {}), ("monster_dog", (64, 64, 24), {})])
    sim = Simulation(scene, "octree", seed=1, config=SimulationConfig(class_motion=True))
    sim.step(200)
    expected = sim.bodies_bounds()
    sim.seek(75)
    sim.seek(200)
    for got, want in zip(sim.bodies_bounds(), expected):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("bad", ["fast", "-3"])
def test_a_bad_class_motion_override_names_the_entity_and_key(bad):
    from editor.model.motion import MotionKeyError

    scene = arena([("monster_dog", (0, 0, 24), {"_ps_speed": bad})])
    with pytest.raises(MotionKeyError, match=r"entity \d+ \(monster_dog\): key '_ps_speed'"):
        Simulation(scene, "octree", config=ANIMATE)


# ---------------------------------------------------------------------- the level probe
def probe_of(scene):
    from editor.model.level_probe import LevelProbe

    return LevelProbe(scene)


def test_the_probe_clips_rays_against_the_brush_not_its_box():
    from editor.model import Brush, UndoStack
    from editor.model.shapes import box_brush

    scene = scene_with([((0, 0, 0), (64, 64, 64))])
    world = scene.worldspawn_id()
    wedge = box_brush(world, (0, 0, 0), (64, 64, 64))
    # cut the box diagonally: keep the half with x + y <= 64
    cut = wedge.faces[0].with_points(((0, 64, 0), (64, 0, 0), (0, 64, 64)))
    wedge = Brush(world, wedge.faces + (cut,))
    oid = scene.brush_ids()[0]
    UndoStack(scene).push(_replace(oid, wedge))
    probe = probe_of(scene)
    t = probe.cast([[-10, 10, 32], [-10, 60, 32], [60, 60, -10]], [[1, 0, 0], [1, 0, 0], [0, 0, 1]], 1000)
    assert t[0] == pytest.approx(10)
    assert t[1] == pytest.approx(10)          # x + y <= 64 still holds at x = 0
    assert np.isinf(t[2])                     # inside the box, outside the wedge


def _replace(oid, brush):
    from editor.model.commands import EditCommand
    from editor.model.scene import Edit

    class Replace(EditCommand):
        def plan(self, scene):
            return Edit({oid: brush})

    return Replace()


def test_the_probe_ignores_triggers_and_liquids_but_not_walls():
    from editor.model import AddObjects, UndoStack, brush_entity
    from editor.model.shapes import box_brush

    scene = scene_with([((100, -50, -50), (110, 50, 50))])
    trigger, water, trigger_brush = scene.allocate_ids(3)
    objects = {trigger: brush_entity("trigger_multiple"),
               water: box_brush(scene.worldspawn_id(), (40, -50, -50), (50, 50, 50), texture="*water0"),
               trigger_brush: box_brush(trigger, (20, -50, -50), (30, 50, 50))}
    UndoStack(scene).push(AddObjects(objects))
    assert probe_of(scene).cast([[0, 0, 0]], [[1, 0, 0]], 1000)[0] == pytest.approx(100)


def test_doom_walls_block_by_sides_flags_and_heights():
    from editor.model.level_geometry import Segment
    from editor.model.level_probe import blocking_segments

    room = dict(floor=0.0, ceiling=128.0, front_side=0, front_sector=0)
    door = dict(floor=0.0, ceiling=0.0, front_side=1, front_sector=1)
    ledge = dict(floor=64.0, ceiling=128.0, front_side=2, front_sector=2)
    one_sided = [Segment((0, 0), (0, 8), **room), Segment((0, 0), (0, 8), **door),
                 Segment((0, 0), (0, 8), **ledge)]
    two = dict(floor=0.0, ceiling=128.0, front_side=3, back_side=4)
    lines = [Segment((0, 0), (1, 0), front_sector=0, back_sector=0, **two),
             Segment((0, 0), (1, 0), front_sector=0, back_sector=1, **two),
             Segment((0, 0), (1, 0), front_sector=0, back_sector=2, **two),
             Segment((0, 0), (1, 0), front_sector=0, back_sector=0, properties=[("flags", "1")], **two),
             Segment((0, 0), (1, 0), front_sector=0, back_sector=9, **two)]
    assert blocking_segments(one_sided + lines).tolist() == [True] * 3 + [False, True, True, True, False]


def test_the_probe_hits_walls_in_the_map_plane_and_mesh_triangles():
    from editor.model import AddObjects, Scene, UndoStack
    from editor.model.level_geometry import Segment, Triangle

    scene = Scene()
    a, b = scene.allocate_ids(2)
    UndoStack(scene).push(AddObjects({
        a: Segment((50, -10), (50, 10), floor=0, ceiling=128),
        b: Triangle((80, -10, -10), (80, 10, -10), (80, 0, 20))}))
    probe = probe_of(scene)
    t = probe.cast([[0, 0, 64], [0, 20, 0], [0, 0, 0]], [[1, 0, 0], [1, 0, 0], [-1, 0, 0]], 1000)
    assert t[0] == pytest.approx(50) and np.isinf(t[1]) and np.isinf(t[2])
    assert probe.cast([[60, 0, 0]], [[1, 0, 0]], 1000)[0] == pytest.approx(20)


def test_a_quake_monster_targeting_path_corners_patrols_the_chain():
    from editor.model.class_motion import path_corners

    scene = arena([("monster_army", (-100, 0, 24), {"target": "p1"}),
                   ("path_corner", (100, 0, 0), {"targetname": "p1", "target": "p2"}),
                   ("path_corner", (100, 100, 16), {"targetname": "p2", "target": "p1"}),
                   ("monster_army", (0, -100, 24), {"target": "nowhere"})])
    corners = path_corners(scene)
    patroller, lost = (scene[i] for i in scene.point_entity_ids() if scene[i].classname == "monster_army")
    keys = motion_keys(patroller, class_motion=True, corners=corners)
    assert keys["_ps_motion"] == "patrol" and keys["_ps_points"] == "100 0 24; 100 100 40"
    assert keys["_ps_speed"] == QUAKE_MONSTERS["monster_army"]["_ps_speed"]
    assert motion_keys(lost, class_motion=True, corners=corners)["_ps_motion"] == "wander"
    assert family(patroller, corners).endswith("(patrols its path_corner chain)")
    _, track = run(scene, 240)
    pid = scene.point_entity_ids()[0]
    xs = [((lo + hi) / 2)[ids == pid][0, 0] for _, ids, lo, hi, _ in track]
    assert max(xs) == pytest.approx(100)


def test_a_level_without_geometry_bounds_wanderers_by_the_world_only():
    scene = scene_with([], [("monster_dog", (0, 0, 24), {}), ("monster_army", (300, 200, 24), {})])
    sim, track = run(scene, 600)
    assert sim.level.solid_count == 0 and not sim.level.has_floors
    assert sum(s.moved for s, *_ in track) > 0
