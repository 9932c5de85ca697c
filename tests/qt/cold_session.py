"""A first session with an empty kernel cache, driven through the real window, recording
every numba kernel compiled or loaded and on which thread.

Run by ``test_cold_session.py`` in a process of its own (the kernel cache is per process and
per ``$NUMBA_CACHE_DIR``): ``python -m tests.qt.cold_session OUT.json [LEVEL] [--switch
BACKEND,...|all] [--tune SECONDS] [--gl] [--until open]``. It starts the editor as ``python app.py`` does on a first
start (the warm-up processes, the level loading in the background,
:class:`editor.qt.kernel_readiness.KernelReadiness`), clicks a brush in the Top view as soon as
the level is on screen (the Select tool picks without kernels), waits until editing is enabled,
then clicks a brush, nudges it with an arrow key and drags a new brush with the Brush tool
(picking's query tools and the simulation may still be compiling meanwhile); once every tool
is enabled it plays the simulation for a moment, pauses, stops, steps one frame (Step makes the
simulation anew), drags the timeline's slider back to the first frame (a seek), optionally runs
the tuner (Tools → Tune parameters…) and switches to other backends through the Partition
panel's combo box. ``--gl`` shows the 3D view (a real OpenGL window: run it with the ``xcb``
platform under a display); ``--until open`` ends the session once the level is on screen.
``OUT.json`` gets the compile records, when each family of tools was enabled and what each step
did.
"""
from __future__ import annotations

import time

#: the process's start, as near as Python gets to it: the session's times run from here
STARTED = time.perf_counter()

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402

import numba.core.dispatcher as dispatcher  # noqa: E402

RECORDS: list[dict] = []
PHASE = ["start"]
#: writes what the session has so far to OUT.json (set by main): after each backend switch,
#: so a session stopped during a long switch still reports the steps before it
SAVE: list = []
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


def _since_start() -> float:
    return round(time.perf_counter() - STARTED, 2)


def _note_warmup_lines(warmup, heard: dict) -> None:
    """Note in ``heard`` when each line of the warm-up processes was first seen (polled every
    20 ms on a thread of its own, which only reads a set)."""
    def note() -> None:
        try:
            said = list(warmup.said)
        except RuntimeError:  # a reader thread added a line meanwhile: seen at the next poll
            return
        for line in said:
            heard.setdefault(line, _since_start())

    def poll() -> None:
        while not warmup.finished():
            note()
            time.sleep(0.02)
        note()
    threading.Thread(target=poll, name="warmup-lines", daemon=True).start()


def _session(app, window, out: dict, beat, switch_to: list[str], tune_s: float) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from tests.qt.conftest import drag, view_pos
    readiness = window.kernel_readiness
    window.activateWindow()
    top = window.views2d["Top"]
    oid, u, v = _brush_point(window.document)
    # the level is on screen: a click selects at once (no kernel needed), editing may wait
    out["select_enabled_at_open"] = window.tool_actions["select"].isEnabled()
    out["pending_at_open_click"] = list(readiness.pending)
    beat.enter("click_at_open")
    QTest.mouseClick(top.viewport(), Qt.LeftButton, Qt.NoModifier, view_pos(top, u, v))
    QTest.qWait(300)
    out["selected_at_open"] = sorted(window.document.selection)
    # editing: what a user does next (nudge, new brush, delete, undo)
    beat.enter("edit_wait")
    out["edit_ready"] = _wait(app, lambda: readiness.ready("edit"), 1800)
    out["edit_ready_s"] = _since_start()
    out["pending_when_edit_ready"] = list(readiness.pending)
    QTest.qWait(200)
    beat.enter("click")
    QTest.mouseClick(top.viewport(), Qt.LeftButton, Qt.NoModifier, view_pos(top, u, v))
    QTest.qWait(300)
    out["selected"] = sorted(window.document.selection)
    beat.enter("nudge")
    # the brush the click selected (where brushes overlap, not always the smallest one)
    picked = sorted(window.document.selection) or [oid]
    before = window.document.scene.bounds_of(picked)[0].copy()
    top.setFocus()
    QTest.keyClick(top, Qt.Key_Right)
    QTest.qWait(300)
    out["moved"] = bool((window.document.scene.bounds_of(picked)[0] != before).any())
    beat.enter("new_brush")
    brushes = len(window.document.scene.brush_ids())
    window.tool_actions["brush"].trigger()
    (u0, u1), (v0, v1) = top.vb.viewRange()  # a corner of what the Top view shows
    drag(top, (u0 + 0.05 * (u1 - u0), v0 + 0.05 * (v1 - v0)),
         (u0 + 0.15 * (u1 - u0), v0 + 0.15 * (v1 - v0)))
    QTest.qWait(300)
    window.tool_actions["select"].trigger()
    out["new_brushes"] = len(window.document.scene.brush_ids()) - brushes
    # every tool: Play and Step wait for the simulation's kernels
    beat.enter("tools_wait")
    out["tools_ready"] = _wait(app, lambda: not readiness.pending, 1800)
    out["tools_ready_s"] = _since_start()
    out["pick_ready_s"] = out["family_ready_s"].get("pick")
    beat.enter("play")
    window.act_play.trigger()
    _wait(app, lambda: window.timeline.frame >= 5, 120)
    beat.enter("pause")
    window.act_play.trigger()
    QTest.qWait(300)
    out["frames"] = window.timeline.frame
    _step_and_seek(app, window, out, beat)
    if tune_s > 0:
        _tune(app, window, out, beat, tune_s)
    for backend in switch_to:
        _switch(app, window, out, beat, backend)
    beat.enter("end")


def _step_and_seek(app, window, out: dict, beat) -> None:
    """Stop (back to the edited level), Step one frame (the simulation is made anew), step
    two more, then drag the timeline's slider back to the first frame."""
    from PySide6.QtTest import QTest
    timeline = window.timeline
    beat.enter("stop")
    window.act_stop.trigger()
    QTest.qWait(300)
    beat.enter("step")
    window.act_step.trigger()
    _wait(app, lambda: timeline.frame >= 1, 120)
    QTest.qWait(300)
    for _ in range(2):
        window.act_step.trigger()
        QTest.qWait(100)
    out["stepped_to"] = timeline.frame
    beat.enter("seek")
    slider = window.timeline_panel.slider
    slider.setValue(slider.minimum())  # what dragging it to the left end does
    _wait(app, lambda: timeline.frame == slider.minimum(), 120)
    QTest.qWait(300)
    out["sought_to"] = timeline.frame


def _tune(app, window, out: dict, beat, budget_s: float) -> None:
    """Tools → Tune parameters… (Ctrl+T), Run, until the search is done."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    QTest.keySequence(window, "Ctrl+T")
    dialog = getattr(window, "tune_dialog", None)
    if dialog is None:
        out["tune"] = {"done": False, "why": "Ctrl+T opened no dialog"}
        return
    dialog.budget_spin.setValue(budget_s)
    QTest.qWait(200)
    beat.enter("tune")
    start = time.perf_counter()
    QTest.mouseClick(dialog.run_button, Qt.LeftButton)
    done = _wait(app, lambda: not dialog.running, budget_s + 1200)
    out["tune"] = {"done": done, "s": round(time.perf_counter() - start, 1),
                   "backend": dialog.backend_combo.currentText(), "trials": len(dialog.rows)}
    dialog.close()
    QTest.qWait(100)


def _switch(app, window, out: dict, beat, backend: str) -> None:
    """Choose ``backend`` in the Partition panel's combo box and wait until its tree is shown
    and every tool is enabled again."""
    combo = window.params_panel.backend_combo
    found = combo.findData(backend)
    switches = out.setdefault("switches", {})
    if found < 0:
        switches[backend] = {"done": False, "why": "not offered for this level"}
        return
    doc, readiness = window.document, window.kernel_readiness
    beat.enter(f"switch_{backend}")
    start = time.perf_counter()
    combo.setCurrentIndex(found)
    shown = _wait(app, lambda: doc.index.name == backend and not doc.rebuilding, 1800)
    shown_s = time.perf_counter() - start
    ready = _wait(app, lambda: not readiness.pending and not readiness._switch_timer.isActive(),
                  1800)
    switches[backend] = {"done": shown and ready, "shown_s": round(shown_s, 1),
                         "tools_s": round(time.perf_counter() - start, 1)}
    beat.enter("between_switches")
    for save in SAVE:
        save()


def offered_backends(window) -> list[str]:
    """The backends the Partition panel's combo box offers, in its order."""
    combo = window.params_panel.backend_combo
    return [combo.itemData(i) for i in range(combo.count()) if combo.itemData(i)]


def main(argv: list[str]) -> int:
    dispatcher.Dispatcher.compile = _recording_compile
    from PySide6.QtCore import QCoreApplication, QSettings, Qt
    QCoreApplication.setAttribute(Qt.AA_ShareOpenGLContexts)
    import argparse
    import tempfile

    from editor.qt.app_main import make_application
    from editor.qt.kernel_readiness import start_kernel_readiness
    from editor.qt.main_window import MainWindow
    from editor.warmup import KernelWarmup
    parser = argparse.ArgumentParser(prog="python -m tests.qt.cold_session")
    parser.add_argument("out")
    parser.add_argument("level", nargs="?")
    parser.add_argument("--switch", default="", help="backends to switch to, or 'all'")
    parser.add_argument("--tune", type=float, default=0.0, help="tuner budget in seconds (0: none)")
    parser.add_argument("--gl", action="store_true", help="show the 3D view (OpenGL)")
    parser.add_argument("--until", choices=["open", "end"], default="end",
                        help="end the session once the level is on screen, or after every step")
    args = parser.parse_args(argv)
    out_path, level = args.out, args.level
    app = make_application()
    warmup = KernelWarmup.start_if_cold("octree")
    settings = QSettings(tempfile.mktemp(suffix=".ini"), QSettings.IniFormat)
    window = MainWindow(settings=settings, use_gl=args.gl)
    window.ask_save = lambda: "discard"
    window.kernel_warmup = warmup
    start_kernel_readiness(window, "octree", warmup)
    out: dict = {"cold": warmup is not None, "family_ready_s": {}, "gl": args.gl,
                 "warmup_lines_s": {}}
    if warmup is not None:
        _note_warmup_lines(warmup, out["warmup_lines_s"])
    window.kernel_readiness.family_ready.connect(
        lambda family: out["family_ready_s"].setdefault(family, _since_start()))  # the first time
    beat = _Heartbeat()
    # the window's first frame (every view painted once) is a phase of its own: with the 3D
    # view it is the OpenGL set-up, whatever the level does meanwhile
    beat.enter("show")
    window.resize(1400, 900)
    window.open_file(level, background=True)
    window.show()
    _wait(app, lambda: window.first_paint.done, 1800)
    out["shown_s"] = _since_start()
    beat.enter("open")
    _wait(app, lambda: window.document is not None, 1800)
    out["open_s"] = _since_start()
    switch_to = [b for b in offered_backends(window) if b != window.document.index.name] \
        if args.switch == "all" else [b for b in args.switch.split(",") if b]
    def save() -> None:
        out["second_process"] = warmup is not None and warmup.second is not None
        out["records"] = RECORDS
        out["phases"] = {k: {"s": round(v[0], 2), "stall_ms": round(v[1], 1)}
                         for k, v in TIMES.items()}
        with open(out_path + ".part", "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
        os.replace(out_path + ".part", out_path)
    SAVE.append(save)
    if args.until == "open":
        beat.enter("end")
    else:
        _session(app, window, out, beat, switch_to, args.tune)
    save()
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
