"""Test-session setup shared by every test directory."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO.parent / "shared" / "data").resolve()


def shared_file(*parts: str) -> Path:
    """Path of a file under ../shared/data, skipping the test with a clear reason when absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real-level data not available: {path} is absent (needs ../shared beside the repo)")
    return path


@pytest.fixture(autouse=True)
def _isolated_user_plugins(tmp_path_factory, monkeypatch):
    """Tests never read the developer's own per-user plugin folder or settings."""
    config = tmp_path_factory.getbasetemp() / "xdg-config"
    config.mkdir(exist_ok=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))


@pytest.fixture(autouse=True)
def _garbage_collected_between_tests():
    """Once an editor window has moved cyclic garbage collection onto its GUI thread's timer
    (``editor.qt.gui_collector``), tests that never run an event loop would never collect:
    collect what is due after each test, on this (the GUI) thread."""
    yield
    import sys
    collector = sys.modules.get("editor.qt.gui_collector")
    if collector is not None:
        collector.collect_if_due()


@pytest.fixture
def earlier_objects_frozen():
    """Objects made before the test are left out of every garbage collection during it
    (``gc.freeze``), and handed back to the collector after it.

    The benchmark harness collects garbage before each timed run (``benchmarks/timing.py``,
    ``benchmarks/run.py``); late in a session the test process holds millions of objects of
    earlier tests (the GUI tests' windows and levels), and each such full collection walked
    them all again: about 3 s each, over two minutes for the benchmark tests. Frozen, a
    collection walks only what the test itself made, which is what the harness means to clear.
    """
    import gc
    gc.freeze()
    yield
    gc.unfreeze()
