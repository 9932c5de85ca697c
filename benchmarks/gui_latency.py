"""GUI latency of the editor on big levels, driven through the real window.

Opens the editor under Xvfb (the 3D view needs an OpenGL context) and drives it as a user
does — File → Open, mouse clicks and drags in the 2D views, arrow keys, ``Del``, ``Ctrl+Z``,
the backend combo box, a mouse orbit in the 3D view — on Quake's e3m4 (3,441 brushes) and on a
generated level of 20,000 box brushes. For each action it reports the median, min and max time
from the input event to the next painted frame of every view (the 3D view's ``frameSwapped``
and a paint of each 2D viewport), and, for the whole run and per action, the longest
GUI-thread stall seen by a 10 ms ``QTimer`` heartbeat (the longest gap between two ticks).

The table goes to ``benchmarks/RESULTS.md`` (section ``gui-latency``) with each budget of the
latency issue marked met or not met. The machine is shared: quote medians.

    xvfb-run -a -s "-screen 0 1600x1000x24" python benchmarks/gui_latency.py

It also plays the simulation, runs a tuner search, lets the Statistics panel count a mesh's
pairs, starts ``python app.py`` warm and with an empty kernel cache, and switches to each
backend with an empty kernel cache (:mod:`benchmarks.gui_background`). Runs in six to eight
minutes; ``--repeats`` sets the samples per action, ``--brushes`` the size of the generated
level, ``--only``/``--skip`` a subset of the groups (a subset leaves ``RESULTS.md`` alone),
``--no-write`` prints the table only.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import data  # noqa: E402
from benchmarks.machine import describe_machine  # noqa: E402
from benchmarks.report import write_section  # noqa: E402

E3M4 = str(data.data_file(*data.E3M4))

#: action -> (budget in ms, what the budget applies to)
BUDGETS = {
    "nudge": 50.0,
    "new_brush": 100.0,
    "delete": 100.0,
    "undo": 100.0,
    "open": 2000.0,
    "orbit": 50.0,
    "backend_switch": 300.0,
}


@dataclass
class Samples:
    """Times of one action (ms) and the longest heartbeat gap while it ran."""

    action: str
    level: str
    times: list = field(default_factory=list)
    stall_ms: float = 0.0
    note: str = ""
    #: the budget of this row when it is not the action's entry in :data:`BUDGETS`
    budget: float | None = None
    unit: str = "ms"
    #: a rate (frames per second) meets its budget from above
    higher_is_better: bool = False

    def row(self) -> dict:
        t = self.times
        budget = self.budget if self.budget is not None else BUDGETS.get(self.action)
        return {"action": self.action, "level": self.level, "n": len(t), "budget": budget,
                "unit": self.unit, "higher_is_better": self.higher_is_better,
                "median_ms": round(statistics.median(t), 1) if t else None,
                "min_ms": round(min(t), 1) if t else None,
                "max_ms": round(max(t), 1) if t else None,
                "stall_ms": round(self.stall_ms, 1), "note": self.note}


class Heartbeat:
    """A 10 ms timer on the GUI thread: the longest gap between ticks is the longest stall."""

    def __init__(self, interval_ms: int = 10) -> None:
        from PySide6.QtCore import QTimer
        self.timer = QTimer()
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.last = time.perf_counter()
        self.longest = 0.0
        self.timer.start()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.longest = max(self.longest, (now - self.last) * 1e3)
        self.last = now

    def reset(self) -> None:
        self.last = time.perf_counter()
        self.longest = 0.0

    def read(self) -> float:
        """Longest gap so far, counting the one still open."""
        return max(self.longest, (time.perf_counter() - self.last) * 1e3)


class FrameWatch:
    """Counts painted frames: ``frameSwapped`` of the 3D view and paint events of the 2D
    viewports."""

    def __init__(self, window) -> None:
        from PySide6.QtCore import QEvent, QObject
        self.window = window
        self.gl_frames = 0
        self.paints: dict[object, int] = {}
        if window.view3d is not None:
            window.view3d.frameSwapped.connect(self._on_swap)
        watch = self

        class _Filter(QObject):
            def eventFilter(self, obj, ev):  # noqa: N802 (Qt's name)
                if ev.type() == QEvent.Paint:
                    watch.paints[obj] = watch.paints.get(obj, 0) + 1
                return False

        self._filter = _Filter()
        self.viewports = [v.viewport() for v in window.views2d.values()]
        for vp in self.viewports:
            vp.installEventFilter(self._filter)

    def _on_swap(self) -> None:
        self.gl_frames += 1

    def mark(self) -> tuple:
        return self.gl_frames, {vp: self.paints.get(vp, 0) for vp in self.viewports}

    def wait_painted(self, mark, app, timeout_s: float = 120.0, need_2d: bool = True) -> bool:
        """Process events until every view painted at least once after ``mark``."""
        gl0, p0 = mark
        deadline = time.perf_counter() + timeout_s
        while time.perf_counter() < deadline:
            app.processEvents()
            gl_ok = self.window.view3d is None or self.gl_frames > gl0
            two_ok = not need_2d or all(self.paints.get(vp, 0) > p0[vp] for vp in self.viewports)
            if gl_ok and two_ok:
                return True
            time.sleep(0.0005)
        return False


def _timed(app, watch, beat, samples: Samples, act, need_2d: bool = True, settle_ms: int = 60) -> None:
    """Run ``act()`` (which sends input), wait for the next painted frame of every view, record
    the time and the stall; then let the window rest a little."""
    from PySide6.QtTest import QTest
    # nothing is pending before the input: every view gets an update to paint
    for view in watch.window.central_views():
        view.update()
    QTest.qWait(settle_ms)
    beat.reset()
    mark = watch.mark()
    start = time.perf_counter()
    act()
    ok = watch.wait_painted(mark, app, need_2d=need_2d)
    # the frame after the edit's recompute: when the recompute was queued behind the first
    # paint, wait for one more frame
    if watch.window.state.flush_pending():
        mark = watch.mark()
        ok = watch.wait_painted(mark, app, need_2d=need_2d)
    elapsed = (time.perf_counter() - start) * 1e3
    if ok:
        samples.times.append(elapsed)
    samples.stall_ms = max(samples.stall_ms, beat.read())


def _view_point(view, u: float, v: float):
    from PySide6.QtCore import QPointF
    return view.mapFromScene(view.vb.mapViewToScene(QPointF(u, v)))


def _mouse(view, kind, pos, buttons) -> None:
    from PySide6.QtCore import QEvent, QPointF, Qt
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication
    target = view.viewport() if hasattr(view, "viewport") and view.viewport() is not None else view
    local = QPointF(pos)
    button = Qt.NoButton if kind == QEvent.MouseMove else Qt.LeftButton
    ev = QMouseEvent(kind, local, target.mapToGlobal(local), button, buttons, Qt.NoModifier)
    QApplication.sendEvent(target, ev)


def drag_2d(view, start, end, steps: int = 6) -> None:
    """Press at world ``start``, move in steps (the event loop turning between), release."""
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtTest import QTest
    p0, p1 = _view_point(view, *start), _view_point(view, *end)
    _mouse(view, QEvent.MouseButtonPress, p0, Qt.LeftButton)
    for k in range(1, steps + 1):
        _mouse(view, QEvent.MouseMove, p0 + (p1 - p0) * (k / steps), Qt.LeftButton)
        QTest.qWait(10)


def release_2d(view, end) -> None:
    from PySide6.QtCore import QEvent, Qt
    _mouse(view, QEvent.MouseButtonRelease, _view_point(view, *end), Qt.NoButton)


def click_2d(view, point) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    QTest.mouseClick(view.viewport(), Qt.LeftButton, Qt.NoModifier, _view_point(view, *point))


def brush_centre_2d(doc, axes=(0, 1)):
    """A point inside one brush near the middle of the level, as seen in the top view (only
    to aim the click: the selection itself goes through the select tool)."""
    import numpy as np
    ids = doc.scene.brush_ids()
    lo, hi = doc.scene.bounds_of(ids)
    centre = (lo + hi) / 2
    mid = (lo.min(axis=0) + hi.max(axis=0)) / 2
    size = (hi - lo).max(axis=1)
    # a smallish brush near the middle: a click there selects it rather than a big floor
    score = np.linalg.norm(centre - mid, axis=1) + 1e6 * (size > 256)
    k = int(np.argmin(score))
    return float(centre[k, axes[0]]), float(centre[k, axes[1]])


def measure_level(window, app, watch, beat, level: str, repeats: int, rows: list,
                  backends: list[str]) -> None:
    """Nudge, new brush, delete, undo, orbit and backend switches on the open level."""
    from PySide6.QtCore import QEvent, QPoint, Qt
    from PySide6.QtTest import QTest
    doc = window.document
    top = window.views2d["Top"]
    window.activateWindow()
    QTest.qWaitForWindowActive(window)
    window.tool_actions["select"].trigger()
    target = brush_centre_2d(doc)
    click_2d(top, target)
    QTest.qWait(50)
    if not doc.selection:
        rows.append(Samples("nudge", level, note="the click selected nothing").row())
    else:
        nudge = Samples("nudge", level)
        for k in range(repeats):
            key = Qt.Key_Right if k % 2 == 0 else Qt.Key_Left
            top.setFocus()
            _timed(app, watch, beat, nudge, lambda key=key: QTest.keyClick(top, key))
        rows.append(nudge.row())

    # new brush: the Brush tool dragged out in the top view, then Del, then Ctrl+Z
    lo, hi = doc.scene.bounds()
    new, delete, undo = Samples("new_brush", level), Samples("delete", level), Samples("undo", level)
    grid = window.state.grid_size
    for k in range(repeats):
        window.tool_actions["brush"].trigger()
        u0 = float(lo[0] + (hi[0] - lo[0]) * (0.3 + 0.05 * k))
        v0 = float(lo[1] + (hi[1] - lo[1]) * 0.4)
        start, end = (u0, v0), (u0 + 6 * grid, v0 + 4 * grid)
        drag_2d(top, start, end)
        _timed(app, watch, beat, new, lambda end=end: release_2d(top, end))
        top.setFocus()
        _timed(app, watch, beat, delete, lambda: QTest.keySequence(window, "Del"))
        _timed(app, watch, beat, undo, lambda: QTest.keySequence(window, "Ctrl+Z"))
        window.act_delete.trigger()  # leave the level as it was
    window.tool_actions["select"].trigger()
    rows += [new.row(), delete.row(), undo.row()]

    if window.view3d is not None:
        view = window.view3d
        orbit = Samples("orbit", level, note=f"overlay {window.state.overlay_settings.metric}")
        centre = QPoint(view.width() // 2, view.height() // 2)
        QTest.mousePress(view, Qt.LeftButton, Qt.NoModifier, centre)
        from PySide6.QtGui import QMouseEvent
        for k in range(repeats * 2):
            pos = centre + QPoint(8 * (k + 1), 3 * (k % 3))

            def move(pos=pos):
                ev = QMouseEvent(QEvent.MouseMove, pos, view.mapToGlobal(pos), Qt.NoButton,
                                 Qt.LeftButton, Qt.NoModifier)
                app.sendEvent(view, ev)

            _timed(app, watch, beat, orbit, move, need_2d=False, settle_ms=20)
        QTest.mouseRelease(view, Qt.LeftButton, Qt.NoModifier, centre + QPoint(8 * repeats * 2, 0))
        rows.append(orbit.row())

    combo = window.params_panel.backend_combo
    switch = Samples("backend_switch", level)
    names = [combo.itemText(i) for i in range(combo.count())]
    for name in backends:
        if name in names:
            measure_switch(window, app, watch, beat, switch, combo, names.index(name))
    switch.note = "→ " + ", ".join(b for b in backends if b in names) + \
        "; time until the new tree is painted"
    rows.append(switch.row())
    if "octree" in names:
        combo.setCurrentIndex(names.index("octree"))
        while doc.rebuilding:
            app.processEvents()


def measure_switch(window, app, watch, beat, samples: Samples, combo, i: int) -> None:
    """Choose backend ``i`` in the Partition panel's combo box; the time runs until the new
    tree is painted (a rebuild on a worker thread paints the old tree first)."""
    from PySide6.QtTest import QTest
    doc = window.document
    finished = []
    doc.rebuild_finished.connect(finished.append)
    for view in window.central_views():
        view.update()
    QTest.qWait(60)
    beat.reset()
    mark = watch.mark()
    start = time.perf_counter()
    combo.setCurrentIndex(i)
    built_at_once = bool(finished)  # a small level rebuilds inside the combo's signal
    ok = watch.wait_painted(mark, app)
    if ok and not built_at_once:
        deadline = time.perf_counter() + 300
        while not finished and time.perf_counter() < deadline:
            app.processEvents()
            time.sleep(0.0005)
        mark = watch.mark()
        ok = bool(finished) and watch.wait_painted(mark, app)
    if ok:
        samples.times.append((time.perf_counter() - start) * 1e3)
    samples.stall_ms = max(samples.stall_ms, beat.read())
    doc.rebuild_finished.disconnect(finished.append)


def measure_open(window, app, watch, beat, path: str, repeats: int, rows: list) -> None:
    """File → Open (``Ctrl+O``) of ``path`` until the level is on screen and interactive."""
    from PySide6.QtTest import QTest
    opened = Samples("open", os.path.basename(path))
    window.prompts.open_path = lambda start, filters: path
    for _ in range(repeats):
        replaced = []
        window.state.document_replaced.connect(replaced.append)

        def act():
            window.act_open.trigger()

        beat.reset()
        start = time.perf_counter()
        act()
        deadline = time.perf_counter() + 300
        while not replaced and time.perf_counter() < deadline:
            app.processEvents()
        mark = watch.mark()
        watch.wait_painted(mark, app)
        opened.times.append((time.perf_counter() - start) * 1e3)
        opened.stall_ms = max(opened.stall_ms, beat.read())
        window.state.document_replaced.disconnect(replaced.append)
        QTest.qWait(100)
    rows.append(opened.row())


#: the groups of rows ``--only`` and ``--skip`` choose from, in the order they run
GROUPS = ("startup", "first-switch", "cold", "edit", "generated", "playback", "tuner", "stats")


def _format(value, unit: str) -> str:
    return "–" if value is None else f"{value} {unit}" if unit != "ms" else f"{value}"


def render(rows: list[dict], command: str, machine: str, total_s: float) -> list[str]:
    lines = [
        f"GUI latency, driven through the real window under Xvfb (Mesa llvmpipe), 1600×1000. "
        f"Command: `{command}`; {total_s:.0f} s on {machine}. "
        "Time = input event to the next painted frame of every view (3D `frameSwapped`, a paint "
        "of each 2D viewport); stall = longest gap of a 10 ms `QTimer` heartbeat during the "
        "action (for the `*_stall` rows the stall is the measure itself); fps = frames shown "
        "per second. The machine is shared with other work: read the medians.",
        "",
        "| action | level | n | median (ms) | min–max | longest stall ms | budget | met | note |",
        "|---|---|---:|---:|---:|---:|---:|:---:|---|",
    ]
    for r in rows:
        budget, unit = r.get("budget"), r.get("unit", "ms")
        median = r["median_ms"]
        if median is None:
            met, span = "not measured", "–"
        else:
            if budget is None:
                met = "–"
            elif r.get("higher_is_better"):
                met = "met" if median >= budget else "not met"
            else:
                met = "met" if median <= budget else "not met"
            span = f"{r['min_ms']}–{r['max_ms']}"
        bound = "–" if budget is None else (f"≥ {budget:.0f} {unit}" if r.get("higher_is_better")
                                            else f"≤ {budget:.0f}")
        lines.append(f"| {r['action']} | {r['level']} | {r['n']} | {_format(median, unit)} | {span} | "
                     f"{r['stall_ms']} | {bound} | {met} | {r['note']} |")
    longest = max((r["stall_ms"] for r in rows if r.get("unit", "ms") == "ms" or r["stall_ms"]), default=0.0)
    lines += ["", f"Longest GUI-thread stall during the measured actions: {longest:.0f} ms "
                  "(the generated level is built on the benchmark's own thread, outside them)."]
    return lines


def _groups(args) -> list[str]:
    chosen = list(GROUPS) if not args.only else [g.strip() for g in args.only.split(",") if g.strip()]
    skip = {g.strip() for g in (args.skip or "").split(",") if g.strip()}
    unknown = (set(chosen) | skip) - set(GROUPS)
    if unknown:
        raise SystemExit(f"gui_latency: unknown group(s) {', '.join(sorted(unknown))}; "
                         f"choose from {', '.join(GROUPS)}")
    return [g for g in GROUPS if g in chosen and g not in skip]


def make_window():
    """The editor window at 1600×1000 with private settings, shown; or ``None`` without GL."""
    from PySide6.QtCore import QCoreApplication, QSettings, Qt
    QCoreApplication.setAttribute(Qt.AA_ShareOpenGLContexts)
    from editor.qt.app_main import make_application
    from editor.qt.glcheck import gl_status
    from editor.qt.main_window import MainWindow
    from editor.qt.screenshot import settle

    app = make_application()
    use_gl, reason = gl_status()
    if not use_gl:
        print(f"no OpenGL ({reason}): run under xvfb-run", file=sys.stderr)
        return app, None
    tmp = tempfile.mkdtemp()
    window = MainWindow(settings=QSettings(os.path.join(tmp, "s.ini"), QSettings.IniFormat), use_gl=True)
    window.ask_save = lambda: "discard"
    window.prompts.ask_save = lambda name: "discard"
    window.resize(1600, 1000)
    window.show()
    settle(10)
    return app, window


def _parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", default=E3M4)
    ap.add_argument("--brushes", type=int, default=20_000, help="size of the generated level (0: skip)")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--backends", default="kdtree,bvh,grid,octree")
    ap.add_argument("--only", help=f"comma-separated groups to run: {', '.join(GROUPS)} (default all); "
                                   "a subset prints its rows and leaves RESULTS.md alone")
    ap.add_argument("--skip", help="comma-separated groups not to run")
    ap.add_argument("--tune-budget", type=float, default=8.0, help="seconds of the tuner search")
    ap.add_argument("--warm-starts", type=int, default=5)
    ap.add_argument("--cold-starts", type=int, default=2)
    ap.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    ap.add_argument("--json", action="store_true", help="print the rows as JSON too")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--first-switch-child", metavar="OUT.json", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = _parse_args(argv)
    t_start = time.perf_counter()
    groups = _groups(args)
    from benchmarks import gui_background as bg

    if args.first_switch_child:  # run by the first-switch group in a process with an empty cache
        app, window = make_window()
        if window is None:
            return 2
        bg.first_switch_child(window, app, FrameWatch(window), Heartbeat(), args.backends.split(","),
                              args.first_switch_child)
        window.close()
        return 0

    rows: list[dict] = []
    # processes of their own first, while this one is idle
    if "startup" in groups:
        bg.measure_startup(rows, args.warm_starts, args.cold_starts)
    if "first-switch" in groups:
        bg.measure_first_switch(rows)
    from benchmarks.gui_cold import cold_group
    cold_group(groups, rows, args.level, Samples)
    app, window = make_window()
    if window is None:
        return 2
    _measure_in_window(window, app, args, groups, rows)
    total = time.perf_counter() - t_start
    _report(rows, args, argv, total)
    window.close()
    return 0


def _measure_in_window(window, app, args, groups: list[str], rows: list) -> None:
    """The groups measured in this process's editor window, their rows appended to ``rows``."""
    from benchmarks import gui_background as bg
    from benchmarks.gui_overlay import make_scene
    from editor.model.loading import LoadResult
    from editor.qt.screenshot import settle

    watch = FrameWatch(window)
    beat = Heartbeat()
    backends = args.backends.split(",")
    level = os.path.basename(args.level)
    if "edit" in groups:
        if os.path.exists(args.level):
            measure_open(window, app, watch, beat, args.level, max(2, args.repeats // 3), rows)
            measure_level(window, app, watch, beat, level, args.repeats, rows, backends)
        else:
            rows.append(Samples("open", level, note="file absent").row())
    if "tuner" in groups:
        if not os.path.exists(args.level) or not bg.open_level(window, app, args.level):
            rows.append(Samples("tuner_stall", level, budget=100.0, note="level absent").row())
        else:
            bg.measure_tuner(window, app, beat, rows, args.tune_budget)
    if "generated" in groups and args.brushes:
        scene = make_scene(args.brushes, seed=1)
        window.files.adopt_loaded(LoadResult(scene, None))
        settle(10)
        measure_level(window, app, watch, beat, f"generated {args.brushes:,} brushes", args.repeats,
                      rows, backends)
    if "playback" in groups:
        bg.measure_playback(window, app, watch, beat, None, args.repeats, rows, 30.0)
        bg.measure_playback(window, app, watch, beat, bg.E1M1, args.repeats, rows, 20.0)
    if "stats" in groups:
        bg.measure_obj_pairs(window, app, beat, max(3, args.repeats // 2), rows)


def _report(rows: list[dict], args, argv, total_s: float) -> None:
    """Print the table (and the JSON rows with ``--json``); write RESULTS.md after a full run."""
    info = describe_machine(Path(__file__).resolve().parents[1], "default")
    machine = (f"{info['cpu']}, {info['usable_cores']} usable cores, load {info['load_average']}, "
               f"{info['date']}, git {info['git']}")
    command = ('xvfb-run -a -s "-screen 0 1600x1000x24" python benchmarks/gui_latency.py '
               + " ".join(a for a in (argv if argv is not None else sys.argv[1:])))
    body = render(rows, command.strip(), machine, total_s)
    print("\n".join(body))
    if args.json:
        print(json.dumps(rows, indent=2))
    if not args.no_write and not args.only and not args.skip:
        write_section(Path(args.out), body, "gui-latency", heading="## GUI latency")


if __name__ == "__main__":
    sys.exit(main())
