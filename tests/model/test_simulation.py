"""The simulation: motion behaviours, bounds, sleep and wake, determinism, seeking, the document."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model import SetProperties, UndoStack
from editor.model.motion import MotionKeyError
from editor.model.simulation import Simulation, SimulationConfig, Timeline
from spatial.geometry import boxes_overlap

from .simulation_scenes import arena, scene_with, scripted_registry


def _gun_scene(spread="4"):
    return arena([
        ("trap_spikeshooter", (-200, 0, 64), {"_ps_motion": "emitter", "_ps_direction": "1 0.1 0",
                                               "_ps_rate": "30", "_ps_speed": "900", "_ps_spread": spread}),
        ("monster_army", (0, -100, 24), {"_ps_motion": "patrol", "_ps_points": "0 100 24; 100 100 24",
                                         "_ps_speed": "150", "_ps_pause": "1"}),
        ("monster_dog", (100, 0, 24), {"_ps_motion": "orbit", "_ps_center": "0 0 24", "_ps_angular_speed": "120"}),
        ("misc_explobox", (-150, 150, 0), {"_ps_motion": "velocity", "_ps_velocity": "300 -170 0"}),
        ("item_health", (150, -150, 0), {}),
    ])


def _frames(sim):
    return [(r.frame, r.ids.copy(), r.lo.copy(), r.hi.copy(), r.awake.copy()) for r in sim.recording]


def _same_frames(a, b) -> bool:
    return len(a) == len(b) and all(
        fa[0] == fb[0] and all(np.array_equal(x, y) for x, y in zip(fa[1:], fb[1:])) for fa, fb in zip(a, b))


def test_same_seed_same_run_other_seed_other_run():
    runs = []
    for seed in (7, 7, 8):
        sim = Simulation(_gun_scene(), "octree", seed=seed)
        sim.step(90)
        runs.append(_frames(sim))
    assert _same_frames(runs[0], runs[1])
    assert not _same_frames(runs[0], runs[2])  # the emitter's spread draws from the seed


def test_behaviours_move_as_their_keys_say():
    scene = _gun_scene(spread="0")
    sim = Simulation(scene, "brute", config=SimulationConfig(sleep_frames=10_000))
    ids = {scene[i].classname: i for i in scene.point_entity_ids()}
    start = dict(zip(*sim.bodies_bounds()[:2]))
    sim.step(30)
    now = dict(zip(*sim.bodies_bounds()[:2]))
    # constant velocity: 300 -170 for half a second
    assert np.allclose(now[ids["misc_explobox"]] - start[ids["misc_explobox"]], [150, -85, 0])
    # orbit: radius 100 about (0, 0), 120 deg/s for 0.5 s -> 60 degrees
    dog_centre = (now[ids["monster_dog"]] + 32 * np.array([1, 1, 0]))[:2]  # dog box is +-32 in xy
    assert np.allclose(dog_centre, [100 * np.cos(np.pi / 3), 100 * np.sin(np.pi / 3)], atol=1e-9)
    # patrol: 150 units/s towards (0, 100) -> 75 units in y
    assert np.allclose(now[ids["monster_army"]] - start[ids["monster_army"]], [0, 75, 0])
    # the emitter fires 30 per second in its (normalised) direction at 900 units/s
    bullets = [i for i in now if i >= scene.next_id]
    assert len(bullets) == 15
    rows = sim.bodies.alive_rows()
    vel = sim.bodies.velocity[rows[np.isin(sim.bodies.ids[rows], bullets)]]
    assert np.allclose(vel, np.array([1, 0.1, 0]) / np.linalg.norm([1, 0.1, 0]) * 900)


def test_patrol_walks_its_loop_and_pauses_at_each_point():
    scene = arena([("monster_army", (0, 0, 24), {"_ps_motion": "patrol", "_ps_points": "60 0 24",
                                                  "_ps_speed": "60", "_ps_pause": "0.5", "_ps_sleep": "0"})])
    sim = Simulation(scene, "brute")
    xs = []
    for _ in range(200):
        sim.step()
        xs.append(sim.bodies.center[0, 0])
    xs = np.array(xs)
    assert xs.max() == pytest.approx(60) and xs.min() == pytest.approx(0)
    arrive = int(np.argmax(xs >= 60 - 1e-9))
    assert arrive == 59  # 60 units at 1 unit per frame
    assert np.all(xs[arrive: arrive + 31] == pytest.approx(60))  # pauses 0.5 s = 30 frames
    assert xs[arrive + 31] < 60
    back = int(np.argmax(xs[arrive:] <= 1e-9)) + arrive
    assert back == arrive + 30 + 60  # pause, then 60 frames back to the origin


def test_bodies_bounce_inside_the_world_or_despawn_at_its_bounds():
    scene = arena([
        ("info_null", (200, 0, 64), {"_ps_motion": "velocity", "_ps_velocity": "900 400 0"}),
        ("info_null", (-200, 0, 64), {"_ps_motion": "velocity", "_ps_velocity": "-900 0 0",
                                      "_ps_at_bounds": "despawn"}),
    ])
    sim = Simulation(scene, "octree")
    bouncer, leaver = scene.point_entity_ids()
    wlo, whi = sim.world.lo, sim.world.hi
    gone_at = None
    for frame in range(1, 121):
        stats = sim.step()
        ids, lo, hi, _ = sim.bodies_bounds()
        assert bouncer in ids
        k = int(np.flatnonzero(ids == bouncer)[0])
        assert (lo[k] >= wlo - 1e-9).all() and (hi[k] <= whi + 1e-9).all()
        if leaver not in ids and gone_at is None:
            gone_at = frame
            assert stats.despawned == 1 and leaver not in sim.index.objects.ids[sim.index.objects.alive]
    assert gone_at is not None and gone_at <= 20  # 56 units to the wall at 15 per frame
    sim.index.validate()


def test_projectiles_despawn_after_their_lifetime():
    scene = arena([("trap_spikeshooter", (0, 0, 64), {"_ps_motion": "emitter", "_ps_direction": "0 0 1",
                                                      "_ps_rate": "60", "_ps_speed": "1", "_ps_lifetime": "0.25"})],
                  half=512)
    sim = Simulation(scene, "octree")
    for _ in range(60):
        stats = sim.step()
    # one shot a frame, each living 15 frames: a steady stream of 15 (plus the emitter)
    assert stats.dynamic == 16 and stats.spawned == 1 and stats.despawned == 1
    sim.index.validate()


def test_an_idle_entity_falls_asleep_and_an_approaching_mover_wakes_it():
    config = SimulationConfig(sleep_frames=10, wake_margin=8.0)
    scene = arena([
        ("info_null", (0, 0, 64), {}),                       # idle: sleeps after 10 frames
        ("info_null", (-200, 0, 64), {"_ps_motion": "velocity", "_ps_velocity": "120 0 0"}),
    ])
    sleeper, mover = scene.point_entity_ids()
    sim = Simulation(scene, "octree", config=config)
    awake_by_frame = []
    for _ in range(120):
        sim.step()
        ids, lo, hi, awake = sim.bodies_bounds()
        awake_by_frame.append(bool(awake[ids == sleeper][0]))
        gap = lo[ids == sleeper][0, 0] - hi[ids == mover][0, 0]
        if awake_by_frame[-1] and len(awake_by_frame) > 10:
            # it wakes only once the mover is within the margin
            assert gap <= 8.0 + 1e-9
    assert awake_by_frame[:9] == [True] * 9
    assert awake_by_frame[9] is False  # the 10th slow frame
    first_wake = awake_by_frame.index(True, 10)
    # the mover starts 200 - 4 - 4 - 8 = 184 units short of the margin, at 2 units per frame
    assert first_wake + 1 == 92
    # once the mover has passed, it sleeps again; the index always agrees with the body
    assert False in awake_by_frame[first_wake:]
    assert sim.index.objects.awake[sim.index.objects.slots_of([sleeper])][0] == awake_by_frame[-1]


def test_sleeping_objects_are_never_paired_with_each_other():
    # two overlapping idle entities fall asleep; a far mover stays awake
    scene = arena([("info_null", (0, 0, 64), {}), ("info_null", (4, 0, 64), {}),
                   ("info_null", (-200, -200, 64), {"_ps_motion": "velocity", "_ps_velocity": "0 90 0"})])
    a, b, mover = scene.point_entity_ids()
    for backend in ("brute", "octree", "quadtree"):
        sim = Simulation(scene, backend, config=SimulationConfig(sleep_frames=5))
        seen_before_sleep = False
        for frame in range(1, 40):
            sim.step()
            pairs = {tuple(p) for p in sim.last_pairs.pairs.tolist()}
            asleep = {i for i, w in zip(*sim.bodies_bounds()[::3]) if not w}
            if frame < 5:
                seen_before_sleep |= (a, b) in pairs
            for p, q in pairs:
                assert not ({p, q} <= asleep), f"{backend}: sleeping pair {p, q} at frame {frame}"
        assert seen_before_sleep, backend
        ids, _, _, awake = sim.bodies_bounds()
        assert not awake[np.isin(ids, [a, b])].any() and awake[ids == mover].all()
        assert (a, b) not in pairs


def test_active_pairs_match_an_exact_test_every_frame():
    sim = Simulation(_gun_scene(), "octree", seed=3)
    for _ in range(60):
        sim.step()
        obj = sim.index.objects
        slots = obj.alive_slots()
        ids, lo, hi = obj.ids[slots], obj.lo[slots], obj.hi[slots]
        active = obj.dynamic[slots] & obj.awake[slots]
        n = len(ids)
        i, j = np.triu_indices(n, 1)
        keep = (active[i] | active[j]) & boxes_overlap(lo[i], hi[i], lo[j], hi[j])
        expected = np.sort(np.column_stack([ids[i][keep], ids[j][keep]]), axis=1)
        expected = expected[np.lexsort((expected[:, 1], expected[:, 0]))]
        assert np.array_equal(sim.last_pairs.pairs, expected)
    sim.index.validate()


def test_playing_leaves_the_document_untouched_and_stop_returns_to_the_edited_state():
    scene = _gun_scene()
    stack = UndoStack(scene)
    before = scene.state()
    events = []
    scene.did_change.connect(lambda ids, kind: events.append(kind))
    sim = Simulation(scene, "octree")
    initial = sim.bodies_bounds()
    timeline = Timeline(sim)
    timeline.play()
    stepped = sum(timeline.tick(1 / 60) for _ in range(40))
    assert stepped == 40 and sim.frame == 40
    assert scene.state() == before and not events
    assert stack.is_clean() and not stack.can_undo()
    timeline.stop()
    assert timeline.state == Timeline.STOPPED and sim.frame == 0
    assert all(np.array_equal(x, y) for x, y in zip(sim.bodies_bounds(), initial))
    assert len(sim.recording) == 1


def test_timeline_converts_wall_clock_time_into_frames():
    sim = Simulation(_gun_scene(), "brute", config=SimulationConfig(inspect_nodes=False, record=False))
    timeline = Timeline(sim, speed=0.5, max_frames_per_tick=3)
    assert timeline.tick(1.0) == 0  # stopped: nothing happens
    timeline.play()
    assert timeline.tick(4 / 60) == 2  # half speed
    assert timeline.tick(1.0) == 3  # capped, and the lag is not banked
    assert timeline.tick(1 / 60) in (0, 1)
    timeline.pause()
    assert timeline.tick(1.0) == 0 and timeline.state == Timeline.PAUSED
    frame = sim.frame
    timeline.step_once()
    assert sim.frame == frame + 1


def test_seek_is_exact_backwards_and_forwards():
    config = SimulationConfig(checkpoint_every=16)
    sim = Simulation(_gun_scene(), "octree", seed=5, config=config)
    sim.step(100)
    reference = {r.frame: r for r in sim.recording}
    for target in (40, 3, 0, 77, 100):
        sim.seek(target)
        ids, lo, hi, awake = sim.bodies_bounds()
        rec = reference[target]
        assert sim.frame == target
        assert np.array_equal(ids, rec.ids) and np.array_equal(lo, rec.lo) and np.array_equal(awake, rec.awake)
        sim.index.validate()
    sim.seek(20)
    sim.step(80)
    ids, lo, hi, awake = sim.bodies_bounds()
    assert np.array_equal(lo, reference[100].lo) and np.array_equal(ids, reference[100].ids)


def test_hotspot_window_sums_pair_tests_by_cell_over_the_last_frames():
    config = SimulationConfig(hotspot_window=5)
    sim = Simulation(_gun_scene(), "octree", seed=1, config=config)
    per_frame = []
    for _ in range(12):
        sim.step()
        nodes = sim.last_nodes
        tests = sim.last_pairs.node_tests
        per_frame.append({(tuple(nodes.core_lo[r]), tuple(nodes.core_hi[r])): int(tests[r])
                          for r in range(len(nodes)) if tests[r] > 0})
    expected: dict = {}
    for frame in per_frame[-5:]:
        for key, value in frame.items():
            expected[key] = expected.get(key, 0) + value
    ranking = sim.hotspots.ranking(top=1000)
    got = {(h.lo, h.hi): h.pair_tests for h in ranking}
    assert got == expected
    assert [h.pair_tests for h in ranking] == sorted(got.values(), reverse=True)
    for h in ranking:  # the row points at the cell in the latest node table, if it still exists
        current = {(tuple(sim.last_nodes.core_lo[r]), tuple(sim.last_nodes.core_hi[r])): r
                   for r in range(len(sim.last_nodes))}
        assert h.row == current.get((h.lo, h.hi), -1)
    assert any(h.row >= 0 for h in ranking)
    totals = sim.hotspots.totals_for(sim.last_nodes)
    for row, total in enumerate(totals):
        key = (tuple(sim.last_nodes.core_lo[row]), tuple(sim.last_nodes.core_hi[row]))
        assert total == expected.get(key, 0)


def test_frame_stats_count_what_happened():
    sim = Simulation(_gun_scene(), "octree", seed=2)
    for _ in range(40):
        stats = sim.step()
        ids, lo, hi, awake = sim.bodies_bounds()
        assert stats.dynamic == len(ids) and stats.awake == int(awake.sum())
        assert stats.overlapping == len(sim.last_pairs.pairs)
        assert stats.candidates == sim.last_pairs.tests >= stats.overlapping
        assert stats.nodes == len(sim.index.nodes())
        assert stats.frame_ms >= stats.update_ms + stats.pairs_ms - 1e-9
    columns = sim.recording.stats_arrays()
    assert list(columns["frame"]) == list(range(41))
    assert columns["dynamic"][-1] == stats.dynamic


@pytest.mark.parametrize("keys, message", [
    ({"_ps_motion": "teleport"}, "unknown behaviour 'teleport'"),
    ({"_ps_motion": "velocity"}, "'_ps_velocity': is required"),
    ({"_ps_motion": "velocity", "_ps_velocity": "1 2"}, "'_ps_velocity': expected 3 finite numbers"),
    ({"_ps_motion": "patrol", "_ps_points": "1 2 3; x"}, "'_ps_points'"),
    ({"_ps_motion": "emitter", "_ps_rate": "-1"}, "'_ps_rate'"),
    ({"_ps_motion": "emitter", "_ps_direction": "0 0 0"}, "zero vector"),
    ({"_ps_at_bounds": "wrap"}, "'_ps_at_bounds': expected one of bounce, despawn"),
    ({"_ps_sleep": "maybe"}, "'_ps_sleep'"),
])
def test_bad_motion_keys_name_the_entity_and_the_key(keys, message):
    scene = scene_with([((0, 0, 0), (64, 64, 64))], [("info_null", (8, 8, 8), keys)])
    eid = scene.point_entity_ids()[0]
    with pytest.raises(MotionKeyError) as err:
        Simulation(scene, "brute")
    assert f"entity {eid} (info_null)" in str(err.value) and message in str(err.value)


def test_motion_keys_are_plain_entity_properties_that_undo():
    scene = arena([("monster_army", (0, 0, 24), {})])
    stack = UndoStack(scene)
    eid = scene.point_entity_ids()[0]
    stack.push(SetProperties([eid], {"_ps_motion": "velocity", "_ps_velocity": "60 0 0"}))
    sim = Simulation(scene, "brute")
    sim.step(60)
    assert sim.bodies_bounds()[1][0, 0] == pytest.approx(-16 + 60)
    stack.undo()
    sim = Simulation(scene, "brute")
    sim.step(60)
    assert sim.bodies_bounds()[1][0, 0] == pytest.approx(-16)


def test_a_plugin_behaviour_drives_bodies_through_the_registry():
    path = {3: lambda frame: (10.0 + frame, 20.0, 30.0)}
    scene = scene_with([((0, 0, 0), (64, 64, 64))], [("info_null", (0, 20, 30), {"_ps_motion": "script"})])
    assert scene.point_entity_ids() == [2]
    registry = scripted_registry({2: path[3]})
    sim = Simulation(scene, "octree", registry=registry)
    sim.step(5)
    assert np.allclose(sim.bodies.center[0], (15.0, 20.0, 30.0))


@pytest.mark.parametrize("sleepers, movers", [(12, 3), (3, 12)])
def test_wake_finds_exactly_the_sleepers_within_the_margin(sleepers, movers):
    # the query runs from the smaller side; both sides must find the same sleepers
    rng = np.random.default_rng(sleepers)
    points = [("info_null", tuple(rng.uniform(-100, 100, 2)) + (64.0,), {}) for _ in range(sleepers)]
    points += [("info_null", tuple(rng.uniform(-100, 100, 2)) + (64.0,),
                {"_ps_motion": "velocity", "_ps_velocity": "1000 0 0"}) for _ in range(movers)]
    config = SimulationConfig(wake_margin=12.0)
    sim = Simulation(arena(points), "octree", config=config)
    b = sim.bodies
    rows = b.alive_rows()
    b.awake[rows[:sleepers]] = False
    sim.index.set_awake(b.ids[rows[:sleepers]], False)
    lo, hi = b.bounds(rows)
    near = np.zeros(sleepers, dtype=bool)
    for s in range(sleepers):
        for m in range(sleepers, len(rows)):
            near[s] |= bool(np.all(lo[s] - 12.0 <= hi[m]) and np.all(lo[m] <= hi[s] + 12.0))
    assert 0 < near.sum() < sleepers  # the random layout has both cases
    assert np.array_equal(sim._wake(), rows[:sleepers][near])


def test_motion_keys_survive_the_native_format_and_map_files(tmp_path):
    from editor.model.loading import load_document
    from editor.model.native import save_scene
    from spatial.registry import default_registry

    scene = _gun_scene()
    paths = [tmp_path / "level.json"]
    save_scene(scene, paths[0])
    exporter = default_registry().exporter_for("level.map")
    if exporter is not None:
        paths.append(tmp_path / "level.map")
        exporter.save(scene, paths[-1])

    def final_boxes(level):
        sim = Simulation(level, "brute", seed=9)
        sim.step(45)
        _, lo, hi, awake = sim.bodies_bounds()
        rows = np.column_stack([lo, hi, awake])
        return rows[np.lexsort(rows.T[::-1])]

    expected = final_boxes(scene)
    for path in paths:
        loaded = load_document(path)
        keys = [dict(loaded[e].properties) for e in loaded.point_entity_ids()]
        assert sorted(k.get("_ps_motion", "") for k in keys) == ["", "emitter", "orbit", "patrol", "velocity"]
        np.testing.assert_allclose(final_boxes(loaded), expected, err_msg=str(path))


def test_a_zero_wake_margin_wakes_on_contact_only():
    scene = arena([("info_null", (0, 0, 64), {}),
                   ("info_null", (-40, 0, 64), {"_ps_motion": "velocity", "_ps_velocity": "60 0 0"})])
    sleeper, mover = scene.point_entity_ids()
    sim = Simulation(scene, "octree", config=SimulationConfig(sleep_frames=3, wake_margin=0.0))
    for frame in range(1, 40):
        sim.step()
        ids, lo, hi, awake = sim.bodies_bounds()
        touching = hi[ids == mover][0, 0] >= lo[ids == sleeper][0, 0]
        if frame >= 3:
            # the gap closes 1 unit a frame from 24: contact on frame 24 wakes it that very frame
            assert awake[ids == sleeper][0] == touching, frame
