"""The kernel warm-up of a first start (``editor.warmup``): cold-cache detection and the
process protocol. The warm-up process is real; it compiles into the run's numba cache."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from editor.warmup import PAIRS_READY, READY, KernelWarmup, cache_is_cold, warm

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
    assert said == [READY, PAIRS_READY]


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
    assert command[4:] == ["--plugin-dir", str(tmp_path / "my-plugins")]
