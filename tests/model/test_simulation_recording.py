"""Recordings: the ring buffer, replay into several backends, .npz files and frame lines."""
from __future__ import annotations

import json

import numpy as np
import pytest

from editor.model.frame_format import load_frame_lines, write_frame_lines
from editor.model.recording import (
    FrameRecord,
    Recording,
    RecordingFormatError,
    Replay,
    load_recording,
    save_recording,
)
from editor.model.simulation import Simulation, SimulationConfig
from spatial.errors import ParseError
from spatial.registry import default_registry

from .simulation_scenes import arena


def _scene():
    return arena([
        ("trap_spikeshooter", (-200, -40, 64), {"_ps_motion": "emitter", "_ps_direction": "1 0.2 0",
                                                 "_ps_rate": "20", "_ps_speed": "700", "_ps_spread": "5"}),
        ("monster_army", (0, 0, 24), {"_ps_motion": "patrol", "_ps_points": "0 150 24",
                                      "_ps_speed": "120", "_ps_pause": "1"}),
        ("monster_dog", (120, -60, 24), {"_ps_motion": "orbit", "_ps_center": "60 -60 24"}),
        ("item_health", (60, 20, 0), {}), ("item_shells", (-60, 90, 0), {}),
    ])


@pytest.fixture(scope="module")
def recorded():
    sim = Simulation(_scene(), "brute", seed=11, config=SimulationConfig(sleep_frames=20))
    pairs = {0: sim.last_pairs.pairs.copy()}
    for _ in range(90):
        sim.step()
        pairs[sim.frame] = sim.last_pairs.pairs.copy()
    return sim, pairs


def _backend(name):
    return default_registry().backend(name)()


def test_the_recording_holds_spawns_despawns_and_sleep(recorded):
    sim, _ = recorded
    rec = sim.recording
    assert list(rec.frame_numbers) == list(range(91))
    assert sum(len(r.spawned) for r in rec) > 10 and sum(len(r.despawned) for r in rec) > 5
    assert any(not r.awake.all() for r in rec)
    for before, after in zip(list(rec)[:-1], list(rec)[1:]):
        assert np.array_equal(np.setdiff1d(after.ids, before.ids), after.spawned)
        assert np.array_equal(np.setdiff1d(before.ids, after.ids), after.despawned)


@pytest.mark.parametrize("backend", ["octree", "quadtree", "brute", "bvh", "grid", "kdtree"])
def test_replay_gives_the_same_pairs_in_every_backend(recorded, backend):
    sim, pairs = recorded
    if backend not in default_registry().backends:
        pytest.skip(f"backend {backend} is not available here")
    replay = Replay(sim.recording, _backend(backend))
    frames = 0
    for stats in replay.frames():
        assert np.array_equal(replay.last_pairs.pairs, pairs[stats.frame]), f"frame {stats.frame}"
        assert stats.overlapping == len(pairs[stats.frame])
        frames += 1
        replay.index.validate()
    assert frames == 91


def test_replay_seeks_to_any_recorded_frame(recorded):
    sim, pairs = recorded
    replay = Replay(sim.recording, _backend("octree"))
    for frame in (57, 12, 90, 0):
        stats = replay.seek(frame)
        assert replay.frame == frame and np.array_equal(replay.last_pairs.pairs, pairs[frame])
        assert stats.dynamic == len(sim.recording.get(frame).ids)
    replay.seek(90)
    with pytest.raises(StopIteration):
        replay.step()
    with pytest.raises(KeyError, match="frame 91 is not recorded"):
        replay.seek(91)


def test_the_ring_keeps_only_the_last_frames():
    rec = Recording(capacity=3)
    for frame in range(5):
        rec.append(FrameRecord(frame, np.array([1]), np.zeros((1, 3)) + frame, np.ones((1, 3)) + frame,
                               np.array([True])))
    assert list(rec.frame_numbers) == [2, 3, 4] and rec.first_frame == 2
    with pytest.raises(KeyError):
        rec.get(1)
    rec.append(FrameRecord(3, np.array([1]), np.zeros((1, 3)), np.ones((1, 3)), np.array([False])))
    assert not rec.get(3).awake[0] and len(rec) == 3   # a re-simulated frame replaces its record
    with pytest.raises(ValueError):
        Recording(capacity=0)


def test_the_ring_also_respects_a_memory_limit():
    def record(frame, n):
        return FrameRecord(frame, np.arange(n), np.zeros((n, 3)), np.ones((n, 3)), np.ones(n, dtype=bool))

    one = sum(a.nbytes for a in (np.arange(100), np.zeros((100, 3)), np.zeros((100, 3)), np.ones(100, bool),
                                 np.empty(0, np.int64), np.empty(0, np.int64)))
    rec = Recording(capacity=100, max_bytes=3 * one)
    for frame in range(10):
        rec.append(record(frame, 100))
    assert list(rec.frame_numbers) == [7, 8, 9] and rec.nbytes == 3 * one
    rec.append(record(10, 1000))  # bigger than the limit alone: kept, as the newest frame
    assert list(rec.frame_numbers) == [10]


def test_simulation_ring_is_bounded_and_seek_still_works():
    sim = Simulation(_scene(), "brute", seed=1, config=SimulationConfig(recording_capacity=25, checkpoint_every=10))
    sim.step(60)
    assert len(sim.recording) == 25 and sim.recording.first_frame == 36
    last = sim.recording.get(60)
    sim.seek(5)
    sim.step(55)
    ids, lo, hi, awake = sim.bodies_bounds()
    assert np.array_equal(ids, last.ids) and np.array_equal(lo, last.lo) and np.array_equal(awake, last.awake)


def _equal_recordings(a: Recording, b: Recording) -> bool:
    if not (np.array_equal(a.static_ids, b.static_ids) and np.array_equal(a.static_lo, b.static_lo)
            and np.array_equal(a.static_hi, b.static_hi) and len(a) == len(b)):
        return False
    for ra, rb in zip(a, b):
        if ra.frame != rb.frame:
            return False
        for name in ("ids", "lo", "hi", "awake", "spawned", "despawned"):
            if not np.array_equal(getattr(ra, name), getattr(rb, name)):
                return False
    return True


def _round_trip(recorded, path, save, load):
    """Save the recorded run to ``path`` and load it back: the same frames and meta data."""
    sim, _ = recorded
    save(sim.recording, path)
    back = load(path)
    assert _equal_recordings(sim.recording, back)
    assert back.meta["seed"] == 11
    return back


def test_npz_round_trip(recorded, tmp_path):
    _round_trip(recorded, tmp_path / "run.npz", save_recording, load_recording)


def _tamper(src, dst, **changes):
    with np.load(src) as data:
        arrays = {k: data[k] for k in data.files}
    arrays.update(changes)
    for key in [k for k, v in changes.items() if v is None]:
        del arrays[key]
    np.savez(dst, **arrays)


@pytest.mark.parametrize("changes, field", [
    ({"format": np.array("something-else")}, "format"),
    ({"version": np.array(99)}, "version"),
    ({"offsets": None}, "offsets"),
    ({"lo": np.full((1, 3), np.nan)}, "lo"),
    ({"frames": np.array([3, 2])}, "frames"),
    ({"meta": np.array("{not json")}, "meta"),
    ({"static_ids": np.array([1.5])}, "static_ids"),
])
def test_a_damaged_npz_names_the_field(recorded, tmp_path, changes, field):
    sim, _ = recorded
    good = tmp_path / "good.npz"
    save_recording(sim.recording, good)
    bad = tmp_path / "bad.npz"
    _tamper(good, bad, **changes)
    with pytest.raises(RecordingFormatError, match=f"bad.npz: field '{field}'"):
        load_recording(bad)


def test_a_file_that_is_not_npz_is_reported(tmp_path):
    path = tmp_path / "x.npz"
    path.write_text("hello")
    with pytest.raises(RecordingFormatError, match="x.npz: not a readable .npz recording"):
        load_recording(path)


def test_frame_lines_round_trip(recorded, tmp_path):
    path = tmp_path / "run.jsonl"
    back = _round_trip(recorded, path, write_frame_lines, load_frame_lines)
    assert back.meta["source"] == str(path)


def _lines(*docs) -> str:
    return "\n".join(d if isinstance(d, str) else json.dumps(d) for d in docs) + "\n"


GOOD_STATIC = {"static": [[0, -10, -10, -10, 10, 10, 0]]}
GOOD_1 = {"frame": 1, "objects": [[5, 0, 0, 0, 1, 1, 1, True], [6, 0.5, 0, 0, 2, 1, 1, False]]}
GOOD_2 = {"frame": 2, "objects": [[6, 0.5, 0, 0, 2, 1, 1, 1], [7, 3, 3, 3, 4, 4, 4]]}


def test_frame_lines_derive_spawns_and_despawns(tmp_path):
    path = tmp_path / "game.jsonl"
    path.write_text(_lines(GOOD_STATIC, "", GOOD_1, GOOD_2))
    rec = load_frame_lines(path)
    assert list(rec.static_ids) == [0] and list(rec.frame_numbers) == [1, 2]
    second = rec.get(2)
    assert list(second.ids) == [6, 7] and list(second.spawned) == [7] and list(second.despawned) == [5]
    assert list(second.awake) == [True, True] and list(rec.get(1).awake) == [True, False]
    replay = Replay(rec, _backend("octree"))
    first = replay.seek(1)
    # 6 sleeps: static 0 and sleeping 6 are no active pair although their boxes touch
    assert first.overlapping == 2 and replay.last_pairs.pairs.tolist() == [[0, 5], [5, 6]]
    replay.step()
    assert replay.last_pairs.pairs.tolist() == [[0, 6]]


@pytest.mark.parametrize("bad_line, column, message", [
    ('{"frame": 3, "objects": [[8, 0, 0, 0, 1, 1, 1, true]', 53, "invalid JSON"),
    ('[1, 2]', 1, "expected a JSON object"),
    ('{"frame": 3, "objets": []}', 14, "unknown key 'objets'"),
    ('{"frame": 2, "objects": []}', 2, "frame 2 does not follow frame 2"),
    ('{"frame": 3, "objects": [[8, 0, 0, 0, 1, 1, 1, true], [9, 0, "x", 0, 1, 1, 1]]}', 62,
     "objects[1][2]: expected a finite number"),
    ('{"frame": 3, "objects": [[8, 0, 0, 0, 1, 1]]}', 26, "objects[0]: expected [id, minx"),
    ('{"frame": 3, "objects": [[8, 0, 0, 0, 1, 1, 1], [8, 0, 0, 0, 1, 1, 1]]}', 50,
     "objects[1]: id 8 already listed at objects[0]"),
    ('{"frame": 3, "objects": [[8, 5, 0, 0, 1, 1, 1]]}', 26, "objects[0]: min [5.0, 0.0, 0.0] exceeds max"),
    ('{"frame": 3, "objects": [[0, 0, 0, 0, 1, 1, 1]]}', 27, "objects[0]: id 0 is a static object"),
    ('{"frame": 3, "objects": [[8, 0, 0, 0, 1, 1, 1, "yes"]]}', 48, "objects[0]: awake must be"),
    ('{"frame": -1, "objects": []}', 2, "'frame' must be an integer >= 0"),
    ('{"static": [[1, 0, 0, 0, 1, 1, 1]]}', 2, "'static' may only come before the first frame"),
])
def test_a_malformed_line_is_reported_where_it_is_and_nothing_loads(tmp_path, bad_line, column, message):
    path = tmp_path / "game.jsonl"
    path.write_text(_lines(GOOD_STATIC, GOOD_1, GOOD_2, bad_line, {"frame": 9, "objects": []}))
    with pytest.raises(ParseError) as err:
        load_frame_lines(path)
    assert (err.value.path, err.value.line, err.value.column) == (str(path), 4, column)
    assert str(err.value).startswith(f"{path}:4:{column}: ") and message in str(err.value)


def test_an_empty_or_unreadable_frame_file_is_an_error(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(ParseError, match="no frame lines found"):
        load_frame_lines(empty)
    with pytest.raises(ParseError, match="cannot read"):
        load_frame_lines(tmp_path / "missing.jsonl")


def test_the_documented_example_loads(tmp_path):
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "frame-format.md").read_text()
    example = doc.split("Example (", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "example.jsonl"
    path.write_text(example)
    rec = load_frame_lines(path)
    assert list(rec.frame_numbers) == [1, 2, 3, 4] and list(rec.get(4).despawned) == [11]
    assert [bool(r.awake[0]) for r in rec] == [False, False, True, True]


def test_frame_lines_accept_crlf_and_a_byte_order_mark(tmp_path):
    path = tmp_path / "windows.jsonl"
    text = _lines(GOOD_STATIC, GOOD_1, GOOD_2).replace("\n", "\r\n")
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    rec = load_frame_lines(path)
    assert list(rec.frame_numbers) == [1, 2] and list(rec.static_ids) == [0]
