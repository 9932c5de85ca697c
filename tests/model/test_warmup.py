"""The kernel warm-up of a first start (``editor.warmup``): cold-cache detection and the
process protocol. The warm-up process is real; it compiles into the run's numba cache."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from editor.warmup import FAMILIES, PAIRS_READY, READY, FamilyLoader, KernelWarmup, cache_is_cold, warm

REPO = Path(__file__).resolve().parents[2]


def _cold_in(cache_dir: Path, backend: str) -> bool:
    """``cache_is_cold(backend)`` in a fresh interpreter whose numba cache is ``cache_dir``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    out = subprocess.run([sys.executable, "-c",
                          f"from editor.warmup import cache_is_cold; print(cache_is_cold({backend!r}))"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip() == "True"


def test_an_empty_kernel_cache_is_cold(tmp_path):
    assert _cold_in(tmp_path / "empty-cache", "octree")


def test_a_cache_with_the_kernels_is_warm():
    # this process has run the octree and built brushes, so the default cache holds them
    import numpy as np

    from spatial.brush import brushes_from_planes
    normals = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1.0]])
    brushes_from_planes([(normals, np.ones(6))])
    warm("octree", announce=lambda line: None)
    assert not cache_is_cold("octree")


def test_warm_runs_every_path_and_announces_ready_after_the_build_then_the_pairs():
    said = []
    warm("octree", announce=said.append)
    assert said == [READY, PAIRS_READY, *FAMILIES.values()]


def test_the_family_loader_runs_each_family_on_every_backend():
    from spatial.registry import default_registry
    for backend in ("octree", "bvh", "grid", "kdtree", "quadtree", "bsp", "brute"):
        if backend in default_registry().backends:
            loader = FamilyLoader(backend)
            for family in FAMILIES:
                loader.load(family)
            assert loader._scene[0].name == backend


@pytest.mark.slow
def test_the_warm_up_process_says_ready_and_exits():
    warmup = KernelWarmup("octree")
    try:
        assert warmup.wait_ready(timeout=600)
        assert warmup.wait_ready() is True  # later calls answer at once
        assert warmup.wait_ready(timeout=600, line=PAIRS_READY)
        assert warmup.process.wait(timeout=600) == 0
        assert warmup.finished()
    finally:
        warmup.stop()


def test_the_warm_up_process_gets_the_plugin_folders(monkeypatch, tmp_path):
    """A backend from a ``--plugin-dir`` folder compiles in the warm-up process too: the
    process is given the same folders, as absolute paths (it starts in the repository root)."""
    import spatial.registry as registry
    from editor.warmup import warmup_command

    monkeypatch.setattr(registry, "_EXTRA_DIRS", [])
    monkeypatch.chdir(tmp_path)
    registry._EXTRA_DIRS.append("my-plugins")
    command = warmup_command("sweep")
    assert command[1:4] == ["-m", "editor.warmup", "sweep"]
    assert command[4:] == ["--parent-pipe", "--plugin-dir", str(tmp_path / "my-plugins")]


#: a stand-in for the editor: starts a warm-up process, says its process id, then waits
EDITOR = """
import sys, time
from editor.warmup import KernelWarmup
warmup = KernelWarmup("octree")
print(warmup.process.pid, flush=True)
time.sleep(600)
"""


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["kill", "crash"])
def test_the_warm_up_process_ends_with_the_editor_that_started_it(tmp_path, how):
    """An editor killed (SIGKILL: no clean-up runs) or crashed (abort) mid-warm-up: its
    warm-up process, still compiling into an empty cache, ends within seconds."""
    import signal
    import time

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "empty-cache"))
    editor = subprocess.Popen([sys.executable, "-c", EDITOR], cwd=REPO, env=env,
                              stdout=subprocess.PIPE, text=True)
    try:
        child = int(editor.stdout.readline())
        time.sleep(1.0)
        assert _running(child), "the warm-up process should still be compiling"
        editor.send_signal(signal.SIGKILL if how == "kill" else signal.SIGABRT)
        editor.wait(30)
        deadline = time.monotonic() + 20
        while _running(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(child), "the warm-up process outlived its editor"
    finally:
        editor.kill()
        editor.wait()
