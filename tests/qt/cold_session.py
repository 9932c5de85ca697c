"""A first session with an empty kernel cache, driven through the real window, recording
every numba kernel compiled or loaded and on which thread.

Run by ``test_cold_session.py`` in a process of its own (the kernel cache is per process and
per ``$NUMBA_CACHE_DIR``): ``python -m tests.qt.cold_session OUT.json [LEVEL]``. It starts the
editor as ``python app.py`` does on a first start (the warm-up process, the level loading in
the background, :class:`editor.qt.kernel_readiness.KernelReadiness`), waits until the tools
are enabled, then clicks a brush in the Top view, nudges it with an arrow key and plays the
simulation for a moment. ``OUT.json`` gets the compile records and what each step did.
"""
from __future__ import annotations

import json
import sys
import threading
import time

import numba.core.dispatcher as dispatcher

RECORDS: list[dict] = []
PHASE = ["start"]
#: phase -> [seconds it took, longest gap between two 10 ms heartbeats on the window's thread]
TIMES: dict[str, list[float]] = {}


class _Heartbeat:
    """A 10 ms timer on the window's thread: the longest gap between ticks in each phase is
    the longest stall of that phase."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer
        self.last = time.perf_counter()
        self.phase_start = self.last
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

    def tick(self) -> None:
        now = time.perf_counter()
        entry = TIMES.setdefault(PHASE[0], [0.0, 0.0])
        entry[1] = max(entry[1], (now - self.last) * 1e3)
        self.last = now

    def enter(self, phase: str) -> None:
        """Close the current phase (its duration) and start ``phase``."""
        self.tick()
        now = time.perf_counter()
        TIMES.setdefault(PHASE[0], [0.0, 0.0])[0] = now - self.phase_start
        self.phase_start = now
        PHASE[0] = phase
_compile = dispatcher.Dispatcher.compile


def _recording_compile(self, sig):
    """numba's ``Dispatcher.compile`` (called for a signature not yet in the process: it loads
    it from the disk cache or compiles it), noting whether it was a cache miss and where."""
    cache = self._cache is not None
    misses = sum(self.stats.cache_misses.values()) if cache else 0
    start = time.perf_counter()
    try:
        return _compile(self, sig)
    finally:
        RECORDS.append({
            "kernel": f"{self.py_func.__module__}.{self.py_func.__qualname__}",
            "gui_thread": threading.current_thread() is threading.main_thread(),
            "compiled": (sum(self.stats.cache_misses.values()) if cache else 0) != misses,
            "cached_kernel": cache, "ms": round((time.perf_counter() - start) * 1e3, 1),
            "phase": PHASE[0]})


def _wait(app, until, timeout_s: float) -> bool:
    deadline = time.perf_counter() + timeout_s
    while not until() and time.perf_counter() < deadline:
        app.processEvents()
        time.sleep(0.005)
    return until()


def _brush_point(doc):
    """The centre of the smallest brush, in Top view coordinates."""
    import numpy as np
    ids = doc.scene.brush_ids()
    lo, hi = doc.scene.bounds_of(ids)
    k = int(np.argmin((hi - lo).prod(axis=1)))
    return ids[k], float((lo[k, 0] + hi[k, 0]) / 2), float((lo[k, 1] + hi[k, 1]) / 2)


def _session(app, window, out: dict, beat) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from tests.qt.conftest import view_pos
    readiness = window.kernel_readiness
    beat.enter("tools")
    start = time.perf_counter()
    out["tools_ready"] = _wait(app, lambda: not readiness.pending, 1800)
    out["tools_ready_s"] = round(time.perf_counter() - start, 1)
    out["enabled_while_waiting"] = out.get("enabled_while_waiting", False)
    window.activateWindow()
    QTest.qWait(200)
    top = window.views2d["Top"]
    oid, u, v = _brush_point(window.document)
    beat.enter("click")
    QTest.mouseClick(top.viewport(), Qt.LeftButton, Qt.NoModifier, view_pos(top, u, v))
    QTest.qWait(300)
    out["selected"] = sorted(window.document.selection)
    beat.enter("nudge")
    before = window.document.scene.bounds_of([oid])[0].copy()
    top.setFocus()
    QTest.keyClick(top, Qt.Key_Right)
    QTest.qWait(300)
    out["moved"] = bool((window.document.scene.bounds_of([oid])[0] != before).any())
    beat.enter("play")
    window.act_play.trigger()
    _wait(app, lambda: window.timeline.frame >= 5, 120)
    window.act_play.trigger()
    out["frames"] = window.timeline.frame
    beat.enter("end")


def main(argv: list[str]) -> int:
    dispatcher.Dispatcher.compile = _recording_compile
    from PySide6.QtCore import QCoreApplication, QSettings, Qt
    QCoreApplication.setAttribute(Qt.AA_ShareOpenGLContexts)
    import tempfile

    from editor.qt.app_main import make_application
    from editor.qt.kernel_readiness import start_kernel_readiness
    from editor.qt.main_window import MainWindow
    from editor.warmup import KernelWarmup

    out_path, level = argv[0], (argv[1] if len(argv) > 1 else None)
    app = make_application()
    warmup = KernelWarmup.start_if_cold("octree")
    settings = QSettings(tempfile.mktemp(suffix=".ini"), QSettings.IniFormat)
    window = MainWindow(settings=settings, use_gl=False)
    window.ask_save = lambda: "discard"
    window.kernel_warmup = warmup
    start_kernel_readiness(window, "octree", warmup)
    out: dict = {"cold": warmup is not None}
    beat = _Heartbeat()
    beat.enter("open")
    window.resize(1400, 900)
    window.open_file(level, background=True)
    window.show()
    _wait(app, lambda: window.document is not None, 1800)
    out["select_enabled_before_ready"] = bool(window.kernel_readiness.pending) and \
        window.tool_actions["ray"].isEnabled()
    _session(app, window, out, beat)
    out["records"] = RECORDS
    out["phases"] = {k: {"s": round(v[0], 2), "stall_ms": round(v[1], 1)} for k, v in TIMES.items()}
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
