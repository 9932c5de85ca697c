"""The demo level moves: a bullet stream, patrols and an orbit; monsters sleep and wake."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model.demo import build_demo_scene
from editor.model.simulation import Simulation, SimulationConfig

FRAMES = 360


@pytest.fixture(scope="module")
def demo_run():
    scene = build_demo_scene()
    sim = Simulation(scene, "octree", seed=0, config=SimulationConfig(inspect_nodes=False, record=False))
    monsters = [e for e in scene.point_entity_ids() if scene[e].classname.startswith("monster_")]
    awake = {m: [] for m in monsters}
    spawned = despawned = 0
    max_lifespan = 0
    for _ in range(FRAMES):
        stats = sim.step()
        spawned += stats.spawned
        despawned += stats.despawned
        ids, _, _, flags = sim.bodies_bounds()
        for m in monsters:
            awake[m].append(bool(flags[ids == m][0]))
        max_lifespan = max(max_lifespan, int(sim.index.nodes().lifespan_max.max()))
    return scene, sim, awake, spawned, despawned, max_lifespan


def test_the_demo_streams_bullets_that_despawn_at_the_arena_bounds(demo_run):
    scene, sim, _, spawned, despawned, _ = demo_run
    emitters = scene.find_entities(_ps_motion="emitter")
    assert emitters
    assert spawned >= FRAMES // 60 * 10  # at least ten a second
    assert despawned > 0 and spawned - despawned < spawned / 2  # a stream, not a pile
    ids = sim.bodies_bounds()[0]
    assert (ids >= scene.next_id).sum() == spawned - despawned


def test_demo_monsters_fall_asleep_and_wake_up(demo_run):
    scene, _, awake, _, _, _ = demo_run
    woke_again = []
    for monster, flags in awake.items():
        flags = np.array(flags)
        asleep = np.flatnonzero(~flags)
        if len(asleep) and flags[asleep[0]:].any():
            woke_again.append(scene[monster].classname)
    assert any(not f[-1] or not all(f) for f in awake.values())
    assert woke_again, "no monster woke up after falling asleep"
    patrollers = scene.find_entities(_ps_motion="patrol")
    assert any(not all(awake[p]) for p in patrollers if p in awake)  # they sleep during a pause


def test_the_stream_keeps_reusing_octree_cells(demo_run):
    *_, max_lifespan = demo_run
    assert max_lifespan >= 32  # emptied cells refilled during their countdown, again and again
