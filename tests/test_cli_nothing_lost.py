"""The command line keeps what it cannot use and refuses what it cannot do, in one line.

Every case runs ``python app.py ...`` in a child process (see tests/test_cli_robust.py).
"""
from __future__ import annotations

import json
import os

import pytest

from tests.invalid_brush_maps import BROKEN, broken_map_text
from tests.test_cli_robust import app, assert_one_line_error

pytestmark = pytest.mark.slow


@pytest.fixture()
def broken_map(tmp_path_factory):
    path = tmp_path_factory.mktemp("input") / "broken.map"
    path.write_text(broken_map_text())
    return path


# --------------------------------------------------------------------------- broken brushes
def test_convert_round_trips_broken_brushes(broken_map, tmp_path):
    native, out = tmp_path / "level.json", tmp_path / "again.map"
    code, _, err = app("convert", broken_map, native)
    assert code == 0, err
    assert err.count("brush kept as written, not indexed") == len(BROKEN)
    code, _, err = app("convert", native, out)
    assert code == 0, err
    text = out.read_text()
    for faces in BROKEN.values():
        assert "\n".join("  " + f for f in faces) in text


def test_stats_counts_invalid_brushes(broken_map):
    code, out, err = app("stats", broken_map, "--backend", "brute", "--json")
    assert code == 0, err
    scene = json.loads(out)["scene"]
    assert scene["invalid_brushes"] == len(BROKEN) and scene["objects"] == 2


# --------------------------------------------------------------------------- special outputs
def test_convert_writes_through_a_symlink(broken_map, tmp_path):
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    code, _, err = app("convert", broken_map, link, "--force")
    assert code == 0, err
    assert link.is_symlink() and '"invalid_brushes"' in real.read_text()


@pytest.mark.parametrize("force", [(), ("--force",)])
def test_convert_refuses_a_fifo_in_one_line(broken_map, tmp_path, force):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    code, out, err = app("convert", broken_map, fifo, *force, timeout=120)
    assert_one_line_error(code, out, err, "pipe.json", "named pipe")
    assert code == 2


# --------------------------------------------------------------------------- budgets
EMITTER_LEVEL = """{
"classname" "worldspawn"
{
( -512 -512 -16 ) ( -512 -511 -16 ) ( -512 -512 -15 ) rock 0 0 0 1 1
( -512 -512 -16 ) ( -512 -512 -15 ) ( -511 -512 -16 ) rock 0 0 0 1 1
( -512 -512 -16 ) ( -511 -512 -16 ) ( -512 -511 -16 ) rock 0 0 0 1 1
( 512 512 0 ) ( 512 513 0 ) ( 513 512 0 ) rock 0 0 0 1 1
( 512 512 0 ) ( 513 512 0 ) ( 512 512 1 ) rock 0 0 0 1 1
( 512 512 0 ) ( 512 512 1 ) ( 512 513 0 ) rock 0 0 0 1 1
}
}
{
"classname" "info_null"
"origin" "0 0 64"
"_ps_motion" "emitter"
"_ps_rate" "10000"
"_ps_lifetime" "100000"
"_ps_speed" "0"
}
"""


@pytest.mark.parametrize("env", [{}, {"PARTITION_STUDIO_WORK_BUDGET_PAIRS": "100000"}])
def test_an_emitter_at_the_highest_rate_stops_at_the_work_budget(tmp_path, env):
    from editor.cli.outcome import EXIT_BUDGET
    from editor.model.work_budget import MAX_FRAME_PAIRS

    level = tmp_path / "emitter.map"
    level.write_text(EMITTER_LEVEL)
    code, out, err = app("simulate", level, "--frames", "60", "--backend", "brute", "--json",
                         env=env, timeout=240)
    budget = int(env.get("PARTITION_STUDIO_WORK_BUDGET_PAIRS", MAX_FRAME_PAIRS))
    assert_one_line_error(code, out, err, f"{level}: frame ", "overlapping pairs in one frame",
                          f"work budget of {budget:,}")
    assert code == EXIT_BUDGET
    frame = int(err.split(": frame ")[1].split(":")[0])
    assert 1 < frame < 60


def test_the_memory_budget_has_one_exit_status_estimated_or_reached():
    from editor.cli import _failed
    from editor.cli.outcome import EXIT_BUDGET
    from spatial.memory_budget import MemoryBudgetError

    assert _failed(MemoryBudgetError("over the memory budget"), "stats") == EXIT_BUDGET
    assert _failed(MemoryError(), "stats") == EXIT_BUDGET  # while parsing or building
    code, out, err = app("stats", "--random", "5000", "--backend", "quadtree", "--param",
                         "max_depth=24", "--param", "max_objects=1", "--param",
                         "max_duplication=4", "--json",
                         env={"PARTITION_STUDIO_MEMORY_BUDGET_MB": "400"})
    assert_one_line_error(code, out, err, "memory budget")
    assert code == EXIT_BUDGET


# --------------------------------------------------------------------------- messages
def test_an_unknown_backend_names_the_file_and_field(tmp_path):
    level = tmp_path / "chosen.map"
    level.write_text('{\n"classname" "worldspawn"\n"_ps_backend" "nosuch"\n}\n')
    assert_one_line_error(*app("stats", level, "--json"),
                          f"{level}: worldspawn key _ps_backend: unknown backend 'nosuch'")
    params = tmp_path / "tuned.json"
    params.write_text('{"backend": "nosuch", "params": {}}')
    assert_one_line_error(*app("stats", "--demo", "--params", params, "--json"),
                          f"{params}: backend: unknown backend 'nosuch'")


def test_coordinates_out_of_range_name_the_file_and_object(tmp_path):
    level = tmp_path / "far.map"
    level.write_text('{\n"classname" "worldspawn"\n}\n{\n"classname" "light"\n'
                     '"origin" "1e13 0 0"\n}\n')
    assert_one_line_error(*app("stats", level, "--json"),
                          f"{level}: object 1 (light): coordinates must lie within")


def test_a_recording_without_frames_is_one_line(tmp_path):
    import numpy as np

    full = tmp_path / "full.npz"
    code, _, err = app("simulate", "--demo", "--frames", "2", "--save-recording", full)
    assert code == 0, err
    arrays = dict(np.load(full))
    arrays["frames"] = arrays["frames"][:0]
    for key in ("offsets", "spawn_offsets", "despawn_offsets"):
        arrays[key] = arrays[key][:1]
    for key in ("ids", "awake", "lo", "hi"):
        arrays[key] = arrays[key][:0]
    empty = tmp_path / "empty.npz"
    np.savez(empty, **arrays)
    code, out, err = app("simulate", "--recording", empty, "--json")
    assert_one_line_error(code, out, err, f"{empty}: field 'frames': the recording holds no frames")
    assert code == 2
