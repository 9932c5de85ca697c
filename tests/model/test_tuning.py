"""Tuning a scene: workloads from the document or a recording; the scene is only read."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model import UndoStack
from editor.model.demo import build_demo_scene
from editor.model.simulation import Simulation, SimulationConfig
from editor.model.tuning import (
    CAMERA_PREFIXES,
    scene_content_hash,
    scene_workload,
    tune_scene,
    tuned_settings_command,
)
from spatial.tuner import CancelToken


@pytest.fixture()
def scene():
    return build_demo_scene()


def test_workload_is_the_scene_with_seeded_motion_rays_and_camera_frusta(scene):
    work = scene_workload(scene, seed=4, frames=5, rays=32, frusta=4)
    ids = scene.indexed_ids()
    assert np.array_equal(work.ids, ids)
    assert work.dynamic.sum() == len(scene.point_entity_ids())
    assert len(work.frames) == 5 and len(work.ray_origins) == 32 and work.frusta.shape == (4, 6, 4)
    first = work.frames[0]
    assert set(first.moved.tolist()) == set(ids[work.dynamic].tolist())
    assert not np.allclose(first.moved_lo, work.lo[work.dynamic])  # the movers do move
    cameras = [scene[i] for i in scene.point_entity_ids()
               if scene[i].classname.startswith(CAMERA_PREFIXES)]
    assert cameras, "the demo level has a player start"
    eye = cameras[0].origin
    # the first frustum looks out of the first camera: its side planes pass through the eye
    assert np.allclose(work.frusta[0][2:, :3] @ eye + work.frusta[0][2:, 3], 0, atol=1e-6)
    again = scene_workload(scene, seed=4, frames=5, rays=32, frusta=4)
    assert np.array_equal(again.ray_directions, work.ray_directions)
    assert np.array_equal(again.frames[-1].moved_lo, work.frames[-1].moved_lo)
    other = scene_workload(scene, seed=5, frames=5, rays=32, frusta=4)
    assert not np.array_equal(other.ray_directions, work.ray_directions)


def test_a_recording_replaces_the_synthetic_motion(scene):
    sim = Simulation(scene, "brute", seed=0, config=SimulationConfig(recording_capacity=10))
    for _ in range(4):
        sim.step()
    work = scene_workload(scene, recording=sim.recording, frames=10)
    assert len(work.frames) == len(sim.recording) - 1
    assert "recording" in work.description
    last = sim.recording.at(len(sim.recording) - 1)
    moved = {}
    for frame in work.frames:
        moved.update(zip(frame.moved.tolist(), frame.moved_lo.tolist()))
    for oid, lo in zip(last.ids.tolist(), last.lo.tolist()):
        if oid in moved:
            assert moved[oid] == lo


def test_cancelled_tuning_leaves_the_scene_unchanged(scene):
    before = scene.state()
    token = CancelToken()
    token.cancel()
    result = tune_scene(scene, "octree", budget_s=30, cancel=token)
    assert result.cancelled and result.trials == []
    assert scene.state() == before

    def cancel_after_two(progress):
        if len(progress.trials) == 2:
            token2.cancel()

    token2 = CancelToken()
    result = tune_scene(scene, "octree", budget_s=30, cancel=token2, on_trial=cancel_after_two)
    assert result.cancelled and len(result.trials) == 2
    assert scene.state() == before


def test_applying_a_result_is_one_undoable_settings_change(scene):
    result = tune_scene(scene, "kdtree", budget_s=30, max_trials=4)
    stack = UndoStack(scene)
    stack.push(tuned_settings_command(result))
    assert scene.settings.backend == "kdtree"
    assert scene.settings.params == result.best.params
    stack.undo()
    assert scene.settings.backend != "kdtree" or scene.settings.params != result.best.params


def test_content_hash_follows_the_content(scene):
    first = scene_content_hash(scene)
    assert first.startswith("sha256:") and len(first) == 7 + 64
    assert scene_content_hash(build_demo_scene()) == first
    stack = UndoStack(scene)
    from editor.model import Transform
    stack.push(Transform([scene.brush_ids()[0]], delta=(8, 0, 0)))
    assert scene_content_hash(scene) != first


def test_cameras_looking_straight_down_still_give_a_frustum():
    from editor.model import AddObjects, Scene, point_entity

    scene = Scene()
    stack = UndoStack(scene)
    stack.push(AddObjects({scene.allocate_ids(1)[0]: point_entity(
        "info_player_start", (0, 0, 0), [("mangle", "90 45 0")])}))
    work = scene_workload(scene, frusta=4)
    assert work.frusta.shape == (4, 6, 4) and np.isfinite(work.frusta).all()
    near = work.frusta[0][0]
    assert near[2] < -0.99  # the near plane faces down the view axis
