"""A backend's first use with a cold kernel cache: its kernels compile in a child process
while a worker thread waits, with a status saying so; the window keeps working meanwhile, and
the build time shown afterwards is the build's alone. If the child process fails, the kernels
compile in the editor's own process, and the status says that too."""
from __future__ import annotations

import sys
import threading
import time

import pytest

#: a folder plugin: the brute-force backend under another name, whose build also calls a
#: numba kernel of its own. Its source file is new in every test, so numba's disk cache has
#: never seen that kernel: whichever process runs it first compiles it.
PROBE_PLUGIN = """
import numba

from plugins.brute import BruteForce


@numba.njit(cache=True, nogil=True)
def probe_sum(lo):
    total = 0.0
    for i in range(lo.shape[0]):
        total += lo[i, 0]
    return total


class ProbeIndex(BruteForce):
    name = "{name}"
    description = "brute force with a kernel of its own (first-use compile test)"

    def _build(self, slots):
        self.probe_total = probe_sum(self.objects.lo)


def register(registry):
    registry.add_backend(ProbeIndex)
"""


@pytest.fixture
def slow_cold_grid(monkeypatch):
    """The grid's kernel cache reads as cold, its compile process says ``ready`` at once, and
    its warm-up in this process blocks until the test releases it (standing in for a compile
    of many seconds)."""
    import editor.warmup as warmup

    release = threading.Event()
    calls = []
    real_warm = warmup.warm_in_process
    monkeypatch.setattr(warmup, "_READY_HERE", set())
    monkeypatch.setattr(warmup, "cache_is_cold", lambda backend: backend == "grid")
    monkeypatch.setattr(warmup, "warmup_command",
                        lambda backend: [sys.executable, "-c",
                                         "print('ready'); print('pairs ready')"])

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
    # the compile process said it cached the first frame's and pair finding's kernels: the
    # progress bar shows steps (not the busy animation, which recomposes the window nonstop)
    qtbot.waitUntil(lambda: window.progress.value() >= 80, timeout=5000)
    assert window.progress.maximum() == 100
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


@pytest.fixture
def probe_backend(monkeypatch, tmp_path, window):
    """Register a new folder plugin backend (:data:`PROBE_PLUGIN`) in this process, and in
    the compile process through ``$PARTITION_STUDIO_PLUGIN_PATH``; the window's backend
    chooser lists it. Returns a function giving its module (for the kernel's statistics)."""
    import editor.warmup as warmup
    from editor.qt.dialogs import reload_backend_chooser
    from spatial.registry import PLUGIN_PATH_ENV, default_registry

    name = f"probe_{tmp_path.name[-12:].replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(PROBE_PLUGIN.format(name=name), encoding="utf-8")
    registry = default_registry()
    for table in ("backends", "importers", "exporters", "motions", "plugins", "_modules"):
        monkeypatch.setattr(registry, table, dict(getattr(registry, table)))
    monkeypatch.setenv(PLUGIN_PATH_ENV, str(tmp_path))
    monkeypatch.setattr(warmup, "_READY_HERE", set())
    registry.load_folder(tmp_path)
    assert name in registry.backends, registry.failures
    reload_backend_chooser(window.params_panel)
    return name, sys.modules[f"partition_studio_user_plugins.{name}"]


def _switch_and_wait(window, qtbot, name: str):
    """Choose ``name`` in the Partition panel and wait until its tree is the document's and
    its remaining kernels are loaded; returns the status messages shown meanwhile."""
    import editor.warmup as warmup

    messages = []
    window.statusBar().messageChanged.connect(messages.append)
    doc = window.document
    combo = window.params_panel.backend_combo
    with qtbot.waitSignal(doc.rebuild_finished, timeout=300000):
        combo.setCurrentIndex(combo.findText(name))
        assert doc.rebuilding, "a cold backend is prepared off the GUI thread"
    qtbot.waitUntil(lambda: not warmup._PREPARING, timeout=300000)
    qtbot.wait(50)  # the last status line is queued from the worker thread
    window.statusBar().messageChanged.disconnect(messages.append)
    assert doc.index.name == name
    return messages


@pytest.mark.slow
def test_first_switch_compiles_in_another_process(window, qtbot, probe_backend):
    """The new backend's kernel was compiled by the child process: this process only loaded
    it from the disk cache (a compile here would count a cache miss)."""
    name, module = probe_backend
    messages = _switch_and_wait(window, qtbot, name)
    stats = module.probe_sum.stats
    assert not stats.cache_misses, "compiled in the editor's process"
    assert sum(stats.cache_hits.values()) >= 1, "loaded from the cache the child process wrote"
    assert any(f"Preparing the {name}" in m and "first use only" in m for m in messages)
    assert not any("own process" in m for m in messages), messages
    assert window.document.index.probe_total == pytest.approx(
        window.document.index.objects.lo[window.document.index.objects.alive_slots(), 0].sum())


@pytest.mark.slow
def test_a_failed_compile_process_falls_back_to_this_process(window, qtbot, probe_backend,
                                                              monkeypatch):
    """A compile process that dies without caching anything: the kernels compile here, as
    before there was a child process, and the status line says so."""
    import editor.warmup as warmup

    name, module = probe_backend
    monkeypatch.setattr(warmup, "warmup_command",
                        lambda backend: [sys.executable, "-c", "import os; os.abort()"])
    messages = _switch_and_wait(window, qtbot, name)
    assert sum(module.probe_sum.stats.cache_misses.values()) >= 1, "compiled in this process"
    fallback = [m for m in messages if "own process" in m]
    assert fallback and "stopped by signal" in fallback[0] and name in fallback[0]
