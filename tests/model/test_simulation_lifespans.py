"""Octree lifespans frame by frame, driven through the simulation by a scripted motion.

Two static anchors fix the root to the cube [0, 64]³; one small body (an ``info_null``, a cube
of side 8) moves between two octants that hold nothing else, so the octant it leaves becomes an
empty leaf that counts down, and the one it enters either is created or stops its countdown.
"""
from __future__ import annotations

import numpy as np
import pytest

from editor.model.simulation import Simulation, SimulationConfig

from .simulation_scenes import scene_with, scripted_registry

A = np.array([12.0, 44.0, 12.0])   # inside octant [0, 32] x [32, 64] x [0, 32]
B = np.array([52.0, 12.0, 52.0])   # inside octant [32, 64] x [0, 32] x [32, 64]
A_CELL = (0.0, 32.0, 0.0)
CAP = 64


def _simulation(path):
    scene = scene_with([((0, 0, 0), (2, 2, 2)), ((62, 62, 62), (64, 64, 64))],
                       [("info_null", A, {"_ps_motion": "script"})])
    mover = scene.point_entity_ids()[0]
    registry = scripted_registry({mover: path})
    return Simulation(scene, "octree", registry=registry,
                      config=SimulationConfig(sleep_frames=10_000, inspect_nodes=False, record=False))


def _cells(sim) -> dict:
    """``{core_lo: (own_count, subtree_count, lifespan_left, lifespan_max, is_leaf)}`` below the root."""
    n = sim.index.nodes()
    return {tuple(n.core_lo[r].tolist()): (int(n.own_count[r]), int(n.subtree_count[r]),
                                           int(n.lifespan_left[r]), int(n.lifespan_max[r]), bool(n.is_leaf[r]))
            for r in range(len(n)) if n.depth[r] > 0}


def _check_rules(before: dict, after: dict, initial: int = 8, cap: int = CAP) -> None:
    """The lifespan rules between two consecutive frames, for every cell."""
    for cell, (_own, sub, left, life, leaf) in after.items():
        assert initial <= life <= cap, f"{cell}: lifespan max {life} outside [{initial}, {cap}]"
        assert life & (life - 1) == 0 or life == cap, f"{cell}: max {life} is not initial x 2^k"
        empty = sub == 0 and leaf
        assert (left > 0) == empty, f"{cell}: counts down {left} while holding {sub} objects"
        assert left <= life
        if cell in before:
            own0, sub0, left0, life0, leaf0 = before[cell]
            if left0 > 0 and left > 0:
                assert left == left0 - 1 and life == life0, f"{cell}: countdown {left0} -> {left}"
            if left0 > 0 and left == 0:   # refilled during the countdown: the lifespan doubles
                assert life == min(2 * life0, cap)
            if left0 == 0 and left > 0:   # just emptied: counts from its max (one step taken)
                assert left == life - 1 and life == life0
            if left0 == 0 and left == 0:
                assert life == life0
    for cell, (_own0, _sub0, left0, _life0, _leaf0) in before.items():
        if cell not in after:
            assert left0 == 1, f"{cell} was pruned with {left0} frames left"


def _run(sim, frames: int):
    history = [_cells(sim)]
    for _ in range(frames):
        sim.step()
        history.append(_cells(sim))
        _check_rules(history[-2], history[-1])
        sim.index.validate()
    return history


def test_a_cell_emptied_and_refilled_twice_reaches_32_then_is_pruned_at_zero():
    def path(frame):
        # at A until frame 3, then B, A, B, A for three frames each, then B for good
        return A if frame < 3 or 6 <= frame < 9 or 12 <= frame < 15 else B

    sim = _simulation(path)
    history = _run(sim, 60)
    a = [h.get(A_CELL) for h in history]
    assert a[2] == (1, 1, 0, 8, True)
    assert a[3][2:4] == (7, 8)        # emptied: counts down from 8
    assert a[6][2:4] == (0, 16)       # refilled during the countdown: max doubles
    assert a[9][2:4] == (15, 16)
    assert a[12][2:4] == (0, 32)      # refilled again: 32
    assert a[15][2:4] == (31, 32)
    assert a[45][2:4] == (1, 32)
    assert a[46] is None              # pruned when the countdown reaches zero
    assert max(h[A_CELL][3] for h in history if A_CELL in h) == 32


def test_a_machine_gun_rhythm_never_lifts_a_lifespan_above_the_cap():
    # back and forth every 2 frames for 200 frames: every refill doubles, up to the cap only
    sim = _simulation(lambda frame: A if (frame // 2) % 2 == 0 else B)
    history = _run(sim, 200)
    assert max(h[A_CELL][3] for h in history if A_CELL in h) == CAP
    assert history[-1][A_CELL][3] == CAP


@pytest.mark.parametrize("frames_away", [7, 8])
def test_the_countdown_boundary_is_exact(frames_away):
    # away 7 frames: back on the countdown's last frame (kept, doubled); away 8: pruned first
    def path(frame):
        return B if 1 <= frame < 1 + frames_away else A

    sim = _simulation(path)
    history = _run(sim, frames_away + 3)
    back = history[frames_away + 1][A_CELL]
    if frames_away == 7:
        assert back[2:4] == (0, 16)
    else:
        assert A_CELL not in history[frames_away] and back[2:4] == (0, 8)
