"""Compare mode over the timeline: a side replays the timeline's frames like the timeline does."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model.compare.frames import FrameFigures, FrameHistory, SideReplay
from editor.model.compare.sides import SideSpec, build_side, check_side, new_index
from editor.model.demo import build_demo_scene
from editor.model.index_input import index_input
from editor.model.index_sync import IndexSync
from editor.model.recording import FrameRecord, Recording, Replay
from editor.model.simulation import Simulation, SimulationConfig
from spatial.memory_budget import MemoryBudgetError


@pytest.fixture(scope="module")
def run():
    scene = build_demo_scene()
    sim = Simulation(scene, "octree", seed=3, config=SimulationConfig(class_motion=True))
    sim.step(30)
    return scene, sim.recording


def _side(scene, backend: str) -> SideReplay:
    record = index_input(scene)
    return SideReplay(lambda: new_index(record, SideSpec(backend)))


def test_a_side_shows_a_frame_as_a_replay_of_it_does(run):
    scene, recording = run
    side = _side(scene, "bvh")
    for frame, stepped_from in ((20, None), (12, None), (13, 12), (16, 13), (3, None)):
        stats = side.show(recording, frame)
        replay = Replay(recording, new_index(index_input(scene), SideSpec("bvh")))
        if stepped_from is None:  # far from the frame shown: rebuilt at once
            expected = replay.seek(frame)
        else:  # a few frames on: stepped to, as the timeline plays
            replay.seek(stepped_from)
            expected = replay.step()
            while replay.frame < frame:
                expected = replay.step()
        assert side.frame == frame
        assert (stats.candidates, stats.overlapping) == (expected.candidates, expected.overlapping)
        record = recording.get(frame)
        slots = side.index.objects.slots_of(record.ids)
        np.testing.assert_array_equal(side.index.objects.lo[slots], record.lo)
    assert side.show(recording, 3) is side.stats  # the frame on show: nothing to do
    side.forget()
    assert side.index is None and side.frame == -1


def test_a_ring_that_dropped_frames_is_followed_by_frame_number():
    ring = Recording([100], [[0, 0, 0]], [[1, 1, 1]], capacity=4)
    def frame(n):
        return FrameRecord(n, np.array([1]), np.array([[n, 0.0, 0]]), np.array([[n + 1, 1.0, 1]]),
                           np.array([True]))

    for n in range(4):
        ring.append(frame(n))
    side = SideReplay(lambda: new_index(index_input(build_demo_scene()), SideSpec("brute")))
    side.show(ring, 2)
    ring.append(frame(4))  # frame 0 falls off: every position moves down by one
    ring.append(frame(5))
    side.show(ring, 4)
    slot = side.index.objects.slots_of(np.array([1]))
    np.testing.assert_array_equal(side.index.objects.lo[slot], [[4.0, 0, 0]])


def test_both_sides_of_a_frame_and_their_ratio(run):
    scene, recording = run
    a, b = _side(scene, "octree"), _side(scene, "bvh")
    history = FrameHistory()
    for frame in (5, 6, 9):
        history.add(FrameFigures(frame, a.show(recording, frame), b.show(recording, frame)))
    figures = history.by_frame[9]
    rows = {key: (va, vb, ratio) for key, _, va, vb, ratio in figures.rows()}
    assert rows["overlapping"][0] == rows["overlapping"][1]  # the same pairs in every backend
    va, vb, ratio = rows["candidates"]
    assert ratio == (round(vb / va, 4) if va else None)
    frames, col_a, col_b = history.columns("candidates")
    assert frames.tolist() == [5, 6, 9] and col_a[-1] == va and col_b[-1] == vb


def test_a_sync_adopts_an_index_built_elsewhere_and_follows_edits():
    from editor.model.commands import Transform
    from editor.model.undo import UndoStack

    scene = build_demo_scene()
    built = build_side(index_input(scene), SideSpec("bvh"))
    sync = IndexSync(scene, built)
    assert sync.index is built and not sync.follows_document
    thing = scene.point_entity_ids()[0]
    UndoStack(scene).push(Transform([thing], delta=(32.0, 0, 0)))
    lo, _ = scene.bounds_of([thing])
    np.testing.assert_array_equal(built.objects.lo[built.objects.slots_of(np.array([thing]))], lo)
    built.validate()


def test_a_side_over_the_memory_budget_is_refused_before_its_build(monkeypatch):
    scene = build_demo_scene()
    monkeypatch.setenv("PARTITION_STUDIO_MEMORY_BUDGET_MB", "1")
    spec = SideSpec("quadtree", {"max_depth": 24, "max_objects": 1, "max_duplication": 4})
    check_side(scene, spec)  # the parameters alone are valid
    with pytest.raises(MemoryBudgetError):
        check_side(scene, spec, index_input(scene))
