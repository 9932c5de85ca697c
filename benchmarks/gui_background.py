"""GUI latency rows for work that runs over time rather than per input event.

Companion of :mod:`benchmarks.gui_latency` (which owns the window, the heartbeat and the frame
watch): simulation playback, a tuner search, the Statistics pair count on a big mesh, start-up
(warm and with an empty kernel cache) and the first switch to each backend with an empty
kernel cache. Every row is measured by driving the real window (menu actions, shortcuts,
buttons, the backend combo box) and reports the longest GUI-thread stall seen by the 10 ms
heartbeat while it ran.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import data

REPO = Path(__file__).resolve().parents[1]
E1M1 = str(data.data_file(*data.E1M1))
OBJ = str(data.data_file(*data.OA_DM5))
#: backends a first switch measures with an empty kernel cache (the demo opens on the octree)
FIRST_SWITCH_BACKENDS = "kdtree,bvh,grid,quadtree,bsp"


def _samples(action: str, level: str, **kw):
    from benchmarks.gui_latency import Samples
    return Samples(action, level, **kw)


def _wait(app, done, timeout_s: float) -> bool:
    deadline = time.perf_counter() + timeout_s
    while not done():
        if time.perf_counter() > deadline:
            return False
        app.processEvents()
        time.sleep(0.001)
    return True


def open_level(window, app, path: str | None, timeout_s: float = 300.0) -> bool:
    """File → Open (``Ctrl+O`` answered with ``path``) or the demo level (``None``), until
    the level is the window's document and no rebuild is pending."""
    replaced = []
    window.state.document_replaced.connect(replaced.append)
    try:
        if path is None:
            window.open_file(None)
        else:
            window.prompts.open_path = lambda start, filters: path
            window.act_open.trigger()
        ok = _wait(app, lambda: bool(replaced), timeout_s)
    finally:
        window.state.document_replaced.disconnect(replaced.append)
    doc = window.document
    return ok and _wait(app, lambda: not doc.rebuilding, timeout_s)


def _opened_or_noted(window, app, path: str | None, samples, rows: list) -> bool:
    """Open ``path`` (``None``: the demo); if it is absent or fails, add the row saying so."""
    if path is not None and not os.path.exists(path):
        samples.note = "file absent"
    elif not open_level(window, app, path):
        samples.note = "the level did not open"
    else:
        return True
    rows.append(samples.row())
    return False


def measure_playback(window, app, watch, beat, path: str | None, repeats: int, rows: list,
                     budget_fps: float) -> None:
    """Simulation → Play (``F9``) with *Animate level entities* on; frames shown per second,
    one sample per second of playback after one second of run-in."""
    from PySide6.QtTest import QTest
    level = "demo" if path is None else os.path.basename(path)
    samples = _samples("playback_fps", level, budget=budget_fps, unit="fps", higher_is_better=True)
    if not _opened_or_noted(window, app, path, samples, rows):
        return
    if not window.act_animate.isChecked():
        window.act_animate.trigger()
    window.activateWindow()
    QTest.qWaitForWindowActive(window)
    controller = window.timeline
    shown = []
    controller.frame_changed.connect(shown.append)
    QTest.keyClick(window, _key("F9"))
    QTest.qWait(1000)  # run-in: the first frames build the simulation and its recording
    sim_frames, worst = [], 0.0
    for _ in range(repeats):
        beat.reset()
        n0, gl0 = len(shown), watch.gl_frames
        f0 = controller.frame
        t0 = time.perf_counter()
        QTest.qWait(1000)
        dt = time.perf_counter() - t0
        painted = (watch.gl_frames - gl0) if window.view3d is not None else len(shown) - n0
        samples.times.append(min(len(shown) - n0, painted) / dt)
        sim_frames.append((controller.frame - f0) / dt)
        worst = max(worst, beat.read())
    QTest.keyClick(window, _key("F9"))  # pause
    controller.frame_changed.disconnect(shown.append)
    bodies = window.live_view.bodies_drawn
    window.timeline.stop()
    samples.stall_ms = worst
    samples.note = (f"{bodies} moving bodies; simulated {statistics.median(sim_frames):.0f} frames/s "
                    f"(60 = real time)")
    rows.append(samples.row())


def _key(name: str):
    from PySide6.QtCore import Qt
    return getattr(Qt, f"Key_{name}")


def measure_tuner(window, app, beat, rows: list, budget_s: float, searches: int = 2) -> None:
    """Tools → Tune parameters… (``Ctrl+T``), Run, until the search is done: the longest
    GUI-thread stall meanwhile, one row per search (the first search in a process also loads
    the search's kernels from the disk cache)."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    level = window.document.display_name()
    window.activateWindow()
    QTest.qWaitForWindowActive(window)
    QTest.keySequence(window, "Ctrl+T")
    dialog = getattr(window, "tune_dialog", None)
    if dialog is None:
        rows.append(_samples("tuner_stall", level, budget=100.0, note="Ctrl+T opened no dialog").row())
        return
    dialog.budget_spin.setValue(budget_s)
    for search in range(searches):
        samples = _samples("tuner_stall", f"{level}, {'first' if search == 0 else 'next'} search",
                           budget=100.0)
        QTest.qWait(300)
        beat.reset()
        start = time.perf_counter()
        QTest.mouseClick(dialog.run_button, Qt.LeftButton)
        finished = _wait(app, lambda: not dialog.running, budget_s + 300)
        took = time.perf_counter() - start
        samples.times.append(beat.read())
        samples.stall_ms = beat.read()
        samples.note = (f"{dialog.backend_combo.currentText()}, budget {budget_s:.0f} s, "
                        f"{len(dialog.rows)} trials in {took:.1f} s" + ("" if finished else ", did not finish"))
        rows.append(samples.row())
    dialog.close()
    QTest.qWait(100)


def measure_obj_pairs(window, app, beat, repeats: int, rows: list, path: str = OBJ) -> None:
    """The Statistics panel's pair count on a big mesh: how long it takes on its worker thread
    and the longest GUI-thread stall while it runs. The first count follows File → Open;
    later ones follow a change of the overlay's colour metric (which refreshes the panel)."""
    level = os.path.basename(path)
    samples = _samples("stats_pairs_stall", level, budget=100.0)
    if not _opened_or_noted(window, app, path, samples, rows):
        return
    window.docks["stats"].show()
    window.docks["stats"].raise_()
    panel = window.stats_panel
    combo = window.overlay_panel.metric_combo
    durations = []
    for k in range(repeats):
        if k:
            combo.setCurrentIndex((combo.currentIndex() + 1) % combo.count())
        if not _wait(app, panel.pair_count_pending, 10.0):
            continue  # counted before we looked (or not at all): no sample
        beat.reset()
        start = time.perf_counter()
        _wait(app, lambda: not panel.pair_count_pending(), 300)
        durations.append((time.perf_counter() - start) * 1e3)
        samples.times.append(beat.read())
        samples.stall_ms = max(samples.stall_ms, beat.read())
    if durations:
        samples.note = (f"{window.document.index.name}, {window.document.index.objects.count:,} "
                        f"triangles; the count took {statistics.median(durations):.0f} ms on its "
                        f"worker ({panel.values['pairs'].text().strip()})")
    else:
        samples.note = "no pair count started"
    rows.append(samples.row())


# ---------------------------------------------------------------------- start-up
def measure_startup(rows: list, warm_runs: int, cold_runs: int) -> None:
    """Warm start to the first frame and first start with an empty kernel cache, each a fresh
    ``python app.py`` process (:mod:`benchmarks.startup`)."""
    from benchmarks.startup import PHASES, StartupError, measure
    for kind, runs, budget in (("warm_start", warm_runs, 1500.0), ("cold_start", cold_runs, 8000.0)):
        if runs <= 0:
            continue
        samples = _samples(kind, "demo", budget=budget)
        try:
            results = measure(kind.split("_")[0], runs, 300.0, [])
        except StartupError as exc:
            samples.note = f"failed: {str(exc).splitlines()[0]}"
            rows.append(samples.row())
            continue
        samples.times = [r["total"] * 1e3 for r in results]
        phases = ", ".join(f"{title} {statistics.median(r[title] for r in results):.2f}"
                           for title, _, _ in PHASES)
        samples.note = f"to the first frame of a usable window; median s per phase: {phases}"
        if kind == "cold_start":
            levels = [r["level_shown"] for r in results if r.get("level_shown")]
            if levels:
                samples.note += f"; the demo level on screen at {statistics.median(levels):.2f} s"
        rows.append(samples.row())


def measure_first_switch(rows: list, backends: str = FIRST_SWITCH_BACKENDS) -> None:
    """Run :func:`first_switch_child` in a fresh process with an empty kernel cache."""
    with tempfile.TemporaryDirectory(prefix="first-switch-") as tmp:
        out = Path(tmp) / "rows.json"
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / "numba"),
                   XDG_CONFIG_HOME=str(Path(tmp) / "config"))
        proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "gui_latency.py"),
                               "--first-switch-child", str(out), "--backends", backends],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0 or not out.exists():
            samples = _samples("first_switch_stall", "demo (empty cache)", budget=100.0)
            samples.note = f"the run failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}"
            rows.append(samples.row())
            return
        rows.extend(json.loads(out.read_text(encoding="utf-8")))


def first_switch_child(window, app, watch, beat, backends: list[str], out: str) -> None:
    """In a process whose kernel cache started empty: open the demo level, then choose each
    backend in the Partition panel's combo box; per backend the time until its tree is on
    screen, the longest stall, whether the status bar said it was compiling, and the build
    time the Statistics panel shows."""
    rows = []
    open_level(window, app, None, timeout_s=600)
    panel = window.stats_panel
    _wait(app, lambda: window.kernel_warmup is None or window.kernel_warmup.finished(), 600)
    # the Statistics panel counts pairs a moment after the first frame (compiling the octree's
    # pair kernels on its worker): let it finish, so each switch is measured on its own
    _wait(app, panel.pair_count_pending, 5)
    _wait(app, lambda: not panel.pair_count_pending(), 600)
    combo = window.params_panel.backend_combo
    names = [combo.itemText(i) for i in range(combo.count())]
    doc = window.document
    for name in backends:
        if name not in names:
            continue
        samples = _samples("first_switch_stall", f"demo → {name} (empty cache)", budget=100.0)
        messages = []
        window.statusBar().messageChanged.connect(messages.append)
        finished = []
        doc.rebuild_finished.connect(finished.append)
        beat.reset()
        start = time.perf_counter()
        combo.setCurrentIndex(names.index(name))
        ok = _wait(app, lambda done=finished: bool(done), 600)
        mark = watch.mark()
        watch.wait_painted(mark, app)
        took = (time.perf_counter() - start) * 1e3
        stall = beat.read()
        doc.rebuild_finished.disconnect(finished.append)
        window.statusBar().messageChanged.disconnect(messages.append)
        panel.release()
        _wait(app, lambda: panel.values["build"].text() != "–", 5)
        time.sleep(0.05)
        panel.refresh()
        _wait(app, lambda: not panel.pair_count_pending(), 600)
        shown = [m for m in messages if "first use" in m or "Preparing" in m]
        samples.times.append(stall)
        samples.stall_ms = stall
        samples.note = (f"tree on screen after {took:.0f} ms; status: "
                        f"{shown[0]!r}" if shown else f"tree on screen after {took:.0f} ms; no status")
        samples.note += f"; Statistics build {panel.values['build'].text().split(' /')[0]}"
        if not ok:
            samples.note += "; did not finish"
        rows.append(samples.row())
    Path(out).write_text(json.dumps(rows), encoding="utf-8")
