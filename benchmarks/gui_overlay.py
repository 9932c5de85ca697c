"""How long after a rebuild finishes does the window show the new tree overlay?

Opens the editor on a generated level of N box brushes (default 10,000), then changes a
backend parameter through the parameter panel (the undoable settings command, exactly what a
spin-box edit does) several times. For each change it records

* ``rebuild_ms``  — the index rebuild (the document's ``rebuild_finished`` timing), and
* ``overlay_ms``  — from the end of that rebuild until every view has been repainted with the
  new overlay: node table fetched, arrays built, 3D line item and 2D paths updated, labels
  placed, 3D and 2D views repainted; split into ``update_ms`` (everything before painting)
  and ``frame_ms`` (the repaint), with ``unchanged_frame_ms``, the same repaint with nothing
  changed, for what drawing the level itself costs.

The goal is overlay_ms below 100 ms for 10k objects. Run under Xvfb for the 3D view:

    xvfb-run -a -s "-screen 0 1600x1000x24" python benchmarks/gui_overlay.py [--objects N]

Prints one JSON document.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def make_scene(n: int, seed: int):
    """A scene of ``n`` axis-aligned box brushes laid out like ``spatial.scenegen``'s boxes."""
    import numpy as np

    from editor.model import Scene, brush_entity
    from editor.model.brushes import build_solids
    from editor.model.scene import Edit, Settings
    from editor.model.shapes import box_brush
    from spatial.scenegen import random_boxes

    _, lo, hi = random_boxes(n, seed=seed, layout="clustered", world=4096.0)
    hi = np.maximum(hi, lo + 1.0)
    scene = Scene()
    world = scene.allocate_ids(1)[0]
    objects = {world: brush_entity("worldspawn")}
    ids = scene.allocate_ids(n)
    for oid, a, b in zip(ids, lo, hi):
        objects[oid] = box_brush(world, a, b)
    build_solids([objects[i] for i in ids])
    scene.apply(Edit(objects, settings=Settings(backend="octree")))
    return scene


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--backends", default="octree,kdtree,bvh,quadtree")
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--no-gl", action="store_true", help="leave the 3D view out")
    args = ap.parse_args(argv)

    from PySide6.QtCore import QSettings

    from editor.model.loading import LoadResult
    from editor.qt.app_main import make_application
    from editor.qt.glcheck import gl_status
    from editor.qt.main_window import MainWindow
    from editor.qt.screenshot import settle

    app = make_application()
    use_gl, reason = gl_status()
    if args.no_gl:
        use_gl, reason = False, "--no-gl"
    t0 = time.perf_counter()
    scene = make_scene(args.objects, args.seed)
    build_scene_s = time.perf_counter() - t0
    tmp = tempfile.mkdtemp()
    window = MainWindow(settings=QSettings(os.path.join(tmp, "s.ini"), QSettings.IniFormat), use_gl=use_gl)
    window.ask_save = lambda: "discard"
    window.resize(1600, 1000)
    window.files.adopt_loaded(LoadResult(scene, None))
    window.show()
    settle(10)
    doc, state = window.document, window.state
    marks = {}
    # the index is ready when index_changed fires (rebuild_finished follows it with the timing)
    doc.index_changed.connect(lambda: marks.setdefault("rebuilt", time.perf_counter()))
    doc.rebuild_finished.connect(lambda ms: marks.update(rebuild_ms=ms))
    state.overlay_changed.connect(lambda geom: marks.update(overlay=time.perf_counter()))

    # parameter sweeps that change the tree's shape on every step
    sweeps = {"octree": ("max_depth", [4, 6, 8, 10, 12, 16]), "kdtree": ("leaf_size", [4, 8, 16, 32, 2, 6]),
              "bvh": ("sah_bins", [4, 8, 16, 32, 64, 12]), "quadtree": ("max_objects", [4, 8, 16, 32, 2, 6]),
              "bsp": ("min_objects", [2, 4, 8, 16, 32, 6]), "grid": (None, [])}
    views = [window.view3d] if window.view3d is not None else []
    views += [v.viewport() for v in window.views2d.values()]
    report = {"objects": args.objects, "gl": use_gl, "gl_reason": reason,
              "build_scene_s": round(build_scene_s, 2), "backends": {}}
    for name in args.backends.split(","):
        if name not in window.params_panel.registry.backends or sweeps.get(name, (None,))[0] is None:
            continue
        window.params_panel.choose_backend(name)
        settle(5)
        key, values = sweeps[name]
        rows = []
        for value in values[: args.repeats + 1]:
            marks.clear()
            window.params_panel.set_param(key, value)
            deadline = time.perf_counter() + 60
            while "overlay" not in marks and time.perf_counter() < deadline:
                app.processEvents()
            updated = time.perf_counter()
            for v in views:
                v.repaint()
            shown = time.perf_counter()
            # the same frame again with nothing changed: what drawing the level costs anyway
            for v in views:
                v.repaint()
            again = time.perf_counter()
            rows.append({"value": value, "nodes": state.overlay.total, "drawn": state.overlay.count,
                         "rebuild_ms": round(marks.get("rebuild_ms", float("nan")), 2),
                         "overlay_ms": round((shown - marks["rebuilt"]) * 1e3, 2),
                         "update_ms": round((updated - marks["rebuilt"]) * 1e3, 2),
                         "frame_ms": round((shown - updated) * 1e3, 2),
                         "unchanged_frame_ms": round((again - shown) * 1e3, 2),
                         "overlay_build_ms": round(state.timings.get("overlay_ms", float("nan")), 2)})
        rows = rows[1:]  # the first change pays one-off compilation and cache warm-up
        report["backends"][name] = {
            "param": key, "runs": rows,
            "overlay_ms_median": round(statistics.median(r["overlay_ms"] for r in rows), 2),
            "overlay_ms_max": round(max(r["overlay_ms"] for r in rows), 2),
            "update_ms_median": round(statistics.median(r["update_ms"] for r in rows), 2),
            "unchanged_frame_ms_median": round(statistics.median(r["unchanged_frame_ms"] for r in rows), 2),
        }
    window.close()
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
