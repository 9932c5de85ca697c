#!/usr/bin/env python
"""Frame budget: can one simulation frame of 10k moving objects among 20k static ones fit 16 ms?

For every registered backend (``brute`` excluded: 10k active objects against 30k is 3·10⁸ tests
a frame) the script builds the index with ``--static`` static boxes and ``--moving`` dynamic ones
(``spatial.scenegen.random_boxes``; static sizes 1–100, moving sizes 1–16 in a 1000³ world),
then steps frames exactly as the simulation does (:mod:`editor.model.frame_step`): every mover
advances by its velocity (2–6 units a frame, bouncing off the world), the index is updated
with the moved ids, lifespans step one frame, ``pairs('active')`` collects the pairs and
``--rays`` closest-hit rays are cast (``query_rays``: line of sight, projectiles, picking — the
first query after the update, so work a backend defers to its next query is paid in the frame).
A frame's time is update + lifespans + pairs + rays. After ``--warmup`` frames (compilation, lazy
builds) it reports the median, minimum and maximum of ``--frames`` frames, and writes them to
``benchmarks/RESULTS.md`` between ``<!-- BEGIN generated: frame-budget -->`` and
``<!-- END generated: frame-budget -->`` (the rest of the file is kept).

This measures; it asserts nothing. ``python benchmarks/frame_budget.py --help`` for options.
"""
from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from benchmarks.report import write_section  # noqa: E402
from editor.model.frame_step import FrameDelta, apply_delta, settle_frame  # noqa: E402
from spatial.atomic import atomic_write_text  # noqa: E402
from spatial.registry import default_registry  # noqa: E402
from spatial.scenegen import random_boxes  # noqa: E402

WORLD = 1000.0
BUDGET_MS = 16.0


class Movers:
    """Boxes moving at constant velocity, bouncing off the world cube (vectorised)."""

    def __init__(self, ids, lo, hi, seed: int) -> None:
        rng = np.random.default_rng(seed + 1)
        self.ids = ids
        self.centre = (lo + hi) / 2
        self.half = (hi - lo) / 2
        direction = rng.normal(size=(len(ids), 3))
        direction /= np.linalg.norm(direction, axis=1)[:, None]
        self.velocity = direction * rng.uniform(2.0, 6.0, size=(len(ids), 1))

    def advance(self) -> tuple[np.ndarray, np.ndarray]:
        self.centre += self.velocity
        low = self.centre - self.half < 0.0
        high = self.centre + self.half > WORLD
        self.velocity = np.where(low, np.abs(self.velocity), np.where(high, -np.abs(self.velocity), self.velocity))
        self.centre = np.clip(self.centre, self.half, WORLD - self.half)
        return self.centre - self.half, self.centre + self.half


def parse_variant(text: str) -> tuple[str, dict]:
    """``octree`` or ``octree[looseness=2,max_depth=10]`` -> name and parameter overrides."""
    if "[" not in text:
        return text, {}
    name, rest = text.split("[", 1)
    if not rest.endswith("]"):
        raise SystemExit(f"--backends: expected NAME[K=V,...], got {text!r}")
    params = dict(item.split("=", 1) for item in rest[:-1].split(",") if item)
    return name, params


def frame_rays(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` rays from random points of the world in random directions (fixed per seed)."""
    rng = np.random.default_rng(seed + 11)
    origins = rng.uniform(0.0, WORLD, size=(count, 3))
    directions = rng.normal(size=(count, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return origins, directions


def measure(label: str, static, moving, warmup: int, frames: int, seed: int, give_up_ms: float,
            rays: int = 1000) -> dict:
    from spatial.params import parse_params

    name, overrides = parse_variant(label)
    cls = default_registry().backend(name)
    index = cls(parse_params(cls.Params, overrides))
    s_ids, s_lo, s_hi = static
    m_ids, m_lo, m_hi = moving
    ids = np.concatenate([s_ids, m_ids])
    start = time.perf_counter()
    index.build(ids, np.concatenate([s_lo, m_lo]), np.concatenate([s_hi, m_hi]),
                dynamic=np.concatenate([np.zeros(len(s_ids), bool), np.ones(len(m_ids), bool)]))
    build_ms = (time.perf_counter() - start) * 1e3
    movers = Movers(m_ids, m_lo, m_hi, seed)
    origins, directions = frame_rays(rays, seed)
    update, pairs, cast, total, found = [], [], [], [], []
    no_flags = (np.empty(0, dtype=np.int64), np.empty(0, dtype=bool))
    for frame in range(warmup + frames):
        lo, hi = movers.advance()
        edit_ms = apply_delta(index, FrameDelta(moved=m_ids, moved_lo=lo, moved_hi=hi))
        settle_ms, result, pairs_ms = settle_frame(index, *no_flags)
        start = time.perf_counter()
        if rays:
            index.query_rays(origins, directions)
        rays_ms = (time.perf_counter() - start) * 1e3
        frame_ms = edit_ms + settle_ms + pairs_ms + rays_ms
        if frame >= warmup:
            update.append(edit_ms + settle_ms)
            pairs.append(pairs_ms)
            cast.append(rays_ms)
            total.append(frame_ms)
            found.append(len(result.pairs))
        if frame > 0 and frame_ms > give_up_ms:  # frame 0 may compile
            break
    if len(total) < frames:
        return {"backend": label, "build_ms": build_ms, "skipped": f"a frame took over {give_up_ms / 1e3:.0f} s",
                "frames": len(total), "frame_ms": total}
    return {"backend": label, "build_ms": build_ms, "frames": len(total),
            "update_ms": float(np.median(update)), "pairs_ms": float(np.median(pairs)),
            "rays_ms": float(np.median(cast)),
            "frame_ms": float(np.median(total)), "min_ms": float(np.min(total)), "max_ms": float(np.max(total)),
            "pairs": int(np.median(found)), "nodes": len(index.nodes())}


def render(results: list[dict], args, machine: str) -> list[str]:
    lines = [f"Frame budget ({BUDGET_MS:.0f} ms): {args.moving} moving among {args.static} static boxes, "
             f"seed {args.seed}; medians of {args.frames} frames after {args.warmup} warm-up frames. "
             f"A frame = incremental `update` of every mover + `step(1)` (lifespans) + `pairs('active')` "
             f"+ {args.rays:,} closest-hit rays (`query_rays`, the first query after the update). "
             f"Generated by `python benchmarks/frame_budget.py` on {machine}.", "",
             "| backend | frame ms (median) | min–max ms | update+step ms | pairs ms | rays ms | fits 16 ms "
             "| active pairs | nodes | build ms |",
             "|---|---:|---:|---:|---:|---:|:---:|---:|---:|---:|"]
    for r in results:
        if "skipped" in r:
            lines.append(f"| {r['backend']} | – | – | – | – | – | no ({r['skipped']}) | – | – | {r['build_ms']:.0f} |")
            continue
        fits = "yes" if r["frame_ms"] <= BUDGET_MS else f"no (×{r['frame_ms'] / BUDGET_MS:.1f})"
        lines.append(f"| {r['backend']} | {r['frame_ms']:.2f} | {r['min_ms']:.2f}–{r['max_ms']:.2f} | "
                     f"{r['update_ms']:.2f} | {r['pairs_ms']:.2f} | {r['rays_ms']:.2f} | {fits} | "
                     f"{r['pairs']} | {r['nodes']} | "
                     f"{r['build_ms']:.0f} |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--static", type=int, default=20_000)
    parser.add_argument("--moving", type=int, default=10_000)
    parser.add_argument("--frames", type=int, default=7, help="measured frames (median over them)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rays", type=int, default=1000, help="closest-hit rays cast each frame")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backends", default="", help="space-separated NAME or NAME[K=V,...] "
                        "(default: every backend but brute, and the loose octree)")
    parser.add_argument("--give-up", type=float, default=20.0, help="seconds: stop a backend whose frame takes longer")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "RESULTS.md"))
    parser.add_argument("--json", help="also write raw results here")
    args = parser.parse_args(argv)
    registry = default_registry()
    names = args.backends.split() or sorted(n for n in registry.backends if n != "brute")
    if not args.backends and "octree" in registry.backends:
        names.insert(names.index("octree") + 1, "octree[looseness=2]")
    static = random_boxes(args.static, seed=args.seed, size_min=1.0, size_max=100.0, world=WORLD)
    m_ids, m_lo, m_hi = random_boxes(args.moving, seed=args.seed + 7, size_min=1.0, size_max=16.0, world=WORLD)
    moving = (m_ids + args.static, m_lo, m_hi)
    from benchmarks.machine import describe_machine
    info = describe_machine(REPO, "1")
    machine = f"{info['cpu']}, {info['usable_cores']} usable cores, load {info['load_average']}, {info['date']}"
    results = []
    for name in names:
        print(f"{name} ...", file=sys.stderr, flush=True)
        results.append(measure(name, static, moving, args.warmup, args.frames, args.seed, args.give_up * 1e3,
                               args.rays))
        r = results[-1]
        print(f"  {r.get('frame_ms') if 'skipped' not in r else r['skipped']}", file=sys.stderr, flush=True)
        write_section(Path(args.out), render(results, args, machine), "frame-budget",
                      heading="## Frame budget")
    if args.json:
        atomic_write_text(args.json, json.dumps({"machine": info, "results": results}, indent=1))
    print("\n".join(render(results, args, machine)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
