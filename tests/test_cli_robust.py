"""The command line end to end on hostile input: one stderr line, non-zero exit, nothing lost.

Every case runs ``python app.py ...`` in a child process, as a build pipeline would, and checks
the promise of the README: a bad input, a bad output or a broken plugin gives exactly one line
on stderr and a non-zero exit, never a traceback, never partial JSON on stdout, and never a
partial, truncated or silently emptied output file.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FREEDOOM1 = Path("/usr/share/games/doom/freedoom1.wad")


def app(*argv, env: dict | None = None, timeout: float = 300):
    """``(exit status, stdout, stderr)`` of ``python app.py ARGV``."""
    proc = subprocess.run([sys.executable, str(REPO / "app.py"), *map(str, argv)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout, proc.stderr


def assert_one_line_error(code: int, out: str, err: str, *needles: str) -> None:
    assert code != 0, (out, err)
    assert out == "", out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("partition-studio: error: "), err
    for needle in needles:
        assert needle in lines[0], (needle, err)


@pytest.fixture()
def mesh(tmp_path_factory):
    path = tmp_path_factory.mktemp("input") / "room.obj"
    path.write_text("v 0 0 0\nv 64 0 0\nv 0 64 0\nv 0 0 64\nf 1 2 3\nf 1 2 4\n")
    return path


@pytest.fixture()
def demo_json(tmp_path_factory):
    from editor.model.demo import build_demo_scene
    from editor.model.native import save_scene

    path = tmp_path_factory.mktemp("input") / "demo.json"
    save_scene(build_demo_scene(), path)
    return path


# --------------------------------------------------------------------------- convert
@pytest.mark.parametrize("suffix", [".map", ".json"])
def test_convert_refuses_a_format_that_cannot_hold_mesh_triangles(tmp_path, mesh, suffix):
    out = tmp_path / f"room{suffix}"
    assert_one_line_error(*app("convert", mesh, out), str(out), "2 mesh triangles", "lost")
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(not FREEDOOM1.exists(), reason="Freedoom (Debian package freedoom) not installed")
@pytest.mark.parametrize("suffix", [".map", ".json"])
def test_convert_refuses_to_drop_the_walls_of_a_doom_map(tmp_path, suffix):
    out = tmp_path / f"e1m1{suffix}"
    assert_one_line_error(*app("convert", f"{FREEDOOM1}:E1M1", out), "wall segments")
    assert os.listdir(tmp_path) == []


def test_convert_keeps_an_existing_file_unless_forced(tmp_path, demo_json):
    out = tmp_path / "demo.map"
    out.write_text("keep me\n")
    assert_one_line_error(*app("convert", demo_json, out), "exists", "--force")
    assert out.read_text() == "keep me\n"
    code, _, err = app("convert", demo_json, out, "--force")
    assert code == 0, err
    assert out.read_text().startswith(("//", "{"))  # a real .map now
    assert os.listdir(tmp_path) == ["demo.map"]


def test_convert_checks_the_output_folder_before_reading(tmp_path):
    missing = tmp_path / "no-such-folder" / "out.json"
    # the input does not exist either: the output is what the message must be about
    assert_one_line_error(*app("convert", tmp_path / "absent.map", missing), "does not exist",
                          "no-such-folder")
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------- simulate, tune, screenshot
def test_save_recording_is_checked_before_the_simulation(tmp_path):
    existing = tmp_path / "frames.npz"
    existing.write_bytes(b"old")
    assert_one_line_error(*app("simulate", tmp_path / "absent.json", "--save-recording", existing),
                          "--save-recording", "exists", "--force")
    assert existing.read_bytes() == b"old"
    missing = tmp_path / "nowhere" / "frames.npz"
    assert_one_line_error(*app("simulate", tmp_path / "absent.json", "--save-recording", missing),
                          "--save-recording", "does not exist")


def test_save_recording_while_replaying_is_refused(tmp_path):
    recording = tmp_path / "in.jsonl"
    recording.write_text('{"static": []}\n{"frame": 1, "objects": [[1, 0, 0, 0, 1, 1, 1, true]]}\n')
    out = tmp_path / "out.npz"
    assert_one_line_error(*app("simulate", "--recording", recording, "--save-recording", out),
                          "--save-recording", "--recording")
    assert not out.exists()


@pytest.mark.slow
def test_save_recording_with_force_replaces_the_file_atomically(tmp_path):
    out = tmp_path / "frames.jsonl"
    out.write_text("old\n")
    code, stdout, err = app("simulate", "--demo", "--frames", "3", "--backend", "brute",
                            "--save-recording", out, "--force", "--json")
    assert code == 0, err
    assert json.loads(stdout)["summary"]["frames"] == 3
    lines = out.read_text().splitlines()
    assert "static" in json.loads(lines[0]) and len(lines) >= 4
    assert os.listdir(tmp_path) == ["frames.jsonl"]


def test_tune_refuses_to_overwrite_before_tuning(tmp_path):
    existing = tmp_path / "params.json"
    existing.write_text("{}")
    assert_one_line_error(*app("tune", tmp_path / "absent.map", "--out", existing),
                          "--out", "exists", "--force")
    assert existing.read_text() == "{}"


def test_screenshot_refuses_to_overwrite_before_opening_the_window(tmp_path):
    existing = tmp_path / "shot.png"
    existing.write_bytes(b"old")
    assert_one_line_error(*app(tmp_path / "absent.json", "--screenshot", existing, "--no-gl",
                               env={"QT_QPA_PLATFORM": "offscreen"}),
                          "--screenshot", "exists", "--force")
    assert existing.read_bytes() == b"old"


# --------------------------------------------------------------------------- plugins
def _plugin(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return folder


def test_plugins_that_exit_interrupt_or_print_are_contained(tmp_path):
    folder = tmp_path / "plugins"
    _plugin(folder, "exits.py", "import sys\nprint('hello at import')\nsys.exit(3)\n")
    _plugin(folder, "interrupts.py", "def register(registry):\n    raise KeyboardInterrupt\n")
    _plugin(folder, "talks.py", "print('chatty')\ndef register(registry):\n    print('registering')\n")
    code, out, err = app("--plugin-dir", folder, "plugins", "--json")
    assert code == 0, err
    report = json.loads(out)  # nothing the plugins printed reached stdout
    errors = {Path(p["name"]).name: p["error"] for p in report["plugins"] if p["source"].startswith("folder")}
    assert errors["exits.py"] == "import failed: called sys.exit(3)"
    assert errors["interrupts.py"] == "register() failed: raised KeyboardInterrupt"
    assert errors["talks.py"] is None
    assert "chatty" in err and "registering" in err
    assert "brute" in report["backends"]  # the command carried on


def test_a_plugin_stuck_at_import_is_reported_not_awaited(tmp_path):
    folder = _plugin(tmp_path / "plugins", "loops.py",
                     "try:\n    while True:\n        pass\nexcept BaseException:\n    pass\n"
                     "while True:\n    pass\n")
    code, out, err = app("--plugin-dir", folder, "plugins", "--json",
                         env={"PARTITION_STUDIO_PLUGIN_TIMEOUT": "1"}, timeout=120)
    assert code == 0, err
    report = json.loads(out)
    [loops] = [p for p in report["plugins"] if p["name"].endswith("loops.py")]
    assert loops["error"] == "import failed: did not finish within 1 s"


BROKEN_PLUGIN = '''
from dataclasses import dataclass

from spatial.contract import SpatialIndex


class Broken(SpatialIndex):
    name = "broken"

    @dataclass
    class Params:
        pass

    def _build(self, slots):
        raise ZeroDivisionError("no luck")


def load_thing(path):
    raise RuntimeError("importer exploded")


def register(registry):
    registry.add_backend(Broken)
    registry.add_importer("thing", ("*.thing",), load_thing)
'''


def test_a_backend_or_importer_that_raises_is_named_in_one_line(tmp_path):
    folder = _plugin(tmp_path / "plugins", "broken.py", BROKEN_PLUGIN)
    assert_one_line_error(*app("--plugin-dir", folder, "stats", "--random", "20", "--backend",
                               "broken", "--json"),
                          "plugin '", "broken.py'", "Broken._build()", "ZeroDivisionError: no luck")
    level = tmp_path / "level.thing"
    level.write_text("")
    assert_one_line_error(*app("--plugin-dir", folder, "stats", level, "--json"),
                          "broken.py'", "load_thing()", "importer exploded")


# --------------------------------------------------------------------------- absurd numbers
def test_a_grid_with_an_absurdly_small_cell_coarsens_and_reports_whole_json():
    code, out, err = app("stats", "--random", "300", "--backend", "grid", "--param",
                         "cell_size=1e-300", "--json")
    assert code == 0, err
    index = json.loads(out)["index"]
    assert index["coarsened"] is True and index["cell_size"] > 1e-6


@pytest.mark.slow
def test_parameters_that_outgrow_the_memory_budget_end_in_one_line():
    assert_one_line_error(*app("stats", "--random", "5000", "--backend", "quadtree",
                               "--param", "max_depth=24", "--param", "max_objects=1",
                               "--param", "max_duplication=4", "--json",
                               env={"PARTITION_STUDIO_MEMORY_BUDGET_MB": "400"}),
                          "quadtree", "max_depth=24", "memory budget of 400 MB")


@pytest.mark.parametrize("text,needles", [
    ('{"params": {"max_depth": 1' + "0" * 5000 + "}}", [":1:26:", "longer than the limit of 100"]),
    ('{"params": ' + "[" * 100_000 + "]" * 100_000 + "}", [":1:", "nesting deeper than 64"]),
    ('{"params": {"min_size": 1' + "0" * 400 + ".5}}", [":1:25:", "longer than the limit of 100"]),
    ('{"params": {"max_depth": 1e400}}', ["'max_depth'", "finite"]),
    ('{"params": {"max_depth": 1e300}}', ["'max_depth'", "above the maximum"]),
], ids=["long-integer", "deep-nesting", "long-decimal", "overflow", "above-maximum"])
def test_absurd_numbers_in_a_params_file_name_the_file_and_field(tmp_path, text, needles):
    params = tmp_path / "params.json"
    params.write_text(text)
    assert_one_line_error(*app("stats", "--random", "20", "--backend", "octree", "--params",
                               params, "--json"), str(params), *needles)


def test_an_absurd_param_value_gives_a_short_line_naming_the_field():
    code, out, err = app("stats", "--random", "20", "--backend", "octree",
                         "--param", "max_depth=" + "9" * 5000, "--json")
    assert_one_line_error(code, out, err, "'max_depth'", "finite")
    assert len(err) < 300


def test_huge_finite_coordinates_end_in_one_line(tmp_path):
    mesh = tmp_path / "far.obj"
    mesh.write_text("v 0 0 0\nv 1e308 0 0\nv 0 1e308 0\nf 1 2 3\n")
    for backend in ("octree", "triangle_octree"):
        # refused by the reader (file:line) or by the index (the row and the range): one line
        assert_one_line_error(*app("stats", mesh, "--backend", backend, "--json"))


def test_unexpected_failures_are_summarised_in_one_line():
    from editor.cli import describe_failure

    assert describe_failure(OSError(28, "No space left on device", "/out/level.map")) == \
        "/out/level.map: No space left on device"
    assert "memory budget of" in describe_failure(MemoryError(), "stats")
    try:
        {}["missing"]
    except KeyError as exc:
        line = describe_failure(exc)
    assert line.startswith("internal error: KeyError: 'missing' (at test_cli_robust.py:")
