"""Big generated Quake maps: ``stats`` time and peak memory, and opening one in the editor.

Writes a ``.map`` of N axis-aligned box brushes (integer coordinates, clustered like
``spatial.scenegen``'s boxes) and measures, each in a process of its own:

* ``stats``: ``python app.py stats MAP --json`` — wall time and peak resident memory
  (``ru_maxrss`` of the child);
* ``open`` (``--gui``): the editor window opens the map (File → Open's path, on a worker
  thread) — time until the level is on screen, the longest GUI-thread stall meanwhile
  (a 10 ms heartbeat), then three drags of one selected brush in the Top view through the
  window's mouse events (the Top view zoomed to eight times the brush's size, so the press
  grabs the brush, not a resize handle; the other views show the whole level), each move
  one grid step (so each is an edit): the time from each mouse move (and each release) to
  the next frame
  painted by every view, the median over the moves, and the longest stall;
* ``mesh`` (``--mesh SIDE``): ``stats`` on the terrain OBJ of ``benchmarks/big_mesh.py``
  (``--mesh 1001``: 2,000,000 triangles), as above, then the editor opens it: time to the
  level on screen (every view has drawn it all), longest stall (including 0.3 s after).

    python benchmarks/big_map.py --brushes 50000,200000
    xvfb-run -a python benchmarks/big_map.py --brushes 50000 --gui
    xvfb-run -a python benchmarks/big_map.py --brushes "" --mesh 1001

Prints one line per measurement. Kernel compile time is excluded: run it once warm.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
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


#: drags of the selected brush, and mouse moves per drag
DRAGS, MOVES = 3, 6
#: the Top view's span while dragging, in sizes of the dragged brush
ZOOM_SPAN = 8.0


def _to_painted(app, window, watch, act) -> float | None:
    """ms from ``act()`` (an input event) to the next frame painted by every view, counting the
    recompute the event queued (None: not within 5 s)."""
    for view in window.central_views():  # every view has a frame to paint (as gui_latency)
        view.update()
    app.processEvents()
    mark = watch.mark()
    start = time.perf_counter()
    act()
    painted = watch.wait_painted(mark, app, timeout_s=5)
    if painted and window.state.flush_pending():
        painted = watch.wait_painted(watch.mark(), app, timeout_s=5)
    return (time.perf_counter() - start) * 1e3 if painted else None


def _level_shown(window) -> bool:
    """Whether the level has arrived, its index is built and every 2D view has drawn all of
    it (a big level's brush chunks are wrapped in items a slice per event-loop turn, a big
    mesh is stroked a turn after it arrives)."""
    return (window.document is not None and not window.document.rebuilding
            and all(getattr(view, "arrival_pending", lambda: 0)() == 0
                    for view in window.views2d.values()))


def _open_and_show(app, window, watch) -> float:
    """Seconds from the start of the open (just before this call) until the level is shown
    (:func:`_level_shown`) and every view has painted since it arrived; then 0.3 s more of
    events, so the last pieces' frames count in the heartbeat's longest stall too."""
    from PySide6.QtTest import QTest
    arrived = None
    while not _level_shown(window):
        if arrived is None and window.document is not None:
            arrived = watch.mark()
        app.processEvents()
        time.sleep(0.002)
    watch.wait_painted(arrived if arrived is not None else watch.mark(), app)
    seconds = round(time.perf_counter() - _OPEN_STARTED[0], 2)
    QTest.qWait(300)
    return seconds


#: when the open started (set just before ``window.open_file``)
_OPEN_STARTED = [0.0]


def mesh_child(path: str, out: str) -> int:
    """In a process of its own: open the mesh ``path`` in the editor; time to the level on
    screen and the longest stall meanwhile."""
    from benchmarks.gui_latency import FrameWatch, Heartbeat, make_window
    app, window = make_window()
    if window is None:
        return 2
    beat, watch = Heartbeat(), FrameWatch(window)
    beat.reset()
    _OPEN_STARTED[0] = time.perf_counter()
    window.open_file(path, background=True)
    open_s = _open_and_show(app, window, watch)
    result = {"open_s": open_s, "open_stall_ms": round(beat.read(), 1),
              "triangles": len(window.document.scene.triangle_arrays()[0])}
    Path(out).write_text(json.dumps(result), encoding="utf-8")
    window.close()
    return 0


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
    _OPEN_STARTED[0] = time.perf_counter()
    window.open_file(path, background=True)
    result["open_s"] = _open_and_show(app, window, watch)
    result["open_stall_ms"] = round(beat.read(), 1)
    doc, top = window.document, window.views2d["Top"]
    window.frame_all()
    QTest.qWait(500)
    ids = doc.scene.brush_ids()
    lo, hi = doc.scene.bounds_of(ids)
    k = int(np.argmax((hi - lo).prod(axis=1)))
    centre = ((lo[k] + hi[k]) / 2)[:2]
    # the Top view zoomed in until the brush can be grabbed to move it (at the whole level's
    # view it is a few pixels wide and a press grabs a resize handle, or a click a
    # neighbour); the other views, and most of the level in this one, stay in view
    from PySide6.QtCore import QRectF
    extent = (hi[k] - lo[k])[:2]
    span = ZOOM_SPAN * float(extent.max())
    top.vb.setRange(QRectF(centre[0] - span / 2, centre[1] - span / 2, span, span), padding=0)
    QTest.qWait(500)
    # the brush selected through the document's command (a click at its centre picks
    # whichever of the clustered brushes there is topmost, and the window's layout decides
    # which: the press below then missed the selection and drew a selection box)
    from editor.model import SetSelection
    window.tool_actions["select"].trigger()
    doc.push(SetSelection([int(ids[k])]))
    QTest.qWait(300)
    result["selected"] = len(doc.selection)
    grab = centre + extent / 4  # on the brush, away from its handles
    # drags of the selected brush: each mouse move, then the time to the next frame painted
    # by every view (the brush drawn where the cursor put it), and the release likewise
    moves, releases, stalls, modes = [], [], [], []
    # each move one grid step further (diagonally), so every move is an edit to paint: a
    # move within a grid cell snaps to where the brush already is and paints nothing
    step = float(window.state.grid_size)
    for drag in range(DRAGS):
        a = grab + drag * step * MOVES
        points = [_view_point(top, *(a + step * i)) for i in range(MOVES + 1)]
        QTest.qWait(200)
        beat.reset()
        _mouse(top, QEvent.MouseButtonPress, points[0], Qt.LeftButton)
        QTest.qWait(30)
        for p in points[1:]:
            moves.append(_to_painted(app, window, watch, lambda p=p: _mouse(
                top, QEvent.MouseMove, p, Qt.LeftButton)))
        modes.append(str(window.tools.current().mode))
        releases.append(_to_painted(app, window, watch, lambda end=points[-1]: _mouse(
            top, QEvent.MouseButtonRelease, end, Qt.NoButton)))
        stalls.append(beat.read())
    done = [t for t in moves if t is not None]
    result["drag_move_ms"] = round(statistics.median(done), 1) if done else None
    result["drag_move_max_ms"] = round(max(done), 1) if done else None
    result["drag_moves"] = f"{len(done)}/{len(moves)}"  # moves painted within 5 s
    result["drag_modes"] = modes  # what each drag did to the brush (move or resize)
    result["drag_release_ms"] = [None if t is None else round(t, 1) for t in releases]
    result["drag_stall_ms"] = round(max(stalls), 1)
    Path(out).write_text(json.dumps(result), encoding="utf-8")
    window.close()
    return 0


def measure_gui(path: str, child: str = "--gui-child") -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "gui.json")
        done = subprocess.run([sys.executable, __file__, child, path, out],
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
    ap.add_argument("--mesh", type=int, default=0, metavar="SIDE",
                    help="also open a terrain OBJ of 2·(SIDE-1)² triangles in the editor "
                         "(benchmarks/big_mesh.py; 1001: 2,000,000)")
    ap.add_argument("--gui-child", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--mesh-child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.gui_child:
        return gui_child(*args.gui_child)
    if args.mesh_child:
        return mesh_child(*args.mesh_child)
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
    if args.mesh:
        from benchmarks.big_mesh import write_terrain
        path = os.path.join(folder, f"terrain_{args.mesh}.obj")
        if not os.path.exists(path):
            write_terrain(Path(path), args.mesh)
        tris = 2 * (args.mesh - 1) ** 2
        if not args.no_stats:
            print(f"{tris:>9,} triangles: stats {json.dumps(measure_stats(path))}", flush=True)
        print(f"{tris:>9,} triangles: editor {json.dumps(measure_gui(path, '--mesh-child'))}",
              flush=True)
    if not args.keep:
        import shutil
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
