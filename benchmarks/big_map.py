"""Big generated Quake maps: ``stats`` time and peak memory, and opening one in the editor.

Writes a ``.map`` of N axis-aligned box brushes (integer coordinates, clustered like
``spatial.scenegen``'s boxes) and measures, each in a process of its own:

* ``stats``: ``python app.py stats MAP --json`` — wall time and peak resident memory
  (``ru_maxrss`` of the child);
* ``open`` (``--gui``): the editor window opens the map (File → Open's path, on a worker
  thread) — time until the level is on screen, the longest GUI-thread stall meanwhile
  (a 10 ms heartbeat), then a drag of one brush in the Top view: time from the release to the
  next painted frame and the longest stall.

    python benchmarks/big_map.py --brushes 50000,200000
    xvfb-run -a python benchmarks/big_map.py --brushes 50000 --gui

Prints one line per measurement. Kernel compile time is excluded: run it once warm.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: the six faces of a box brush from corner a to corner b, as TrenchBroom writes them
_FACES = (
    "( {x0} {y0} {z0} ) ( {x0} {y1} {z0} ) ( {x0} {y0} {z1} ) {t} 0 0 0 1 1\n"
    "( {x1} {y0} {z0} ) ( {x1} {y0} {z1} ) ( {x1} {y1} {z0} ) {t} 0 0 0 1 1\n"
    "( {x0} {y0} {z0} ) ( {x0} {y0} {z1} ) ( {x1} {y0} {z0} ) {t} 0 0 0 1 1\n"
    "( {x0} {y1} {z0} ) ( {x1} {y1} {z0} ) ( {x0} {y1} {z1} ) {t} 0 0 0 1 1\n"
    "( {x0} {y0} {z0} ) ( {x1} {y0} {z0} ) ( {x0} {y1} {z0} ) {t} 0 0 0 1 1\n"
    "( {x0} {y0} {z1} ) ( {x0} {y1} {z1} ) ( {x1} {y0} {z1} ) {t} 0 0 0 1 1\n")


def write_map(path: str, brushes: int, seed: int = 1) -> None:
    """Write ``brushes`` box brushes (worldspawn) to ``path``."""
    import numpy as np

    from spatial.scenegen import random_boxes

    _, lo, hi = random_boxes(brushes, seed=seed, layout="clustered",
                             world=64.0 * max(64.0, brushes ** (1 / 3) * 8))
    lo = np.floor(lo).astype(np.int64)
    hi = np.maximum(np.ceil(hi).astype(np.int64), lo + 2)
    with open(path, "w", encoding="ascii") as f:
        f.write('{\n"classname" "worldspawn"\n')
        for a, b in zip(lo.tolist(), hi.tolist()):
            f.write("{\n" + _FACES.format(x0=a[0], y0=a[1], z0=a[2], x1=b[0], y1=b[1],
                                          z1=b[2], t="__TB_empty") + "}\n")
        f.write("}\n")


def measure_stats(path: str) -> dict:
    """``app.py stats PATH --json`` in a child: wall seconds and peak resident MB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run([sys.executable, str(ROOT / "app.py"), "stats", path, "--json"],
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"ok": done.returncode == 0, "wall_s": round(wall, 1),
            "peak_mb": round(max(peak, before) / 1024) if peak > before else None,
            "error": done.stderr.strip().splitlines()[-1:] if done.returncode else []}


def gui_child(path: str, out: str) -> int:
    """In a process of its own: open ``path`` in the editor, then drag one brush."""
    import numpy as np
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtTest import QTest

    from benchmarks.gui_latency import FrameWatch, Heartbeat, _mouse, _view_point, make_window
    app, window = make_window()
    if window is None:
        return 2
    beat, watch = Heartbeat(), FrameWatch(window)
    result: dict = {}
    beat.reset()
    start = time.perf_counter()
    window.open_file(path, background=True)
    while window.document is None or window.document.rebuilding:
        app.processEvents()
        time.sleep(0.002)
    mark = watch.mark()
    watch.wait_painted(mark, app)
    result["open_s"] = round(time.perf_counter() - start, 2)
    result["open_stall_ms"] = round(beat.read(), 1)
    doc, top = window.document, window.views2d["Top"]
    window.frame_all()
    QTest.qWait(500)
    ids = doc.scene.brush_ids()
    lo, hi = doc.scene.bounds_of(ids)
    k = int(np.argmax((hi - lo).prod(axis=1)))
    centre = ((lo[k] + hi[k]) / 2)[:2]
    window.tool_actions["select"].trigger()
    QTest.mouseClick(top.viewport(), Qt.LeftButton, Qt.NoModifier, _view_point(top, *centre))
    QTest.qWait(300)
    result["selected"] = len(doc.selection)
    times, stalls = [], []
    for step in range(3):
        a = centre + step * 64.0
        b = a + 64.0
        p0, p1 = _view_point(top, *a), _view_point(top, *b)
        beat.reset()
        _mouse(top, QEvent.MouseButtonPress, p0, Qt.LeftButton)
        for i in range(1, 7):
            _mouse(top, QEvent.MouseMove, p0 + (p1 - p0) * (i / 6), Qt.LeftButton)
            QTest.qWait(10)
        for view in window.central_views():  # every view has a frame to paint (as gui_latency)
            view.update()
        QTest.qWait(60)
        mark = watch.mark()
        t0 = time.perf_counter()
        _mouse(top, QEvent.MouseButtonRelease, p1, Qt.NoButton)
        painted = watch.wait_painted(mark, app, timeout_s=5)
        if window.state.flush_pending():
            mark = watch.mark()
            painted = watch.wait_painted(mark, app, timeout_s=5)
        # None: not every view painted a frame within 5 s of the release
        times.append((time.perf_counter() - t0) * 1e3 if painted else None)
        stalls.append(beat.read())
        QTest.qWait(300)
    result["drag_ms"] = [None if t is None else round(t, 1) for t in times]
    result["drag_stall_ms"] = round(max(stalls), 1)
    Path(out).write_text(json.dumps(result), encoding="utf-8")
    window.close()
    return 0


def measure_gui(path: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "gui.json")
        done = subprocess.run([sys.executable, __file__, "--gui-child", path, out],
                              capture_output=True, text=True)
        if done.returncode != 0 or not os.path.exists(out):
            return {"ok": False, "error": done.stderr.strip().splitlines()[-3:]}
        return json.loads(Path(out).read_text(encoding="utf-8"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--brushes", default="50000,200000", help="comma-separated map sizes")
    ap.add_argument("--gui", action="store_true", help="also open each map in the editor")
    ap.add_argument("--no-stats", action="store_true", help="skip the stats command")
    ap.add_argument("--keep", metavar="DIR", help="write the maps here and keep them")
    ap.add_argument("--gui-child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.gui_child:
        return gui_child(*args.gui_child)
    folder = args.keep or tempfile.mkdtemp(prefix="big_map_")
    os.makedirs(folder, exist_ok=True)
    for n in (int(v) for v in args.brushes.split(",") if v.strip()):
        path = os.path.join(folder, f"boxes_{n}.map")
        if not os.path.exists(path):
            start = time.perf_counter()
            write_map(path, n)
            print(f"{n:>8,} brushes: wrote {os.path.getsize(path) / 1e6:.0f} MB in "
                  f"{time.perf_counter() - start:.1f} s", flush=True)
        if not args.no_stats:
            print(f"{n:>8,} brushes: stats {json.dumps(measure_stats(path))}", flush=True)
        if args.gui:
            print(f"{n:>8,} brushes: editor {json.dumps(measure_gui(path))}", flush=True)
    if not args.keep:
        import shutil
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
