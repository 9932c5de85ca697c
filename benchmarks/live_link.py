#!/usr/bin/env python
"""Live link: frames a second the editor's live path parses and processes, 1k and 10k movers.

A game's stream is generated up front (``--static`` static boxes, then ``--frames`` binary frames
of ``--movers`` boxes moving 2–6 units a frame in a 1000³ world, as ``benchmarks/frame_budget.py``
moves them), so the game's own cost is not measured. Then, per mover count, the bytes are fed
frame by frame to

* the parser alone (:class:`editor.model.live.frame_stream.FrameStreamParser`), and
* a :class:`editor.model.live.session.LiveSession` on ``--backend``: parse, index update,
  lifespans, active pairs, node table and hotspot window — everything the editor does with a
  frame before it paints.

After ``--warmup`` frames it reports the median milliseconds a frame and the sustained frames a
second (frames / total time), and the share of frames within the 16 ms of a 60 Hz game; then
the median of what the editor's processing thread adds when it hands a frame to the display (a
copy of the index and of the hotspot window, at most 30 times a second). Painting
is not measured here (``benchmarks/gui_latency.py`` measures the window). The table goes to
``benchmarks/RESULTS.md`` between ``<!-- BEGIN generated: live-link -->`` and
``<!-- END generated: live-link -->``. This measures; it asserts nothing.
"""
from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import copy  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from benchmarks.frame_budget import WORLD, Movers  # noqa: E402
from benchmarks.report import write_section  # noqa: E402
from editor.model.live.frame_stream import FrameStreamParser, encode_binary_frame  # noqa: E402
from editor.model.live.session import LiveSession  # noqa: E402
from spatial.registry import default_registry  # noqa: E402
from spatial.scenegen import random_boxes  # noqa: E402

BUDGET_MS = 16.0


def make_stream(statics: int, movers: int, frames: int, seed: int) -> list[bytes]:
    """The header line and one binary frame a game frame."""
    s_ids, s_lo, s_hi = random_boxes(statics, seed=seed, size_min=1.0, size_max=100.0, world=WORLD)
    m_ids, m_lo, m_hi = random_boxes(movers, seed=seed + 7, size_min=1.0, size_max=16.0, world=WORLD)
    m_ids = m_ids + statics
    rows = [[int(i), *lo.tolist(), *hi.tolist()] for i, lo, hi in zip(s_ids, s_lo, s_hi)]
    chunks = [(json.dumps({"static": rows}) + "\n").encode()]
    motion = Movers(m_ids, m_lo, m_hi, seed)
    awake = np.ones(movers, dtype=bool)
    for frame in range(1, frames + 1):
        lo, hi = motion.advance()
        chunks.append(encode_binary_frame(frame, m_ids, lo, hi, awake))
    return chunks


#: ``--clock``: wall time, or the CPU time of the thread doing the work (on a shared machine it
#: leaves out the time spent waiting for a core, which the wall time adds to every stage)
CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}


def timed_feed(feed, chunks: list[bytes], warmup: int, clock=time.perf_counter) -> list[float]:
    feed(chunks[0])
    times = []
    for k, chunk in enumerate(chunks[1:]):
        start = clock()
        feed(chunk)
        if k >= warmup:
            times.append((clock() - start) * 1e3)
    return times


#: the stages of a session's frame, as (label, object attribute path, method name)
STAGES = (("parse", "parser", "feed"), ("frame delta", "recording", "delta"),
          ("index update", "index", "update"), ("cell tables, lifespans", "index", "step"),
          ("active pairs", "index", "pairs"), ("node table", "index", "nodes"),
          ("hotspot window", "hotspots", "push"))


def time_stages(session: LiveSession, clock=time.perf_counter) -> dict[str, list[float]]:
    """Wrap the methods a frame goes through on ``session``'s own objects, so each call's
    milliseconds are kept under its stage's label (the first frame's build included)."""
    spent: dict[str, list[float]] = {label: [] for label, _, _ in STAGES}

    def timed(label, method):
        def call(*args, **kwargs):
            start = clock()
            try:
                return method(*args, **kwargs)
            finally:
                spent[label].append((clock() - start) * 1e3)
        return call

    for label, owner, name in STAGES:
        target = getattr(session, owner)
        setattr(target, name, timed(label, getattr(target, name)))
    return spent


def parse_backend(spec: str) -> tuple[str, dict]:
    """``"grid:cell_size=64"`` -> ``("grid", {"cell_size": "64"})`` (values parsed by the backend)."""
    name, _, rest = spec.partition(":")
    params = dict(item.split("=", 1) for item in rest.split(",") if item) if rest else {}
    return name, params


def measure(movers: int, spec: str, args) -> dict:
    from spatial.params import parse_params

    clock = CLOCKS[args.clock]
    chunks = make_stream(args.static, movers, args.warmup + args.frames, args.seed)
    parse = timed_feed(FrameStreamParser("bench").feed, chunks, args.warmup, clock)
    name, params = parse_backend(spec)
    cls = default_registry().backend(name)
    session = LiveSession(cls(parse_params(cls.Params, params)), "bench",
                          capacity=args.warmup + args.frames + 1)
    spent = time_stages(session, clock) if args.stages or args.clock == "cpu" else {}
    full = timed_feed(session.feed, chunks, args.warmup, clock)
    assert session.frames == args.warmup + args.frames
    handover = []
    for _ in range(20):  # what LiveProcessor._offer_newest copies for the display
        start = clock()
        copy.deepcopy(session.index)
        session.hotspots.copy()
        handover.append((clock() - start) * 1e3)
    if args.clock == "cpu":  # the index's own timings are wall time: the stages' instead
        update_pairs = [sum(parts) for parts in zip(*(spent[label][-args.frames:] for label in (
            "index update", "cell tables, lifespans", "active pairs")))]
    else:
        update_pairs = [s.update_ms + s.pairs_ms for s in session.stats[-args.frames:]]
    frame_bytes = len(chunks[1])
    return {"movers": movers, "static": args.static, "backend": spec, "frame_bytes": frame_bytes,
            "update_pairs_ms": float(np.median(update_pairs)),
            "update_pairs_within": float(np.mean(np.array(update_pairs) <= BUDGET_MS)),
            "parse_ms": float(np.median(parse)), "parse_fps": len(parse) / (sum(parse) / 1e3),
            "frame_ms": float(np.median(full)), "max_ms": float(np.max(full)),
            "fps": len(full) / (sum(full) / 1e3), "handover_ms": float(np.median(handover)),
            "within_budget": float(np.mean(np.array(full) <= BUDGET_MS)),
            "overlapping": session.stats[-1].overlapping,
            "stages": {label: float(np.median(times[-args.frames:])) for label, times in spent.items()}}


def render(results: list[dict], args, machine: str) -> list[str]:
    clock = "" if args.clock == "wall" else f" --clock {args.clock}"
    lines = [f"`python benchmarks/live_link.py --static {args.static} --frames {args.frames} "
             f"--backend {args.backend}{clock}` — {machine}. Median of {args.frames} frames after "
             f"{args.warmup} warm-up frames; a frame is fed as the bytes of one binary frame. "
             "*update + pairs* is the index's incremental update and active-pair search (the "
             "16 ms of a 60 Hz frame); *whole frame* adds parsing, the frame delta, the node table "
             "and the hotspot sums the editor shows; *handover* is the copy of the index and of the "
             "hotspot window the editor makes for the display, at most 30 times a second.", "",
             "| backend | movers | static | bytes/frame | parse ms | update + pairs ms | "
             "≤ 16 ms | whole frame ms | max ms | sustained frames/s | handover ms | overlapping |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        if r["stages"]:
            stages = ", ".join(f"{label} {ms:.2f}" for label, ms in r["stages"].items())
            print(f"{r['backend']}, {r['movers']:,} movers — median ms per stage: {stages}",
                  file=sys.stderr)
        lines.append(f"| {r['backend']} | {r['movers']:,} | {r['static']:,} | {r['frame_bytes']:,} | "
                     f"{r['parse_ms']:.2f} | {r['update_pairs_ms']:.2f} | "
                     f"{100 * r['update_pairs_within']:.0f}% | {r['frame_ms']:.2f} | "
                     f"{r['max_ms']:.1f} | {r['fps']:.0f} | {r['handover_ms']:.2f} | "
                     f"{r['overlapping']:,} |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--movers", default="1000,10000", help="comma-separated mover counts")
    parser.add_argument("--static", type=int, default=20_000)
    parser.add_argument("--frames", type=int, default=60, help="measured frames (median over them)")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--backend", default="octree+grid+grid:cell_size=36",
                        help="one or more NAME[:K=V,...] joined by '+', e.g. "
                             "'octree+grid:cell_size=36' (a row per backend and mover count)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "RESULTS.md"))
    parser.add_argument("--no-write", action="store_true", help="print the table, leave RESULTS.md alone")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall time, or the measuring thread's CPU time (a shared machine's "
                             "waits for a core left out)")
    parser.add_argument("--stages", action="store_true",
                        help="also print the median milliseconds of each stage of a frame "
                             "(the timing wrappers add a little to the whole frame)")
    args = parser.parse_args(argv)
    from benchmarks.machine import describe_machine
    info = describe_machine(REPO, "1")
    machine = f"{info['cpu']}, {info['usable_cores']} usable cores, load {info['load_average']}, {info['date']}"
    results = []
    for spec in args.backend.split("+"):
        for movers in (int(m) for m in args.movers.split(",")):
            print(f"{spec}: {movers} movers ...", file=sys.stderr, flush=True)
            results.append(measure(movers, spec, args))
    table = render(results, args, machine)
    if not args.no_write:
        write_section(Path(args.out), table, "live-link", heading="## Live link")
    print("\n".join(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
