"""Tuned Chipmunk2D settings in Chipmunk2D itself (through pymunk): step time, tree vs hashes.

For each level (Freedoom E1M1 and E1M2, a generated 20,000-body level): the level's top view as
a pymunk space (:mod:`benchmarks.pymunk_scene`: Doom walls as static segments, other statics as
rectangles, moving entities as dynamic boxes with seeded velocities), stepped at 1/60 s with

* ``tree``: Chipmunk's default index (its bounding-box tree, no call);
* ``hash (docs)``: ``use_spatial_hash(dim, count)`` at the docs' advice — ``dim`` the median
  shape size, ``count`` ten times the number of shapes;
* ``hash (tuned)``: the values ``tune --engine chipmunk`` exports for the level (its own text,
  read back).

Medians of ``--rounds`` x ``--steps`` steps (each round a fresh space, 5 untimed steps first,
the settings in rotating order), per setting, and their ratios. The
tuner's own advice (its model of the tree against the tuned hash) is printed beside. The rows go
to ``benchmarks/RESULTS.md`` between ``<!-- BEGIN generated: engine-check -->`` and its END
marker. Needs ``pip install -e '.[engines]'`` (pymunk) and Freedoom for the Doom rows.
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

import numpy as np  # noqa: E402

from benchmarks.data import doom_wad  # noqa: E402
from benchmarks.pymunk_scene import build_space, from_record, generated, step_times  # noqa: E402
from benchmarks.report import write_section  # noqa: E402

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
    settings = {"tree": None, "hash (docs)": docs_hash(level), "hash (tuned)": (dim, count)}
    times: dict[str, list[float]] = {label: [] for label in settings}
    labels = list(settings)
    for round_ in range(rounds):
        # a fresh space per round, in a rotating order, so drift in the machine's load and
        # allocator state spreads over every setting alike
        for label in labels[round_ % len(labels):] + labels[:round_ % len(labels)]:
            space, _ = build_space(level, settings[label])
            times[label] += step_times(space, steps)
    medians = {label: statistics.median(t) * 1000 for label, t in times.items()}
    for label, spatial_hash in settings.items():
        shown = "" if spatial_hash is None else f"(dim {spatial_hash[0]:.4g}, count {spatial_hash[1]})"
        print(f"  {spec} {label}: {medians[label]:.3f} ms/step {shown}", flush=True)
    return {"level": spec, "bodies": level.bodies, "movers": len(level.movers), "settings": settings,
            "ms": medians, "advice": advice, "tune_s": tune_s}


def table(rows: list[dict], steps: int, budget: float, rounds: int) -> list[str]:
    from benchmarks.machine import describe_machine

    machine = describe_machine(REPO, "1")
    out = [f"Chipmunk2D {_pymunk_version()}: step time (median of {rounds} rounds x {steps} steps of "
           f"1/60 s, each round a fresh space after 5 untimed steps, settings in rotating order); "
           f"tuned = `tune --engine chipmunk --budget {budget:g}` on the same "
           f"level. Generated by `python benchmarks/engine_check.py` on {machine.get('cpu', '?')}, "
           f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
           "",
           "| level | shapes | movers | tree ms | hash (docs) ms | hash (tuned) ms | tuned dim, count "
           "| tuned / docs | tuned / tree | tuner advises |",
           "|---|---:|---:|---:|---:|---:|---|---:|---:|---|"]
    for r in rows:
        ms, (dim, count) = r["ms"], r["settings"]["hash (tuned)"]
        out.append(f"| {r['level']} | {r['bodies']} | {r['movers']} | {ms['tree']:.3f} | "
                   f"{ms['hash (docs)']:.3f} | {ms['hash (tuned)']:.3f} | {dim:.4g}, {count} | "
                   f"{ms['hash (tuned)'] / ms['hash (docs)']:.2f} | {ms['hash (tuned)'] / ms['tree']:.2f} "
                   f"| {r['advice']} |")
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
    parser.add_argument("--budget", type=float, default=10.0, help="tuning budget per level (s)")
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
