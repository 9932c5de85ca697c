"""``python app.py simulate``: per-frame JSON, lifespan histogram, hotspots, recordings, errors."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from editor.cli import run_cli
from editor.model.native import save_scene

from .simulation_scenes import arena

REPO = Path(__file__).resolve().parents[2]
FRAME_KEYS = {"frame", "moved", "spawned", "despawned", "awake", "dynamic", "nodes", "candidates",
              "overlapping", "update_ms", "pairs_ms", "frame_ms"}


def run(capsys, *argv):
    code = run_cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def level(tmp_path):
    scene = arena([
        ("trap_spikeshooter", (-200, 0, 64), {"_ps_motion": "emitter", "_ps_rate": "20", "_ps_speed": "600",
                                               "_ps_spread": "3"}),
        ("monster_army", (0, 0, 24), {"_ps_motion": "patrol", "_ps_points": "0 150 24", "_ps_pause": "1"}),
        ("item_health", (60, 20, 0), {}),
    ])
    path = tmp_path / "level.json"
    save_scene(scene, path)
    return path


def test_simulate_prints_frames_lifespans_and_hotspots(capsys, level):
    code, out, err = run(capsys, "simulate", str(level), "--frames", "40", "--backend", "octree",
                         "--seed", "4", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["mode"] == "simulate" and report["backend"] == "octree" and report["seed"] == 4
    frames = report["frames"]
    assert [f["frame"] for f in frames] == list(range(1, 41))
    assert all(set(f) == FRAME_KEYS for f in frames)
    assert sum(f["spawned"] for f in frames) == report["summary"]["spawned"] > 0
    assert all(f["candidates"] >= f["overlapping"] >= 0 and f["nodes"] >= 1 for f in frames)
    assert report["lifespans"]["max"] and all(int(k) <= 64 for k in report["lifespans"]["max"])
    hotspots = report["hotspots"]
    assert 0 < len(hotspots) <= 10
    assert [h["pair_tests"] for h in hotspots] == sorted((h["pair_tests"] for h in hotspots), reverse=True)
    # same seed, same motion: the counts repeat (timings aside)
    code, again, _ = run(capsys, "simulate", str(level), "--frames", "40", "--backend", "octree",
                         "--seed", "4", "--json")
    def strip(fs):
        return [{k: v for k, v in f.items() if not k.endswith("_ms")} for f in fs]
    assert strip(json.loads(again)["frames"]) == strip(frames)


def test_a_saved_recording_replays_with_the_same_pairs_in_another_backend(capsys, level, tmp_path):
    saved = tmp_path / "run.npz"
    code, out, err = run(capsys, "simulate", str(level), "--frames", "30", "--backend", "brute",
                         "--save-recording", str(saved), "--json")
    assert code == 0, err
    simulated = json.loads(out)["frames"]
    for backend in ("octree", "quadtree"):
        code, out, err = run(capsys, "simulate", "--recording", str(saved), "--backend", backend, "--json")
        assert code == 0, err
        replayed = json.loads(out)
        assert replayed["mode"] == "replay" and replayed["backend"] == backend
        assert [f["overlapping"] for f in replayed["frames"]] == [f["overlapping"] for f in simulated]
        assert [f["awake"] for f in replayed["frames"]] == [f["awake"] for f in simulated]


def test_frame_lines_replay_and_a_bad_line_fails_cleanly(capsys, tmp_path):
    good = tmp_path / "game.jsonl"
    good.write_text('{"static": [[0, -10, -10, -10, 10, 10, 0]]}\n'
                    '{"frame": 1, "objects": [[5, 0, 0, 0, 1, 1, 1, true]]}\n'
                    '{"frame": 2, "objects": [[5, 20, 0, 0, 21, 1, 1, true]]}\n')
    code, out, err = run(capsys, "simulate", "--recording", str(good), "--backend", "octree", "--json")
    assert code == 0, err
    # frame 1 on the floor, frame 2 left it
    assert [f["overlapping"] for f in json.loads(out)["frames"]] == [1, 0]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + '{"frame": 3, "objects": [[5, 0, 0]]}\n')
    code, out, err = run(capsys, "simulate", "--recording", str(bad), "--json")
    assert code == 2 and out == ""
    assert f"{bad}:4:26: objects[0]: expected [id, minx" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, needle", [
    (["--frames", "0"], "--frames must be at least 1"),
    (["--backend", "nope"], "unknown backend 'nope'"),
    (["--param", "bogus=1", "--backend", "octree"], "parameter 'bogus'"),
])
def test_bad_arguments_fail_with_one_line(capsys, level, argv, needle):
    code, out, err = run(capsys, "simulate", str(level), *argv, "--json")
    assert code == 2 and out == "" and needle in err and len(err.strip().splitlines()) == 1


def test_bad_motion_keys_and_missing_files_fail_with_one_line(capsys, tmp_path):
    scene = arena([("info_null", (0, 0, 64), {"_ps_motion": "velocity", "_ps_velocity": "fast"})])
    path = tmp_path / "bad.json"
    save_scene(scene, path)
    code, out, err = run(capsys, "simulate", str(path), "--frames", "2", "--json")
    assert code == 2 and "key '_ps_velocity'" in err and out == ""
    code, out, err = run(capsys, "simulate", "--recording", str(tmp_path / "none.npz"), "--json")
    assert code == 2 and "no such file" in err


def test_app_entry_point_runs_the_demo_headless():
    proc = subprocess.run([sys.executable, "app.py", "simulate", "--demo", "--frames", "5", "--json"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["source"] == "demo" and len(report["frames"]) == 5


def test_sleep_options_change_when_bodies_fall_asleep(capsys, level):
    def awake_counts(*extra):
        code, out, err = run(capsys, "simulate", str(level), "--frames", "12", "--backend", "brute",
                             *extra, "--json")
        assert code == 0, err
        return [f["awake"] for f in json.loads(out)["frames"]]

    default = awake_counts()
    quick = awake_counts("--sleep-frames", "5")
    assert quick[5] < default[5] and quick[3] == default[3]  # the idle item sleeps on frame 5
    code, out, err = run(capsys, "simulate", str(level), "--sleep-frames", "0", "--json")
    assert code == 2 and "--sleep-frames" in err
