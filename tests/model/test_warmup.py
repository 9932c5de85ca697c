"""The kernel warm-up of a first start (``editor.warmup``): cold-cache detection and the
process protocol. The warm-up process is real; it compiles into the run's numba cache."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from editor.warmup import (
    EDITS_READY,
    FAMILIES,
    LEVEL_READY,
    PAIRS_READY,
    QUERIES_READY,
    READY,
    SIMULATION_READY,
    FamilyLoader,
    KernelWarmup,
    cache_is_cold,
    warm,
)

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


def _count_pair_finding(monkeypatch, backend: str) -> list[str]:
    """Calls of ``backend``'s pair finding (``pairs``, ``count_pairs``), recorded and not run."""
    from spatial.registry import default_registry
    cls = default_registry().backend(backend)
    calls: list[str] = []
    for name in ("pairs", "count_pairs"):
        monkeypatch.setattr(cls, name, lambda self, *a, _name=name, **k: calls.append(_name))
    return calls


def test_the_tools_part_warms_picking_and_editing_without_pair_finding(monkeypatch):
    """A first start's first process caches what a user does first — editing (a click picks
    without kernels until picking's are loaded), then picking's query tools — and never waits
    for pair finding's compile (the second process does that)."""
    calls = _count_pair_finding(monkeypatch, "octree")
    said: list[str] = []
    warm("octree", announce=said.append, part="tools")
    assert said == [READY, EDITS_READY, QUERIES_READY]
    assert calls == [], "pair finding would hold picking and editing back"


def test_the_pairs_part_warms_pair_finding_and_the_simulation():
    said: list[str] = []
    warm("octree", announce=said.append, part="pairs")
    assert said == [PAIRS_READY, SIMULATION_READY]


def test_loading_picking_and_editing_never_runs_pair_finding(monkeypatch):
    """The editor loads picking and editing while the pairs process may still compile pair
    finding: loading them must not call it (it would compile in the editor's process)."""
    calls = _count_pair_finding(monkeypatch, "octree")
    loader = FamilyLoader("octree")
    loader.load("pick")
    loader.load("edit")
    assert calls == []
    loader.load("simulate")
    assert "count_pairs" in calls and "pairs" in calls


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
        for line in FAMILIES.values():
            assert warmup.wait_ready(timeout=600, line=line)
        # pair finding and the simulation came from a second process, started after "ready"
        assert warmup.second is not None and warmup.second.pid != warmup.process.pid
        assert warmup.wait_finished(timeout=600)
        assert warmup.process.returncode == 0 and warmup.second.returncode == 0
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


#: warms the octree in a fresh process with an empty cache and prints, per kernel the octree's
#: modules define, the signatures numba compiled (nested calls included; a shared helper such
#: as ``spatial.kernels.grow`` is rightly compiled for each array type it is given)
COMPILED_SIGNATURES = """
import json, sys
from editor.warmup import warm
warm("octree", announce=lambda line: None)
found = {}
for name, module in list(sys.modules.items()):
    if name.startswith("plugins.octree"):
        for key, value in vars(module).items():
            if hasattr(value, "py_func") and hasattr(value, "signatures") and \
                    value.py_func.__module__ == name:  # its own, not an imported helper
                found[f"{name}.{key}"] = [str(sig) for sig in value.signatures]
print(json.dumps(found))
"""


@pytest.mark.slow
def test_a_cold_warm_up_compiles_each_octree_kernel_once(tmp_path):
    """No octree kernel is compiled twice for one call: a literal ``0`` passed to a kernel
    (or a counter starting at ``0``) made numba compile the callee once for ``Literal[int](0)``
    and again for ``int64`` — a dozen kernels, about 6 s of a fresh install's compile."""
    import json

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "empty-cache"))
    done = subprocess.run([sys.executable, "-c", COMPILED_SIGNATURES], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found, "no octree kernel was seen"
    literal = {name: sigs for name, sigs in found.items() if any("Literal" in s for s in sigs)}
    assert not literal, f"compiled for a literal argument too: {sorted(literal)}"
    twice = {name: sigs for name, sigs in found.items() if len(sigs) > 1}
    assert not twice, f"compiled more than once: {twice}"


class _FakeProcess:
    """A warm-up process that prints its part's lines at once (noting each in ``printed``)
    and exits with status 0."""

    LINES = {"tools": [READY, EDITS_READY, QUERIES_READY], "pairs": [PAIRS_READY, SIMULATION_READY],
             "level": [LEVEL_READY]}

    def __init__(self, command, printed: list[str], lines=None) -> None:
        self.part = command[command.index("--part") + 1]
        self.LINES = dict(self.LINES, **(lines or {}))
        self.stdout = self._lines(printed)
        self.stdin = None
        self.returncode = 0

    def _lines(self, printed: list[str]):
        for line in self.LINES[self.part]:
            printed.append(line)
            yield line + "\n"

    def poll(self):
        return 0

    def wait(self, timeout=None):
        return 0


@pytest.mark.parametrize("first_start", [True, False])
def test_the_pairs_process_starts_once_editing_is_cached_on_a_first_start(monkeypatch,
                                                                          first_start):
    """A first start leaves the second core to the ``tools`` process until editing is cached
    (editing is what a first session waits for); a first switch starts pair finding as soon
    as the first frame is cached (its new tree waits for it)."""
    import editor.warmup as warmup_module

    printed: list[str] = []
    printed_when_second_started: list[list[str]] = []

    def popen(command, **kwargs):
        process = _FakeProcess(command, printed)
        if process.part == "pairs":
            printed_when_second_started.append(list(printed))
        return process

    monkeypatch.setattr(warmup_module.subprocess, "Popen", popen)
    monkeypatch.setattr(warmup_module, "cache_is_cold", lambda backend: True)
    warmup = KernelWarmup.start_if_cold("octree") if first_start else KernelWarmup("octree")
    assert warmup is not None
    assert warmup.wait_ready(timeout=30, line=SIMULATION_READY)
    assert warmup.wait_finished(timeout=30)
    expected = [READY, EDITS_READY] if first_start else [READY]
    assert printed_when_second_started == [expected]


def test_a_first_start_reads_levels_with_kernels_a_third_process_cached(monkeypatch):
    """A first start runs the ``level`` part at once, beside ``tools``: the loading thread's
    wait for it ends when it says so; a first switch starts no such process."""
    import editor.warmup as warmup_module

    started: list[str] = []

    def popen(command, **kwargs):
        process = _FakeProcess(command, [])
        started.append(process.part)
        return process

    monkeypatch.setattr(warmup_module.subprocess, "Popen", popen)
    monkeypatch.setattr(warmup_module, "cache_is_cold", lambda backend: True)
    warmup = KernelWarmup.start_if_cold("octree")
    # the fake says its lines at once, so ``pairs`` may start between the two
    assert warmup is not None and started[0] == "tools" and "level" in started
    assert warmup.wait_level_kernels(timeout=30)
    assert warmup.wait_finished(timeout=30)
    switch = KernelWarmup("octree")
    assert not switch.wait_level_kernels(timeout=30)  # at once: there is no such process
    assert switch.wait_finished(timeout=30)
    assert started.count("level") == 1


def test_the_wait_for_level_kernels_ends_when_that_process_dies(monkeypatch):
    """A ``level`` process that ends without its line (a crash) ends the loading thread's
    wait at once, however long the other processes still compile: the editor then reads the
    level compiling those kernels itself, as before the process existed."""
    import threading

    import editor.warmup as warmup_module

    release = threading.Event()

    class Compiling(_FakeProcess):
        def _lines(self, printed):
            for line in self.LINES[self.part]:
                if self.part == "tools":
                    release.wait(30)  # still compiling the first frame
                yield line + "\n"

    monkeypatch.setattr(warmup_module.subprocess, "Popen", lambda command, **kwargs: Compiling(
        command, [], lines={"level": []}))
    monkeypatch.setattr(warmup_module, "cache_is_cold", lambda backend: True)
    warmup = KernelWarmup.start_if_cold("octree")
    assert warmup is not None
    try:
        assert not warmup.wait_level_kernels(timeout=20)
        assert READY not in warmup.said, "it did not wait for the other processes"
    finally:
        release.set()
    assert warmup.wait_finished(timeout=30)
