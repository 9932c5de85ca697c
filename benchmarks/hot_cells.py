#!/usr/bin/env python
"""What the Hotspots list costs to fill: the objects and tests of the ten hottest cells.

Feeds the live-link benchmark's stream (``benchmarks/live_link.py``: ``--static`` boxes, then
``--movers`` boxes moving every frame) to a live session per backend, then times
:func:`editor.model.hotspot_pairs.hot_cells` for the ten hottest cells of the window (what
the Hotspots list computes at each refresh, on a worker while a live game plays: the ranking,
each cell's row and its objects): median of ``--repeats``.
Prints the node count and the objects held in the hottest cell beside it. This measures; it
asserts nothing.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def main(argv=None) -> int:
    from benchmarks.import_level import machine_line
    from benchmarks.live_link import make_stream
    from benchmarks.stream_args import add_stream_arguments
    from editor.model.hotspot_pairs import hot_cells
    from editor.model.live.session import LiveSession
    from spatial.registry import default_registry

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_stream_arguments(parser, movers=1000, frames=40)
    parser.add_argument("--backends", default="octree,grid,bvh")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    chunks = make_stream(args.static, args.movers, args.frames, args.seed)
    print(f"`python benchmarks/hot_cells.py --movers {args.movers} --static {args.static}` — {machine_line()}")
    print("| backend | nodes | held in the hottest cell | ten hot cells ms (median) |")
    print("|---|---:|---:|---:|")
    for name in args.backends.split(","):
        session = LiveSession(default_registry().backend(name)(), "bench", capacity=args.frames + 1)
        for chunk in chunks:
            session.feed(chunk)
        nodes, pairs = session.index.nodes(), session.last_pairs.pairs
        times, held = [], 0
        for _ in range(args.repeats):
            start = time.perf_counter()
            cells = [cell for _, cell in hot_cells(session.hotspots, 10, session.index, nodes, pairs)
                     if cell is not None]
            times.append((time.perf_counter() - start) * 1e3)
            held = len(cells[0].held) if cells else 0
        print(f"| {name} | {len(nodes):,} | {held:,} | {statistics.median(times):.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
