#!/usr/bin/env python
"""The grid's kept static cell tables, against making every table again each frame.

Feeds the live-link benchmark's stream (``benchmarks/live_link.py``: ``--static`` boxes, then
``--movers`` boxes moving every frame) to two live sessions on ``grid`` at ``--cell-size`` in
the same process, frame by frame in alternating order so the machine's load falls on both
alike: the product's grid (static tables kept while they stay put) and the same grid made to
hash every object again each frame (its kept tables dropped before each rebuild). Prints the
median milliseconds of the whole frame and of update + active pairs for each, their ratio, and
whether both found the same overlapping pairs on every frame. This measures; it asserts nothing.
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
    from benchmarks.live_link import make_stream
    from benchmarks.stream_args import add_stream_arguments
    from editor.model.live.session import LiveSession
    from spatial.params import parse_params
    from spatial.registry import default_registry

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_stream_arguments(parser, movers=10_000, frames=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--cell-size", type=float, default=36.0)
    args = parser.parse_args(argv)
    grid = default_registry().backend("grid")

    class EveryTableAgain(grid):  # type: ignore[misc, valid-type]
        def _rebuild_cells(self) -> None:
            self._static_cells = None
            super()._rebuild_cells()

    params = parse_params(grid.Params, {"cell_size": args.cell_size})
    runs = {"kept": LiveSession(grid(params), "kept", capacity=args.frames + args.warmup + 1),
            "again": LiveSession(EveryTableAgain(params), "again",
                                 capacity=args.frames + args.warmup + 1)}
    times: dict[str, list[float]] = {name: [] for name in runs}
    chunks = make_stream(args.static, args.movers, args.warmup + args.frames, args.seed)
    for k, chunk in enumerate(chunks):
        for name in (("kept", "again") if k % 2 else ("again", "kept")):
            began = time.perf_counter()
            runs[name].feed(chunk)
            times[name].append((time.perf_counter() - began) * 1e3)
    frame = {name: statistics.median(t[args.warmup + 1:]) for name, t in times.items()}
    update = {name: statistics.median(s.update_ms + s.pairs_ms for s in run.stats[args.warmup:])
              for name, run in runs.items()}
    same = [s.overlapping for s in runs["kept"].stats] == [s.overlapping for s in runs["again"].stats]
    print(f"grid cell_size={args.cell_size:g}, {args.movers:,} movers among {args.static:,} static, "
          f"median of {args.frames} frames")
    print(f"whole frame: kept {frame['kept']:.2f} ms, again {frame['again']:.2f} ms, "
          f"ratio {frame['kept'] / frame['again']:.3f}")
    print(f"update + pairs: kept {update['kept']:.2f} ms, again {update['again']:.2f} ms, "
          f"ratio {update['kept'] / update['again']:.3f}")
    print(f"same overlapping pairs on every frame: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
