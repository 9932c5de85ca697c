"""A minute of play on real levels: animated entities keep the index busy and stay in their rooms.

Run headless through the model (no GUI), at the simulation's own frame rate.
"""
from __future__ import annotations

import numpy as np
import pytest

from editor.model.loading import load_document
from editor.model.simulation import Simulation, SimulationConfig
from tests.conftest import shared_file

pytestmark = pytest.mark.slow

MINUTE = 60 * 60  # frames at 60 Hz
DOOM = "/usr/share/games/doom/freedoom1.wad"


def freedoom_e1m1() -> str:
    from pathlib import Path

    if not Path(DOOM).exists():
        pytest.skip(f"{DOOM} is absent (Debian package freedoom)")
    return f"{DOOM}:E1M1"


def play(scene, frames=MINUTE, check=None):
    sim = Simulation(scene, "octree", seed=0,
                     config=SimulationConfig(class_motion=True, record=False))
    stats, lifespans, previous = [], [], None
    for _ in range(frames):
        stats.append(sim.step())
        lifespans.append(int(sim.last_nodes.lifespan_max.max()))
        if check is not None:
            now = sim.bodies_bounds()
            check(previous, now)
            previous = now
    return sim, stats, np.array(lifespans)


def assert_alive(stats, lifespans, dynamic_entities):
    candidates = np.array([s.candidates for s in stats])
    awake = np.array([s.awake for s in stats])
    dynamic = np.array([s.dynamic for s in stats])
    spawned = sum(s.spawned for s in stats)
    first_10s = slice(0, 600)
    assert (candidates > 0).mean() > 0.9, "the level went quiet"
    assert (candidates[first_10s] > 0).all()
    assert lifespans.max() > 8, "no emptied cell was reused during its countdown"
    assert lifespans[first_10s].max() > 8
    later = slice(60, None)  # after the first second every idle item has had time to sleep
    assert ((awake[later] > 0) & (awake[later] < dynamic[later])).all(), "all awake or all asleep"
    assert awake[-600:].min() >= 5, "the level fell asleep for good"
    assert spawned > 30
    assert dynamic.min() >= dynamic_entities


def brush_inside_test(scene, sim):
    """``inside(points) -> (P, B)`` bools: point strictly inside solid brush b (own plane maths)."""
    solid = sorted(set(scene.brush_ids()) & set(sim.level.solid_ids()))
    planes = [scene[i].planes() for i in solid]
    normals = np.concatenate([n for n, _ in planes])
    dists = np.concatenate([d for _, d in planes])
    starts = np.concatenate([[0], np.cumsum([len(d) for _, d in planes])[:-1]])

    def inside(points):
        margin = points @ normals.T - dists  # (P, planes), < 0 inside every plane
        return np.maximum.reduceat(margin, starts, axis=1) < -1.0

    return inside


def test_a_minute_of_e1m1_keeps_the_octree_busy_and_monsters_out_of_walls():
    scene = load_document(str(shared_file("quake", "quake_id1_e1m1.map")))
    monsters = [i for i in scene.point_entity_ids() if scene[i].classname.startswith("monster_")]
    sim0 = Simulation(scene, "octree", config=SimulationConfig(class_motion=True, record=False))
    inside = brush_inside_test(scene, sim0)
    ids0, lo0, hi0, _ = sim0.bodies_bounds()
    pick = np.isin(ids0, monsters)
    embedded_at_start = inside(((lo0 + hi0) / 2)[pick])
    samples = []

    def check(_previous, now):
        ids, lo, hi, _ = now
        samples.append(((lo + hi) / 2)[np.isin(ids, monsters)])

    sim, stats, lifespans = play(scene, check=check)
    assert_alive(stats, lifespans, len(scene.point_entity_ids()))
    for centres in samples[::30]:
        entered = inside(centres) & ~embedded_at_start
        assert not entered.any(), "a monster walked into a solid brush"
    travelled = np.abs(samples[-1] - samples[0]).max(axis=1)
    assert (travelled > 16).mean() > 0.5, "most monsters should get around"


def segment_crossings(a, b, p, q) -> np.ndarray:
    """Whether each move ``p[i] -> q[i]`` crosses any segment ``a[j] -> b[j]`` (map plane)."""
    def cross(u, v):
        return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]

    p, q = p[:, None, :2], q[:, None, :2]
    d1 = cross(b - a, p - a)
    d2 = cross(b - a, q - a)
    d3 = cross(q - p, a - p)
    d4 = cross(q - p, b - p)
    return ((d1 * d2 < 0) & (d3 * d4 < 0)).any(axis=1)


def test_a_minute_of_freedoom_e1m1_keeps_monsters_behind_their_walls():
    from editor.model.level_probe import blocking_segments

    scene = load_document(freedoom_e1m1())
    monsters = set(i for i in scene.point_entity_ids() if scene[i].classname.startswith("monster_"))
    segments = [scene[i] for i in scene.segment_ids()]
    walls = [s for s, solid in zip(segments, blocking_segments(segments)) if solid]
    a = np.array([s.a for s in walls])
    b = np.array([s.b for s in walls])
    crossed = []

    def check(previous, now):
        if previous is None:
            return
        ids0, lo0, hi0, _ = previous
        ids1, lo1, hi1, _ = now
        both = np.intersect1d(np.intersect1d(ids0, ids1), list(monsters))
        p = ((lo0 + hi0) / 2)[np.searchsorted(ids0, both)]
        q = ((lo1 + hi1) / 2)[np.searchsorted(ids1, both)]
        moving = np.any(p != q, axis=1)
        if moving.any():
            crossed.extend(both[moving][segment_crossings(a, b, p[moving], q[moving])].tolist())

    sim, stats, lifespans = play(scene, check=check)
    assert_alive(stats, lifespans, len(scene.point_entity_ids()))
    assert crossed == [], "monsters walked through blocking walls"


def test_the_cli_animates_a_real_level_by_default(capsys):
    import json

    from editor.cli import run_cli

    path = str(shared_file("quake", "quake_id1_e1m1.map"))
    reports = {}
    for flag in ("--animate", "--no-animate"):
        assert run_cli(["simulate", path, "--frames", "300", "--backend", "octree", "--json", flag]) == 0
        reports[flag] = json.loads(capsys.readouterr().out)
    assert run_cli(["simulate", path, "--frames", "300", "--backend", "octree", "--json"]) == 0
    default = json.loads(capsys.readouterr().out)
    def counts(report):
        return [{k: v for k, v in f.items() if not k.endswith("_ms")} for f in report["frames"]]

    assert default["animate"] is True and counts(default) == counts(reports["--animate"])
    alive, quiet = reports["--animate"], reports["--no-animate"]
    assert alive["summary"]["spawned"] > 0
    assert all(f["candidates"] > 0 and f["awake"] > 0 for f in alive["frames"][60:])
    assert quiet["animate"] is False and quiet["summary"]["spawned"] == 0
    assert all(f["awake"] == 0 and f["candidates"] == 0 for f in quiet["frames"][60:])
