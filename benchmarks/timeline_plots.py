#!/usr/bin/env python
"""The timeline's plots over a long run: what one refresh costs the window as frames pile up.

A game streaming at 60 frames a second adds 3,600 frames a minute to the timeline's history;
the plots redraw it a few times a second while the game plays. For histories of ``--lengths``
frames (synthetic figures of a 10,000-mover game), this times, in the real window at 1600×1000:

* **columns** — reading the plot columns from the history (``TimelineController.plot_columns``),
  beside its peer in the same process: the same columns read frame by frame from a plain dict
  of the stats, as the timeline did before it kept them as arrays;
* **refresh** — the plots' whole ``refresh()`` (columns, ``setData``, ranges);
* **paint** — rendering the three plots afterwards (``grab()``: the curves, downsampled to the
  plots' width, and their axes).

Medians of ``--repeats`` refreshes, each after one more frame. The table goes to
``benchmarks/RESULTS.md`` between ``<!-- BEGIN generated: timeline-plots -->`` and
``<!-- END generated: timeline-plots -->``. This measures; it asserts nothing. Run under
``xvfb-run -a -s "-screen 0 1600x1000x24"``.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from benchmarks.report import write_section  # noqa: E402


def synthetic_stats(frames: int, seed: int = 0) -> list:
    """Per-frame figures shaped like a 10,000-mover game's (about 6,500 candidate pairs,
    12,000 nodes, a few ms of update)."""
    from editor.model.frame_step import FrameStats

    rng = np.random.default_rng(seed)
    return [FrameStats(f, awake=int(rng.integers(9_000, 10_000)), nodes=12_000 + int(rng.integers(0, 50)),
                       candidates=int(rng.integers(6_000, 7_000)), overlapping=int(rng.integers(600, 700)),
                       update_ms=float(rng.random() * 5)) for f in range(1, frames + 1)]


def dict_columns(history: dict, after: int = 0) -> dict:
    """The columns read frame by frame from a dict of stats (the peer)."""
    frames = sorted(f for f in history if f > after)
    cols = {"frame": np.array(frames, dtype=np.int64)}
    for name in ("candidates", "overlapping", "nodes", "update_ms", "awake"):
        cols[name] = np.array([getattr(history[f], name) for f in frames], dtype=np.float64)
    return cols


def measure(window, app, frames: int, repeats: int) -> dict:
    from editor.model.frame_step import FrameStats
    from editor.model.stats_history import StatsHistory
    from editor.qt.timeline.plots import LivePlots

    controller = window.timeline
    plots = window.findChild(LivePlots)
    stats = synthetic_stats(frames)
    controller.history = StatsHistory(stats)
    plain = {s.frame: s for s in stats}
    columns, peer, refresh, paint = [], [], [], []
    for k in range(repeats):
        extra = FrameStats(frames + 1 + k, candidates=6_500, nodes=12_000, awake=9_500)
        controller.history[extra.frame] = plain[extra.frame] = extra
        start = time.perf_counter()
        controller.plot_columns()
        columns.append(time.perf_counter() - start)
        start = time.perf_counter()
        dict_columns(plain)
        peer.append(time.perf_counter() - start)
        start = time.perf_counter()
        plots.refresh()
        refresh.append(time.perf_counter() - start)
        start = time.perf_counter()
        for widget in plots.widgets.values():
            widget.grab()
        paint.append(time.perf_counter() - start)
        app.processEvents()
    ms = lambda values: float(np.median(values)) * 1e3  # noqa: E731
    return {"frames": frames, "columns_ms": ms(columns), "dict_ms": ms(peer),
            "refresh_ms": ms(refresh), "paint_ms": ms(paint)}


def render(rows: list[dict], args, machine: str) -> list[str]:
    lines = [f"`xvfb-run -a -s \"-screen 0 1600x1000x24\" python benchmarks/timeline_plots.py "
             f"--lengths {args.lengths} --repeats {args.repeats}` — {machine}. Medians; one refresh "
             "of the three timeline plots with a history of that many frames (60 frames a second: "
             "3,600 a minute). *columns* reads the plot columns from the timeline's history, "
             "*per-frame dict* the same columns from a plain dict of the stats (its peer, same "
             "process).", "",
             "| frames | columns ms | per-frame dict ms | ratio | refresh ms | paint ms |",
             "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ratio = r["dict_ms"] / r["columns_ms"] if r["columns_ms"] > 0 else float("inf")
        lines.append(f"| {r['frames']:,} | {r['columns_ms']:.2f} | {r['dict_ms']:.2f} | {ratio:,.0f}× | "
                     f"{r['refresh_ms']:.1f} | {r['paint_ms']:.1f} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lengths", default="240,3600,36000", help="comma-separated history lengths")
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "RESULTS.md"))
    ap.add_argument("--no-write", action="store_true", help="print the table, leave RESULTS.md alone")
    args = ap.parse_args(argv)
    from benchmarks.gui_latency import make_window
    from benchmarks.machine import describe_machine

    app, window = make_window()
    if window is None:
        return 1
    window.files.open_file(None, background=False)
    info = describe_machine(REPO, "1")
    machine = f"{info['cpu']}, {info['usable_cores']} usable cores, load {info['load_average']}, {info['date']}"
    rows = [measure(window, app, int(n), args.repeats) for n in args.lengths.split(",")]
    table = render(rows, args, machine)
    if not args.no_write:
        write_section(Path(args.out), table, "timeline-plots", heading="## Timeline plots over a long run")
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
