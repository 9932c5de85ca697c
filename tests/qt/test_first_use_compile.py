"""A backend's first use with a cold kernel cache: its kernels compile on a worker thread with
a status saying so, the window keeps working meanwhile, and the build time shown afterwards
is the build's alone."""
from __future__ import annotations

import threading
import time

import pytest


@pytest.fixture
def slow_cold_grid(monkeypatch):
    """The grid's kernel cache reads as cold, and its warm-up blocks until the test releases
    it (standing in for a compile of many seconds)."""
    import editor.warmup as warmup

    release = threading.Event()
    calls = []
    real_warm = warmup.warm_in_process
    monkeypatch.setattr(warmup, "_READY_HERE", set())
    monkeypatch.setattr(warmup, "cache_is_cold", lambda backend: backend == "grid")

    def warm_in_process(backend, **options):
        calls.append((backend, threading.current_thread() is threading.main_thread()))
        if backend == "grid":
            start = time.perf_counter()
            release.wait(30)
            calls.append(("blocked_ms", (time.perf_counter() - start) * 1e3))
        real_warm(backend, **options)  # then the real thing (quick once the disk cache holds it)

    monkeypatch.setattr(warmup, "warm_in_process", warm_in_process)
    return release, calls


def test_first_switch_compiles_on_a_worker_with_a_status(window, qtbot, slow_cold_grid):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    release, calls = slow_cold_grid
    doc = window.document
    combo = window.params_panel.backend_combo
    combo.setCurrentIndex(combo.findText("grid"))  # the Partition panel's backend chooser
    # the combo's signal returned at once: the compile runs elsewhere and the status says so
    assert doc.rebuilding and doc.index.name == "octree"
    message = window.statusBar().currentMessage()
    assert "Preparing the grid" in message and "first use only" in message
    assert window.progress.isVisible()
    qtbot.waitUntil(lambda: ("grid", False) in calls, timeout=5000)  # on a worker thread
    # before it, on the same worker, the kernels of the tree still on screen were loaded into
    # the process, so the GUI thread never waits behind the compiler lock for them
    assert calls[0] == ("octree", False)

    # meanwhile the window works: a key toggles the overlay through its View action
    window.activateWindow()
    qtbot.waitActive(window)
    shown = window.act_overlay.isChecked()
    window.act_overlay.trigger()
    qtbot.wait(50)
    assert window.act_overlay.isChecked() != shown and doc.rebuilding
    QTest.keyClick(window, Qt.Key_F10)  # and the simulation steps
    qtbot.waitUntil(lambda: window.timeline.frame >= 1, timeout=5000)
    window.timeline.stop()
    qtbot.wait(400)

    with qtbot.waitSignal(doc.rebuild_finished, timeout=30000) as finished:
        release.set()
    assert doc.index.name == "grid" and not doc.rebuilding
    blocked_ms = next(c[1] for c in calls if c[0] == "blocked_ms")  # the build's own warm-up
    assert blocked_ms >= 400
    # neither the status bar's rebuild time nor the Statistics panel counts the compile
    assert finished.args[0] < blocked_ms
    assert doc.index.stats()["build_ms"] < blocked_ms
    assert not window.progress.isVisible()


def test_a_warm_backend_switches_in_place(window, slow_cold_grid):
    """The check above can fail: only a cold backend goes to the worker."""
    doc = window.document
    combo = window.params_panel.backend_combo
    combo.setCurrentIndex(combo.findText("bvh"))
    assert doc.index.name == "bvh" and not doc.rebuilding
    assert "Preparing" not in window.statusBar().currentMessage()


class _SlowWarmup:
    """Stands in for :class:`editor.warmup.KernelWarmup` on a first start: its kernels are
    ready when the test says so."""

    backend = "octree"

    def __init__(self) -> None:
        self.ready = False
        self.release = threading.Event()
        self.waited_on_gui_thread = False

    def wait_ready(self, timeout: float = 600.0) -> bool:
        if threading.current_thread() is threading.main_thread() and not self.ready:
            self.waited_on_gui_thread = True
        self.ready = self.release.wait(timeout)
        return self.ready

    def finished(self) -> bool:
        return self.ready


def test_first_start_shows_the_window_while_the_kernels_compile(qtbot, settings):
    from editor.qt.main_window import MainWindow

    window = MainWindow(settings=settings, use_gl=False)
    window.ask_save = lambda: "discard"
    qtbot.addWidget(window)
    window.kernel_warmup = warmup = _SlowWarmup()
    assert window.open_file(None, background=True)  # what app.py does on a cold cache
    window.show()
    qtbot.waitExposed(window)
    qtbot.wait(300)
    assert window.document is None  # the level waits for the kernels ...
    message = window.statusBar().currentMessage()
    assert "Preparing the octree" in message and "first start only" in message
    window.act_overlay.trigger()  # ... and the window works meanwhile
    assert not window.act_overlay.isChecked()
    with qtbot.waitSignal(window.state.document_replaced, timeout=60000):
        warmup.release.set()
    assert window.document is not None and window.document.index.name == "octree"
    assert not warmup.waited_on_gui_thread
    assert not window.progress.isVisible()
