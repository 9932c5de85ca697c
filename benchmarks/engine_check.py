"""Tuned Chipmunk2D settings in Chipmunk2D itself (through pymunk): step time, tree vs hashes.

For each level (Freedoom E1M1 and E1M2, a generated 20,000-body level): the level's top view as
a pymunk space (:mod:`benchmarks.pymunk_scene`: Doom walls as static segments, other statics as
rectangles, moving entities as dynamic boxes with seeded velocities), stepped at 1/60 s with

* ``tree``: Chipmunk's default index (its bounding-box tree, no call);
* ``hash (docs)``: ``use_spatial_hash(dim, count)`` at the docs' advice — ``dim`` the median
  shape size, ``count`` ten times the number of shapes;
* ``hash (docs again)``: the same, in a second space: its ratio to the first is the noise floor;
* ``hash (tuned)``: the values ``tune --engine chipmunk`` exports for the level (its own text,
  read back).

Each round builds a fresh space per setting and steps them **in lockstep** (one step of each in
turn, the order rotating; 5 untimed steps first), so all of them are timed at the same simulation
time and under the same load; a step's time is the thread's CPU time (``time.thread_time``:
the time other processes hold the core is left out — the machine is shared). Medians of
``--rounds`` x ``--steps`` steps per setting, their ratios, and the tuned / docs ratio of each
round (the spread says how much the gap can be trusted). The
tuner's own advice (its model of the tree against the tuned hash) is printed beside. The rows go
to ``benchmarks/RESULTS.md`` between ``<!-- BEGIN generated: engine-check -->`` and its END
marker. Needs ``pip install -e '.[engines]'`` (pymunk) and Freedoom for the Doom rows.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from benchmarks.data import doom_wad  # noqa: E402
from benchmarks.pymunk_scene import build_space, from_record, generated  # noqa: E402
from benchmarks.report import write_section  # noqa: E402
from spatial.engines.chipmunk_run import lockstep_times  # noqa: E402

DEFAULT_LEVELS = "freedoom1.wad:E1M1 freedoom1.wad:E1M2 generated:20000"


def load_level(spec: str):
    """A :class:`~benchmarks.pymunk_scene.Level2D` for ``WAD:MAP`` or ``generated:N``."""
    if spec.startswith("generated:"):
        return generated(int(spec.split(":", 1)[1]))
    from editor.model.index_input import index_input
    from editor.model.loading import open_level

    wad, name = spec.split(":")
    path = Path(wad) if Path(wad).exists() else doom_wad(wad)
    return from_record(spec, index_input(open_level(f"{path}:{name}").document))


def tuned_hash(level, budget: float) -> tuple[float, int, str]:
    """``(dim, count, advice)`` from the chipmunk profile's exported text for ``level``."""
    from spatial.engines import engine_profile
    from spatial.engines.profile import LevelFrame
    from spatial.engines.tuning import tune_engine
    from tests.engines.parsers import chipmunk

    work = level.workload
    frame = LevelFrame.of(work.lo, work.hi, 32.0, 2)
    tuned = tune_engine(engine_profile("chipmunk"), work, frame, budget_s=budget, source=level.name)
    parsed = chipmunk(tuned.render())
    advice = "tree" if tuned.settings.prefer_alternative else "hash"
    return parsed["dim"], parsed["count"], advice


def docs_hash(level) -> tuple[float, int]:
    """The docs' starting point: the median shape size, ten cells per shape."""
    sizes = np.concatenate([np.ptp(level.movers, axis=1).max(axis=1),
                            np.ptp(level.rects, axis=1).max(axis=1) if len(level.rects) else [],
                            np.linalg.norm(level.segments[:, 1] - level.segments[:, 0], axis=1)])
    return float(max(np.median(sizes), 1.0)), 10 * level.bodies


def check(spec: str, steps: int, budget: float, rounds: int) -> dict:
    level = load_level(spec)
    began = time.perf_counter()
    dim, count, advice = tuned_hash(level, budget)
    tune_s = time.perf_counter() - began
    # the docs' hash twice: the second space's ratio to the first is the method's noise floor
    settings = {"tree": None, "hash (docs)": docs_hash(level), "hash (docs again)": docs_hash(level),
                "hash (tuned)": (dim, count)}
    times: dict[str, list[float]] = {label: [] for label in settings}
    labels = list(settings)
    per_round = []
    for round_ in range(rounds):
        # fresh spaces per round, built in a rotating order, stepped in lockstep: every setting
        # at the same simulation time, drift in the machine's load spread over all alike
        order = labels[round_ % len(labels):] + labels[:round_ % len(labels)]
        spaces = [build_space(level, settings[label])[0] for label in order]
        timed = lockstep_times(spaces, steps, warm_up=5, clock=time.thread_time)
        for label, t in zip(order, timed):
            times[label] += t
        got = dict(zip(order, timed))
        per_round.append((statistics.median(got["hash (tuned)"]) / statistics.median(got["hash (docs)"]),
                          statistics.median(got["hash (docs again)"]) / statistics.median(got["hash (docs)"])))
        del spaces
    medians = {label: statistics.median(t) * 1000 for label, t in times.items()}
    for label, spatial_hash in settings.items():
        shown = "" if spatial_hash is None else f"(dim {spatial_hash[0]:.4g}, count {spatial_hash[1]})"
        print(f"  {spec} {label}: {medians[label]:.3f} ms/step {shown}", flush=True)
    print(f"  {spec} tuned / docs per round: {', '.join(f'{r:.3f}' for r, _ in per_round)}; "
          f"docs again / docs: {', '.join(f'{a:.3f}' for _, a in per_round)}; "
          f"tuning took {tune_s:.1f} s; load {os.getloadavg()[0]:.2f}", flush=True)
    return {"level": spec, "bodies": level.bodies, "movers": len(level.movers), "settings": settings,
            "ms": medians, "advice": advice, "tune_s": tune_s, "per_round": per_round,
            "load": os.getloadavg()[0]}


def table(rows: list[dict], steps: int, budget: float, rounds: int) -> list[str]:
    from benchmarks.machine import describe_machine

    machine = describe_machine(REPO, "1")
    out = [f"Chipmunk2D {_pymunk_version()}: step time, CPU ms of the stepping thread (median of "
           f"{rounds} rounds x {steps} steps of 1/60 s; each round fresh spaces stepped in lockstep "
           f"after 5 untimed steps, build order rotating); docs = `use_spatial_hash(median 2D shape "
           f"size, 10 x shapes)`; tuned = `tune --engine chipmunk --budget {budget:g}` on the same "
           f"level. Generated by `python benchmarks/engine_check.py --budget {budget:g}` on "
           f"{machine.get('cpu', '?')}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
           "",
           "| level | shapes | movers | tree ms | hash (docs) ms | hash (tuned) ms | docs dim, count "
           "| tuned dim, count | tuned / docs | tuned / docs per round | docs again / docs per round "
           "| tuned / tree | tuner advises | tuning s | load |",
           "|---|---:|---:|---:|---:|---:|---|---|---:|---|---|---:|---|---:|---:|"]
    for r in rows:
        ms, (dim, count) = r["ms"], r["settings"]["hash (tuned)"]
        docs_dim, docs_count = r["settings"]["hash (docs)"]
        out.append(f"| {r['level']} | {r['bodies']} | {r['movers']} | {ms['tree']:.3f} | "
                   f"{ms['hash (docs)']:.3f} | {ms['hash (tuned)']:.3f} | {docs_dim:.4g}, {docs_count} "
                   f"| {dim:.4g}, {count} | {ms['hash (tuned)'] / ms['hash (docs)']:.2f} | "
                   f"{', '.join(f'{x:.2f}' for x, _ in r['per_round'])} | "
                   f"{', '.join(f'{a:.2f}' for _, a in r['per_round'])} | "
                   f"{ms['hash (tuned)'] / ms['tree']:.2f} | {r['advice']} | {r['tune_s']:.1f} | "
                   f"{r['load']:.1f} |")
    return out


def _pymunk_version() -> str:
    import pymunk

    return f"through pymunk {pymunk.version} (Chipmunk build {pymunk.chipmunk_version.split('-')[0]})"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--levels", default=DEFAULT_LEVELS,
                        help="space-separated WAD:MAP (a WAD name is looked up in the Doom "
                             "data folder, $PARTITION_STUDIO_DOOM) or generated:N")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3, help="fresh spaces per setting")
    parser.add_argument("--budget", type=float, default=30.0,
                        help="tuning budget per level (s; 30, as tune's own default)")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "RESULTS.md"))
    args = parser.parse_args(argv)
    rows = []
    for spec in args.levels.split():
        if not spec.startswith("generated:") and not doom_wad(spec.split(":")[0]).exists() \
                and not Path(spec.split(":")[0]).exists():
            print(f"  {spec}: skipped (Freedoom is not installed)", flush=True)
            continue
        rows.append(check(spec, args.steps, args.budget, args.rounds))
    body = table(rows, args.steps, args.budget, args.rounds)
    print("\n".join(body))
    write_section(Path(args.out), body, "engine-check",
                  heading="## Engine check: tuned Chipmunk2D settings in Chipmunk2D")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
