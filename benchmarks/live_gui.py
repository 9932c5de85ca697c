#!/usr/bin/env python
"""Live link in the window: from a game's send to the painted frame, and the window's frame rate.

A game process (this file with ``--game``) streams the live-link benchmark's scene
(``benchmarks/live_link.py``: ``--static`` boxes, then ``--movers`` boxes moving every frame) to
the editor's own listener (File ▸ Connect to game…) at ``--fps``, each frame's bytes encoded up
front so the game's cost is only the send, and notes when it started sending each frame
(``time.monotonic``, one clock for both processes). The window (1600×1000, OpenGL under Xvfb)
notes every paint of its Top view with the frame on display. Reported per backend and mover
count:

* **latency** — from a frame's send to the first paint that shows it (median, 95th percentile);
  frames the window never showed (several arrived between two paints) are counted apart;
* **window fps** — paints of the Top view a second while the game streams;
* **3D view paints/s** — paints of the 3D view a second over the same time (it is held to a
  share of the window's time while a game is linked);
* **composites/s** — times a second the window painted and composited its whole surface
  (each one costs the window's thread the software OpenGL's composite of 1600×1000 pixels);
* **processed** — game frames the editor had processed when the game's last frame was sent,
  then after it caught up (waited for, up to 60 s: how long is *caught up after*), and frames
  the game dropped because the editor was behind.

The table goes to ``benchmarks/RESULTS.md`` between ``<!-- BEGIN generated: live-gui -->`` and
``<!-- END generated: live-gui -->``. This measures; it asserts nothing. Run under
``xvfb-run -a -s "-screen 0 1600x1000x24"``.
"""
from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from benchmarks.report import write_section  # noqa: E402


# --------------------------------------------------------------------------- the game
def run_game(port: int, statics: int, movers: int, frames: int, fps: float, seed: int,
             out: str) -> int:
    """Send the stream to ``127.0.0.1:port`` at ``fps`` and write each frame's send time."""
    from benchmarks.live_link import make_stream

    chunks = make_stream(statics, movers, frames, seed)
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(chunks[0])  # the header
    sent = []
    began = time.monotonic()
    for k, chunk in enumerate(chunks[1:]):
        due = began + k / fps
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        sent.append(time.monotonic())  # a frame behind the editor waits here, as in a game
        sock.sendall(chunk)
    sock.shutdown(socket.SHUT_WR)
    sock.settimeout(60)
    while sock.recv(4096):  # the editor read everything and closed its side
        pass
    sock.close()
    Path(out).write_text(json.dumps(sent))
    return 0


# --------------------------------------------------------------------------- the window
class _PaintLog:
    """Each paint of a viewport: (monotonic time, frame on display)."""

    def __init__(self, viewport, controller) -> None:
        from PySide6.QtCore import QEvent, QObject

        log = self

        class Filter(QObject):
            def eventFilter(self, obj, event):  # noqa: N802 (Qt's name)
                if event.type() == QEvent.Type.Paint:
                    log.paints.append((time.monotonic(), controller.frame))
                return False

        self.paints: list[tuple[float, int]] = []
        self._filter = Filter()
        viewport.installEventFilter(self._filter)


def measure(window, app, spec: str, movers: int, args) -> dict:
    from benchmarks.live_link import parse_backend

    if window.document is None:
        window.files.open_file(None, background=False)  # the demo level: the game brings its own
    doc = window.document
    name, params = parse_backend(spec)
    doc.push(doc.settings_command(backend=name, params=params, text=f"Use {spec}"))
    while doc.rebuilding:
        app.processEvents()
    link = window.live_link
    window.live_link_ask = lambda parent, default: "127.0.0.1:0"
    window.act_connect_game.trigger()
    port = int(link.address.rsplit(":", 1)[1])
    log = _PaintLog(window.views2d["Top"].viewport(), window.timeline)
    view3d = window.view3d
    paints3d = view3d.paints if view3d is not None else 0
    composites = window.frame_sync.frames
    began = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        times_file = os.path.join(tmp, "sent.json")
        game = subprocess.Popen([sys.executable, __file__, "--game", str(port), "--static",
                                 str(args.static), "--movers", str(movers), "--frames",
                                 str(args.frames), "--fps", str(args.fps), "--seed", str(args.seed),
                                 "--times", times_file], stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + args.frames / args.fps + 300
        while game.poll() is None and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.001)
        finished = game.poll() is not None
        if not finished:
            game.kill()
        ended = time.monotonic()
        at_end = link.counts()["processed"]
        rate3d = (view3d.paints - paints3d) / (ended - began) if view3d is not None else 0.0
        composite_rate = (window.frame_sync.frames - composites) / (ended - began)
        sent = json.loads(Path(times_file).read_text()) if finished and os.path.exists(times_file) else []
        # the editor catches up with what it received (bounded), then the last frames' paints
        while link.counts()["processed"] < len(sent) and time.monotonic() < ended + 60:
            app.processEvents()
            time.sleep(0.005)
        caught_up = time.monotonic() - ended
        for _ in range(50):
            app.processEvents()
            time.sleep(0.01)
    counts = link.counts()
    link.stop()
    window.timeline.stop()
    first_paint: dict[int, float] = {}
    for at, frame in log.paints:
        first_paint.setdefault(frame, at)
    latency = [(first_paint[f + 1] - t) * 1e3 for f, t in enumerate(sent) if f + 1 in first_paint]
    span = [at for at, frame in log.paints if 1 <= frame]
    fps = (len(span) - 1) / (span[-1] - span[0]) if len(span) > 1 and span[-1] > span[0] else 0.0
    return {"backend": spec, "movers": movers, "static": args.static, "frames": len(sent),
            "shown": len(latency), "latency_ms": float(np.median(latency)) if latency else None,
            "latency_p95_ms": float(np.percentile(latency, 95)) if latency else None,
            "window_fps": fps, "view3d_fps": rate3d, "composites_per_s": composite_rate,
            "processed": counts["processed"],
            "processed_at_end": at_end,
            "catch_up_s": caught_up, "display_skipped": counts["display_skipped"],
            "dropped_by_game": counts["dropped_by_game"], "finished": finished}


def render(rows: list[dict], args, machine: str) -> list[str]:
    lines = [f"`xvfb-run -a -s \"-screen 0 1600x1000x24\" python benchmarks/live_gui.py --frames "
             f"{args.frames} --fps {args.fps:g} --backend {args.backend}` — {machine}. The game "
             "streams from a second process on the same 2 cores; latency runs from the game "
             "starting to send a frame to the first paint of the Top view showing it.", "",
             "| backend | movers | static | frames sent | frames shown | latency ms (median) | "
             "p95 ms | window fps | 3D view paints/s | composites/s | processed when the game ended | "
             "processed | caught up after s | dropped by the game |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lat = "—" if r["latency_ms"] is None else f"{r['latency_ms']:.0f}"
        p95 = "—" if r["latency_p95_ms"] is None else f"{r['latency_p95_ms']:.0f}"
        lines.append(f"| {r['backend']} | {r['movers']:,} | {r['static']:,} | {r['frames']} | "
                     f"{r['shown']} | {lat} | {p95} | {r['window_fps']:.0f} | {r['view3d_fps']:.1f} | "
                     f"{r['composites_per_s']:.1f} | "
                     f"{r['processed_at_end']} | "
                     f"{r['processed']} | {r['catch_up_s']:.1f} | {r['dropped_by_game']} |")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--movers", default="1000,10000", help="comma-separated mover counts")
    ap.add_argument("--static", type=int, default=20_000)
    ap.add_argument("--frames", type=int, default=240)
    ap.add_argument("--fps", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", default="grid:cell_size=36",
                    help="one or more NAME[:K=V,...] joined by '+'")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "RESULTS.md"))
    ap.add_argument("--no-write", action="store_true", help="print the table, leave RESULTS.md alone")
    ap.add_argument("--game", type=int, metavar="PORT", help=argparse.SUPPRESS)
    ap.add_argument("--times", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.game is not None:
        return run_game(args.game, args.static, int(args.movers), args.frames, args.fps,
                        args.seed, args.times)
    from benchmarks.gui_latency import make_window
    from benchmarks.machine import describe_machine

    app, window = make_window()
    if window is None:
        return 1
    info = describe_machine(REPO, "1")
    machine = f"{info['cpu']}, {info['usable_cores']} usable cores, load {info['load_average']}, {info['date']}"
    rows = []
    for spec in args.backend.split("+"):
        for movers in (int(m) for m in args.movers.split(",")):
            print(f"{spec}: {movers} movers ...", file=sys.stderr, flush=True)
            rows.append(measure(window, app, spec, movers, args))
    table = render(rows, args, machine)
    if not args.no_write:
        write_section(Path(args.out), table, "live-gui", heading="## Live link in the window")
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
