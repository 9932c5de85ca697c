"""A process killed (SIGKILL) while saving leaves the previous file intact and no temporary file.

Each writer of the product runs in a child process whose ``os.fsync`` announces itself and then
blocks: at that moment the new content has been written but not yet put in place. The test
kills the child there and checks the folder: the old bytes, and nothing else. A writer that
wrote in place (truncating the old file first) or through a named temporary file fails it.
"""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MARK = "ABOUT-TO-FSYNC"

_HANG_AT_FSYNC = f"""
import os, sys, time
sys.path.insert(0, {str(REPO)!r})
def _announce_and_hang(fd):
    sys.__stderr__.write({MARK!r} + "\\n")
    sys.__stderr__.flush()
    time.sleep(600)
os.fsync = _announce_and_hang
"""

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")

OLD = b"the previous version, which must survive\n"


def _kill_while_saving(code: str, target: Path, env: dict | None = None, timeout: float = 300) -> None:
    """Run ``code`` in a child, SIGKILL it at its first fsync, and check ``target``'s folder."""
    target.write_bytes(OLD)
    before = sorted(os.listdir(target.parent))
    child_env = {**os.environ, **(env or {})}
    proc = subprocess.Popen([sys.executable, "-c", _HANG_AT_FSYNC + code], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=child_env)
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr] + [lines.put(None)],
                              daemon=True)
    reader.start()
    seen, deadline = [], time.monotonic() + timeout
    try:
        while True:
            line = lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            if line is None:
                pytest.fail("the writer finished without saving:\n" + "".join(seen))
            if line.strip() == MARK:
                break
            seen.append(line)
    except queue.Empty:
        pytest.fail("the writer did not reach its save in time:\n" + "".join(seen))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert target.read_bytes() == OLD
    assert sorted(os.listdir(target.parent)) == before  # no .tmp file, named or hidden


@pytest.fixture()
def demo_json(tmp_path_factory):
    from editor.model.demo import build_demo_scene
    from editor.model.native import save_scene

    path = tmp_path_factory.mktemp("input") / "demo.json"
    save_scene(build_demo_scene(), path)
    return path


def test_native_save(tmp_path):
    target = tmp_path / "level.json"
    _kill_while_saving(f"""
from editor.model.demo import build_demo_scene
from editor.model.native import save_scene
save_scene(build_demo_scene(), {str(target)!r})
""", target)


def test_map_export(tmp_path):
    target = tmp_path / "level.map"
    _kill_while_saving(f"""
from editor.model.demo import build_demo_scene
from spatial.registry import default_registry
default_registry().exporter_for({str(target)!r}).save(build_demo_scene(), {str(target)!r})
""", target)


def test_convert_command(tmp_path, demo_json):
    target = tmp_path / "out.map"
    _kill_while_saving(f"""
import app
app.main(["convert", {str(demo_json)!r}, {str(target)!r}, "--force"])
""", target)


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".npz", ".jsonl"])
def test_simulate_save_recording(tmp_path, suffix):
    target = tmp_path / f"frames{suffix}"
    _kill_while_saving(f"""
import app
app.main(["simulate", "--demo", "--frames", "5", "--backend", "brute",
          "--save-recording", {str(target)!r}, "--force", "--json"])
""", target)


@pytest.mark.parametrize("fmt", ["json", "c-header", "unreal-ini", "godot"])
def test_parameter_exporters(tmp_path, fmt):
    from plugins.octree.index import Octree
    from spatial.tuned_params import tuned_params_document
    from spatial.tuner import tune
    from tests.spatial.tuning_helpers import small_workload

    result = tune(Octree, small_workload(), budget_s=60, seed=1, max_trials=2)
    document_path = tmp_path.parent / f"{tmp_path.name}-document.json"
    document_path.write_text(json.dumps(tuned_params_document(
        result, {"source": "t.map", "hash": "sha256:" + "ab" * 32, "objects": 1})))
    target = tmp_path / "tuned.out"
    _kill_while_saving(f"""
import json
from spatial.registry import default_registry
document = json.load(open({str(document_path)!r}))
default_registry().exporters[{fmt!r}].save(document, {str(target)!r})
""", target)


def test_benchmark_results_section(tmp_path):
    target = tmp_path / "RESULTS.md"
    _kill_while_saving(f"""
from pathlib import Path
from benchmarks.report import write_section
write_section(Path({str(target)!r}), ["| a | b |"], name="broadphase")
""", target)


@pytest.mark.slow
def test_screenshot(tmp_path, demo_json):
    target = tmp_path / "shot.png"
    _kill_while_saving(f"""
import app
app.main([{str(demo_json)!r}, "--screenshot", {str(target)!r}, "--no-gl", "--force",
          "--size", "640x480"])
""", target, env={"QT_QPA_PLATFORM": "offscreen"})
