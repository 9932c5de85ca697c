#!/usr/bin/env python
"""Broad-phase benchmark: our registered backends against the libraries a user would pick.

Run ``python benchmarks/run.py --help`` for the options; ``benchmarks/README.md`` explains the
operations, the peers and how ratios are computed. One process generates each scene once and
runs every implementation on it, single-threaded, writing a Markdown section (between markers)
into ``benchmarks/RESULTS.md`` after every scene, so an interrupted run still leaves results.
"""
from __future__ import annotations

import os

# Single-threaded for everyone: set before numpy, scipy, numba or any peer library is imported.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "BLIS_NUM_THREADS",
                    "NUMBA_NUM_THREADS")
for _variable in THREAD_VARIABLES:
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from benchmarks import report  # noqa: E402
from benchmarks.adapters import Adapter, our_adapters  # noqa: E402
from benchmarks.checks import check_scene  # noqa: E402
from benchmarks.families import FAMILIES, FamilyUnavailable  # noqa: E402
from benchmarks.floor import pair_floor  # noqa: E402
from benchmarks.machine import describe_machine  # noqa: E402
from benchmarks.peers import PEERS, peer_adapters  # noqa: E402
from benchmarks.timing import Cell, format_seconds, time_op  # noqa: E402
from benchmarks.workload import (  # noqa: E402
    REFERENCE_N,
    REFERENCE_WORLD,
    Workload,
    csr_checksum,
    make_workload,
    pair_checksum,
    parse_world,
    world_side,
)
from spatial.atomic import atomic_write_text  # noqa: E402

ALL_OPS = ("build", "pairs", "oneshot", "box", "ray", "update", "rebuild", "frame")
PAIR_OPS = ("pairs", "oneshot", "frame")
#: Batches of a fixed number of queries: their cost follows the depth and the hits per query.
QUERY_OPS = ("box", "ray")
#: A cell is skipped when its predicted single run exceeds this many time limits.
SKIP_FACTOR = 3.0


def _thread_limits() -> str:
    """Cap native thread pools (threadpoolctl where installed); describe what was done."""
    text = ", ".join(f"{v}=1" for v in THREAD_VARIABLES)
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1)
        text += "; threadpoolctl.threadpool_limits(1)"
    except ImportError:
        text += "; threadpoolctl not installed"
    return text + "; Open3D nthreads=1; cKDTree workers=1 (its default)"


def _world_option(text: str) -> str | float:
    try:
        return parse_world(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000", help="object counts N")
    parser.add_argument("--repeats", type=int, default=5, help="runs per cell (the median is shown)")
    parser.add_argument("--ops", default=",".join(ALL_OPS),
                        help=f"operations ({', '.join(ALL_OPS)}); build always runs")
    parser.add_argument("--backends", default="", help="our backends (default: every registered one)")
    parser.add_argument("--peers", default=",".join(PEERS), help="peer libraries")
    parser.add_argument("--layouts", default="sparse,mixed,clustered,quake,doom",
                        help=f"scene families ({', '.join(FAMILIES)}; see benchmarks/families.py)")
    parser.add_argument("--world", type=_world_option, default="scaled",
                        help="side of the world cube the objects are placed in: 'scaled' = "
                             "1000 * (N / 100000)^(1/3), the same object density at every N; "
                             "'fixed' = 1000 for every N (density grows with N); or a number "
                             "(that side for every N)")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "RESULTS.md"),
                        help="Markdown file whose generated section is rewritten ('' for none)")
    parser.add_argument("--section", default="broadphase",
                        help="name of the generated section in --out (a separate run, e.g. one more "
                             "scene, can keep its own section beside the main one)")
    parser.add_argument("--json", default="", help="also write all raw results to this JSON file")
    parser.add_argument("--time-limit", type=float, default=20.0,
                        help="seconds per cell: stop repeating once the runs took this long; "
                             "skip a cell predicted (from the previous N) to take over "
                             f"{SKIP_FACTOR:g} times this for one run")
    parser.add_argument("--budget", type=float, default=0.0,
                        help="seconds for the whole run; later cells are skipped once spent (0: none)")
    parser.add_argument("--queries", type=int, default=10_000, help="box queries per batch")
    parser.add_argument("--rays", type=int, default=10_000, help="rays per batch")
    parser.add_argument("--brute-max", type=int, default=10_000,
                        help="largest N the quadratic brute-force backend runs at")
    parser.add_argument("--max-pairs", type=float, default=6e7,
                        help="skip pair operations when the estimated pair count exceeds this")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory probes")
    parser.add_argument("--memory-all", action="store_true",
                        help="probe the memory of every registered backend (brute excepted) at the "
                             "largest N, also those --backends left out of the timed run")
    parser.add_argument("--memory-budget", type=float, default=300.0,
                        help="seconds for all memory probes (each builds once more in a fresh process)")
    parser.add_argument("--memory-limit", type=float, default=0.0,
                        help="GiB of data memory for this process (RLIMIT_DATA): an implementation "
                             "that needs more fails its cell with MemoryError instead of the kernel "
                             "killing the whole run (0: no limit)")
    parser.add_argument("--skip", default="",
                        help="IMPL@FAMILY[,...]: do not run these implementations in these scene "
                             "families (a pathological peer case); their cells say so")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--render-json", default="",
                        help="rewrite the report section from the raw results of an earlier "
                             "--json run instead of running (after a change to the report code)")
    parser.add_argument("--memory-probe", default="", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def select_implementations(args) -> tuple[list[Adapter], list[Adapter], dict[str, str]]:
    """Our adapters, peer adapters, and everything unavailable (failed plugin or import)."""
    ours, failures = our_adapters()
    unavailable = {f"plugin {name}": error for name, error in failures.items()}
    wanted = _split(args.backends)
    if wanted:
        known = {a.label for a in ours}
        for name in wanted:
            if name not in known:
                unavailable[name] = "not registered"
        ours = [a for a in ours if a.label in wanted]
    peers, missing = peer_adapters(_split(args.peers))
    unavailable.update(missing)
    return ours, peers, unavailable


class Predictor:
    """Predicts a cell's single-run time from the same implementation at the previous N.

    Work over the objects grows at least like ``N log N``; pair operations also grow with the
    number of pairs. A batch of queries (a fixed count at every N) grows like ``log N`` times
    the growth of the object density (pairs per object), which sets the hits per query. Pair
    counts are the scenes' own estimates, so this follows ``--world``: the density is constant
    in a scaled world and grows like ``N`` in a fixed one. These bounds are pessimistic for
    implementations whose cost is search rather than output, so a cell is skipped only when
    the prediction exceeds ``SKIP_FACTOR`` times the time limit (hopeless, not merely slow);
    the skip note states the prediction.
    """

    def __init__(self):
        self.seen: dict[tuple[str, str, str], tuple[int, float, float]] = {}

    def record(self, name, layout, op, n, pairs, seconds) -> None:
        self.seen[(name, layout, op)] = (n, pairs, seconds)

    def predict(self, name, layout, op, n, pairs) -> tuple[float, int] | None:
        """``(seconds, from_n)`` or None when nothing smaller of this layout was timed."""
        if (name, layout, op) not in self.seen:
            return None
        n0, pairs0, seconds = self.seen[(name, layout, op)]
        if n <= n0:
            return None
        depth = math.log(max(n, 2)) / math.log(max(n0, 2))
        if op in QUERY_OPS:
            density = (pairs / n) / (pairs0 / n0) if pairs0 > 0 else 1.0
            return seconds * depth * max(1.0, density), n0
        growth = (n / n0) * depth
        if op in PAIR_OPS and pairs0 > 0:
            growth = max(growth, pairs / pairs0)
        return seconds * growth, n0


def run_implementation(adapter: Adapter, w: Workload, ops: list[str], args, predictor: Predictor,
                       deadline: float) -> tuple[dict[str, Cell], dict]:
    """Every requested operation of one implementation on one scene; never raises."""
    run = _ImplementationRun(adapter, w, ops, args, predictor, deadline)
    run.run()
    return run.cells, run.side


class _ImplementationRun:
    """The cells of one implementation on one scene, measured in the order of :data:`OPS`."""

    def __init__(self, adapter: Adapter, w: Workload, ops: list[str], args, predictor: Predictor,
                 deadline: float) -> None:
        self.adapter, self.w, self.ops, self.args = adapter, w, ops, args
        self.predictor, self.deadline = predictor, deadline
        self.cells: dict[str, Cell] = {}
        self.side: dict = {}  # answers kept for the cross-checks (not serialised)
        self.moves = 0  # updates applied so far: moves alternate between displaced and original bounds

    # ------------------------------------------------------------------ one cell
    def skipped_for(self, op: str) -> Cell | None:
        w, args = self.w, self.args
        if self.deadline and time.monotonic() > self.deadline:
            return Cell("skip", note="run budget (--budget) spent")
        if op in PAIR_OPS and w.estimated_pairs > args.max_pairs:
            return Cell("skip", note=f"≈{w.estimated_pairs:.2g} pairs estimated: above --max-pairs "
                                     f"{args.max_pairs:.2g} (output alone would swamp time and memory)")
        guess = self.predictor.predict(self.adapter.label, w.layout, op, w.n, w.estimated_pairs)
        if guess and guess[0] > SKIP_FACTOR * args.time_limit:
            return Cell("skip", note=f"predicted ≈{format_seconds(guess[0])} per run from N={guess[1]:,} "
                                     f"(> {SKIP_FACTOR:g} × the {args.time_limit:g} s limit)")
        return None

    def measure(self, op: str, run, summarize=None) -> None:
        w, label = self.w, self.adapter.label
        cell = self.skipped_for(op) or time_op(run, self.args.repeats, self.args.time_limit, summarize)
        self.cells[op] = cell
        if cell.status == "ok":
            self.predictor.record(label, w.layout, op, w.n, w.estimated_pairs, cell.median)
        status = format_seconds(cell.median) if cell.status == "ok" else f"{cell.status}: {cell.note}"
        print(f"    {label:>10} {op:<8} {status}", flush=True)

    def pairs_summary(self, pairs):
        if self.adapter.family == "ours" and self.adapter.exact:
            self.side["pairs_answer"] = pairs  # the floor is timed over a known exact answer
        return {"count": int(len(pairs)), "checksum": pair_checksum(pairs, self.w.n)}

    def ready(self) -> None:
        self.adapter.ready(*self.w.probe())

    def move_and(self, op_call):
        def run(_repeat):
            index, lo, hi = self.w.move(self.moves)
            answer = op_call(index, lo, hi)
            self.moves += 1
            return answer
        return run

    # ------------------------------------------------------------------ the sequence
    def run(self) -> None:
        adapter, w = self.adapter, self.w

        def build_and_ready(_repeat):
            adapter.build(w.ids, w.lo, w.hi)
            self.ready()

        self.measure("build", build_and_ready)
        if self.cells["build"].status != "ok":
            for op in self.ops:
                if op != "build":
                    self.cells[op] = Cell("skip", note="not built")
            return
        try:
            self.side["memory_reported"] = adapter.memory()
        except Exception:
            self.side["memory_reported"] = None
        if not self._pair_cells():
            return
        self._query_cells()
        self._update_cells()

    def _pair_cells(self) -> bool:
        """``pairs`` and ``oneshot``; False when the structure is gone and nothing can follow."""
        adapter, w, ops = self.adapter, self.w, self.ops
        if "pairs" in ops:
            self.measure("pairs", lambda _r: adapter.pairs(), self.pairs_summary)
        if "oneshot" in ops:
            self.measure("oneshot", lambda _r: adapter.oneshot(w.ids, w.lo, w.hi), self.pairs_summary)
            if self.cells["oneshot"].status == "error":
                # A failed run may have left a half-built structure; the later operations expect
                # the one from the build cell. A completed run rebuilt exactly that (same arrays),
                # so only a failure needs this untimed rebuild.
                try:
                    adapter.build(w.ids, w.lo, w.hi)
                except Exception as exc:
                    for op in ops[ops.index("oneshot") + 1:]:
                        self.cells[op] = Cell("skip", note=f"rebuild after the failed build + pairs failed: "
                                                           f"{type(exc).__name__}")
                    return False
        return True

    def _query_cells(self) -> None:
        adapter, w, ops = self.adapter, self.w, self.ops
        if "box" in ops:
            self.measure("box", lambda _r: adapter.query_boxes(w.query_lo, w.query_hi),
                         lambda ans: {"hits": int(np.sum(ans[1])), "checksum": csr_checksum(ans[0], ans[1], w.n)})
        if "ray" in ops:
            def keep_rays(ans):
                self.side["rays"] = (np.asarray(ans[0]), np.asarray(ans[1]))
                return {"hits": int(np.sum(np.asarray(ans[0]) >= 0))}
            self.measure("ray", lambda _r: adapter.query_rays(w.ray_origins, w.ray_directions), keep_rays)

    def _update_cells(self) -> None:
        adapter, w, ops = self.adapter, self.w, self.ops

        def update_and_ready(index, lo, hi):
            adapter.update(index, lo, hi)
            self.ready()

        def rebuild_and_ready(_repeat):
            adapter.rebuild()
            self.ready()

        def frame(index, lo, hi):
            return adapter.frame(index, lo, hi, *w.frame_ray_batch())

        if "update" in ops:
            self.measure("update", self.move_and(update_and_ready))
        if "rebuild" in ops:
            self.measure("rebuild", rebuild_and_ready)
        if "frame" in ops:
            if self.moves % 2:
                # Start every implementation's frames from the original scene, so their final
                # states (and pair answers) match whenever they made the same number of runs.
                try:
                    adapter.update(*w.move(self.moves))
                    self.moves += 1
                except Exception:
                    pass  # an update failure is already reported in its own cell
            self.measure("frame", self.move_and(frame),
                         lambda ans: {**self.pairs_summary(ans), "moves": self.moves})


WARM_UP_N = 2000
WARM_UP_BATCH = 200


def warm_up(adapters: list[Adapter], predictor: Predictor | None = None,
            layouts: tuple[str, ...] = ("uniform",), queries: int = 10_000, rays: int = 10_000,
            world: str | float = "fixed") -> None:
    """Run every operation on small scenes so JIT compilation and lazy imports are not timed.

    A second, timed pass (compilation already done) seeds ``predictor`` with each operation's
    cost on a small scene of each layout, scaled to the full batch sizes, so a hopeless cell is
    skipped even at the first N instead of running once for minutes. The small scene follows
    the run's ``world`` so its pair density is the timed scenes' one: the predictor scales pair
    operations by the growth of the pair count, which a sparser warm-up scene would inflate.
    """
    def _warm_up_calls(adapter, w):
        """Each operation of ``adapter`` on workload ``w`` as a call (bound now, not at the loop's end)."""
        def then_ready(call):
            def run():
                call()
                adapter.ready(*w.probe())
            return run

        return {"build": then_ready(lambda: adapter.build(w.ids, w.lo, w.hi)), "pairs": adapter.pairs,
                "oneshot": lambda: adapter.oneshot(w.ids, w.lo, w.hi),
                "box": lambda: adapter.query_boxes(w.query_lo, w.query_hi),
                "ray": lambda: adapter.query_rays(w.ray_origins, w.ray_directions),
                "update": then_ready(lambda: adapter.update(*w.move(0))),
                "rebuild": then_ready(adapter.rebuild),
                "frame": lambda: adapter.frame(*w.move(1), *w.frame_ray_batch())}

    batch_scale = {"box": queries / WARM_UP_BATCH, "ray": rays / WARM_UP_BATCH}
    for layout in layouts:
        w = make_workload(WARM_UP_N, layout, queries=WARM_UP_BATCH, rays=WARM_UP_BATCH,
                          world=world_side(WARM_UP_N, world))
        for adapter in adapters:
            calls = _warm_up_calls(adapter, w)
            for timed in (False, True):
                for op, call in calls.items():
                    start = time.perf_counter()
                    try:
                        call()
                    except Exception:
                        continue  # failures are reported by the timed run
                    if timed and predictor is not None:
                        seconds = (time.perf_counter() - start) * batch_scale.get(op, 1.0)
                        predictor.record(adapter.label, layout, op, w.n, w.estimated_pairs, seconds)
            adapter.close()


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _reset_peak_rss() -> bool:
    """Reset the kernel's peak-RSS mark (``VmHWM``) to the current RSS; False where unsupported."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss_bytes() -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def memory_probe(args) -> None:
    """Child-process mode: build one implementation and print its resident-memory growth."""
    ours, peers, _ = select_implementations(argparse.Namespace(backends="", peers=",".join(PEERS)))
    adapter = next(a for a in ours + peers if a.label == args.memory_probe)
    small = make_workload(WARM_UP_N, "uniform", queries=1, rays=1)
    adapter.build(small.ids, small.lo, small.hi)  # compile and import outside the measurement
    adapter.close()
    n, layout = int(_split(args.sizes)[0]), _split(args.layouts)[0]
    w = make_workload(n, layout, queries=1, rays=1, seed=args.seed, world=world_side(n, args.world))
    gc.collect()
    before = _rss_bytes()
    peak_known = _reset_peak_rss()
    adapter.build(w.ids, w.lo, w.hi)
    adapter.ready(*w.probe())
    peak = _peak_rss_bytes() if peak_known else None
    gc.collect()
    arrays = adapter.array_bytes() if hasattr(adapter, "array_bytes") else None
    print(json.dumps({"rss_delta": _rss_bytes() - before,
                      "peak_delta": None if peak is None else peak - before,
                      "reported": adapter.memory(), "arrays": arrays}))


def probe_memory(targets: list[tuple[str, int, float]], layout: str, seed: int,
                 allowance: float, world: str | float = "scaled") -> dict[str, dict]:
    """Resident-memory growth of building each implementation, each in a fresh process.

    ``targets`` are ``(name, N, build seconds)``; each probe may take a few builds' time plus
    start-up, and probes stop once ``allowance`` seconds are spent. ``world`` is the run's
    ``--world``, passed on so the probe builds the very scene that was timed.
    """
    out = {}
    stop = time.monotonic() + allowance
    for name, n, build_seconds in targets:
        remaining = stop - time.monotonic()
        if remaining <= 0:
            out[name] = {"n": n, "error": "memory allowance (--memory-budget) spent"}
            continue
        timeout = min(remaining, 120.0 + 5.0 * build_seconds)  # start-up may compile
        cmd = [sys.executable, str(Path(__file__).resolve()), "--memory-probe", name,
               "--sizes", str(n), "--layouts", layout, "--seed", str(seed), "--world", str(world)]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
            out[name] = json.loads(line) if done.returncode == 0 and line else \
                {"error": (done.stderr.strip().splitlines() or ["no output"])[-1][:160]}
        except subprocess.TimeoutExpired:
            out[name] = {"error": f"probe exceeded {timeout:.0f} s"}
        out[name]["n"] = n
        print(f"    memory {name:>10}: {out[name]}", flush=True)
    return out


def _world_text(world: str | float) -> str:
    """How the world side was chosen, for the report header."""
    if world == "scaled":
        return (f"`--world scaled`: objects in a cube of side {REFERENCE_WORLD:g} · "
                f"(N / {REFERENCE_N:,})^(1/3), so every N has the object density of the "
                f"{REFERENCE_N:,} scene (a bigger level, not a more crowded one)")
    if world == "fixed":
        return f"`--world fixed`: objects in a {REFERENCE_WORLD:g}³ cube at every N (density grows with N)"
    return f"`--world {world:g}`: objects in a {world:g}³ cube at every N"


def render(results: dict, args, ops: list[str], ours: list[str], peers: list[str],
           frame_rebuilds: dict[str, str]) -> list[str]:
    """The generated Markdown section."""
    m = results["machine"]
    v = m["versions"]
    lines = [
        "## Broad-phase benchmark (generated by `benchmarks/run.py`)", "",
        f"- Command: `{results['command']}`",
        f"- Date: {m['date']}; git {m['git']}",
        f"- CPU: {m['cpu']}, {m['logical_cores']} logical cores ({m['usable_cores']} usable), "
        f"RAM {m['ram_gib']} GiB; load average at start {m['load_average']} (shared machine)",
        f"- {m['os']}; Python {m['python']}; " + ", ".join(
            f"{k} {val}" for k, val in v.items() if val),
        f"- Threads: {m['threads']}",
        f"- Medians of {args.repeats} runs per cell; a cell stops repeating once its runs took "
        f"{args.time_limit:g} s (run count shown when lower). Times are wall-clock per batch "
        f"({args.queries:,} box queries, {args.rays:,} rays, 10 % of objects moved).",
        f"- Scenes: {_world_text(args.world)} for the uniform, clustered and mixed families; "
        "sparse, quake and doom have their own worlds (`benchmarks/families.py`)",
        "- Operations as a user meets them: `build` = build + one small box query (whatever a "
        "structure defers to its first query is paid here); `update` = move 10 % + update + one "
        "small box query; `rebuild` = rebuild + one small box query; `frame` = move 10 % + update "
        f"+ all pairs + {results.get('frame_rays', 1000):,} closest-hit rays (an implementation "
        "without rays: marked, pairs only). `all pairs` floor = `np.sort` of the known pair "
        "list's keys `a·N + b` (`benchmarks/floor.py`).",
        "- **Ratio** (bold, our rows) = our median ÷ the fastest peer's median for that operation "
        "in the same scene and run (below 1 = we are faster); `rebuild` is compared with the peers' "
        "build. Peers in *italics*.",
    ]
    if results["unavailable"]:
        lines.append("- Not measured: " + "; ".join(f"{k} ({e})" for k, e in results["unavailable"].items()))
    scenes = results["scenes"]
    mismatches = sum("MISMATCH" in c for scene in scenes for c in scene["checks"])
    if mismatches:
        lines += ["", f"**{mismatches} answer MISMATCH(ES): implementations disagree, see "
                      "\"Answer checks\" below. Their times compare different work.**"]
    lines += ["", "### Targets", "",
              *report.targets_table(scenes, ops, ours, peers, _split(args.layouts),
                                    results["unavailable"])]
    if scenes:
        lines += ["", "### Ratio to the best peer", "", *report.summary_table(scenes, ops, ours, peers)]
    for scene in scenes:
        lines += ["", f"### {scene['layout']}, N = {scene['n']:,}, world {scene['world']:.0f}³ "
                      f"(≈{scene['estimated_pairs']:.3g} overlapping pairs)", "",
                  *report.scene_table(scene, ops, ours, peers, args.repeats, frame_rebuilds)]
    checks = [c for scene in scenes for c in scene["checks"]]
    lines += ["", "### Answer checks", ""]
    lines += [f"- {c}" for c in checks] or ["- none run"]
    if results.get("memory"):
        mem = results["memory"]
        lines += ["", f"### Memory ({mem['layout']} family, largest N each implementation was built at)", "",
                  "| implementation | N | peak RSS growth of build + first query | RSS growth after it "
                  "| the index's numpy arrays | reported by the backend (structure + object table) |",
                  "|---|---|---|---|---|---|"]

        def per_object(value, n):
            return f"{value / n:.0f} B/object" if value is not None else "–"

        for name, probe in mem["probes"].items():
            n = probe["n"]
            if "error" in probe and probe.get("rss_delta") is None:
                lines.append(f"| {name} | {n:,} | not measured: {probe['error']} | | | "
                             f"{per_object(probe.get('reported'), n)} |")
                continue
            lines.append(f"| {name} | {n:,} | {per_object(probe.get('peak_delta'), n)} | "
                         f"{per_object(probe.get('rss_delta'), n)} | "
                         f"{per_object(probe.get('arrays'), n) if probe.get('arrays') else 'native (not visible)'} | "
                         f"{per_object(probe.get('reported'), n)} |")
        lines += ["", "Measured in a fresh process per implementation, after a small warm-up build: "
                      "the peak resident set during build + first query minus the resident set "
                      "before it (the kernel's peak mark is reset first), the resident set after "
                      "it, and the bytes of the distinct numpy arrays the index holds. RSS figures "
                      "include the copies of the bounds each adapter keeps for its queries "
                      "(48 B/object for rtree and boostree); peers keep their structures in native "
                      "memory, visible to RSS only."]
    return lines


def render_saved(args) -> int:
    """Rewrite the report section from a saved ``--json`` file (nothing is run)."""
    saved = json.loads(Path(args.render_json).read_text(encoding="utf-8"))
    run_args = parse_args(shlex.split(saved["command"])[2:])
    for scene in saved["scenes"]:
        scene["cells"] = {name: {op: Cell(c["status"], list(c["times_s"]), c["note"], c["check"])
                                 for op, c in cells.items()} for name, cells in scene["cells"].items()}
    first = saved["scenes"][0]["cells"] if saved["scenes"] else {}
    ops = [op for op in ALL_OPS if any(op in cells for cells in first.values())]
    ours = sorted(_split(run_args.backends)) or [n for n in first if n not in PEERS and n != report.FLOOR]
    peers = [n for n in _split(run_args.peers) if n in first]
    marks: dict[str, str] = {}
    for name in peers:
        cells = first[name]
        found = [m for m, on in (("rebuilds", name == "ckdtree"),
                                 ("no rays", cells.get("ray", Cell("na")).status == "na")) if on]
        if found:
            marks[name] = "; ".join(found)
    out = Path(args.out) if args.out else None
    _write(saved, run_args, ops, ours, peers, marks, out)
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.memory_probe:
        memory_probe(args)
        return 0
    if args.render_json:
        return render_saved(args)
    ops = [op for op in ALL_OPS if op in _split(args.ops) or op == "build"]
    unknown = set(_split(args.ops)) - set(ALL_OPS)
    if unknown:
        raise SystemExit(f"unknown operations: {', '.join(sorted(unknown))} (known: {', '.join(ALL_OPS)})")
    if args.memory_limit:
        import resource
        limit = int(args.memory_limit * 2**30)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    sizes = [int(s) for s in _split(args.sizes)]
    threads = _thread_limits()
    ours, peers, unavailable = select_implementations(args)
    layouts = _usable_layouts(_split(args.layouts), args, unavailable)
    print(f"ours: {[a.label for a in ours]}  peers: {[a.label for a in peers]}", flush=True)
    for name, why in unavailable.items():
        print(f"  not measured: {name}: {why}", flush=True)
    print("warming up (JIT compilation, lazy imports)...", flush=True)
    predictor = Predictor()
    warm_up(ours + peers, predictor, tuple(layouts), args.queries, args.rays, args.world)

    results = {"command": "python " + " ".join(shlex.quote(a) for a in [
                   os.path.relpath(sys.argv[0], REPO) if argv is None else "benchmarks/run.py",
                   *(sys.argv[1:] if argv is None else argv)]),
               "machine": describe_machine(REPO, threads), "unavailable": unavailable,
               "scenes": [], "frame_rays": min(1000, args.rays)}
    our_names = [a.label for a in ours]
    peer_names = [a.label for a in peers]
    frame_rebuilds: dict[str, str] = {}  # how an implementation's frame differs, for the tables
    deadline = time.monotonic() + args.budget if args.budget else 0.0
    out = Path(args.out) if args.out else None

    for n in sizes:  # size outer: every layout at small N finishes before any big scene
        for layout in layouts:
            scene = _run_scene(n, layout, args, ops, ours + peers, predictor, deadline, frame_rebuilds)
            results["scenes"].append(scene)
            gc.collect()
            _write(results, args, ops, our_names, peer_names, frame_rebuilds, out)

    if not args.no_memory and results["scenes"]:
        results["memory"] = _memory_section(results["scenes"], layouts[0], sizes, our_names + peer_names, args)
        _write(results, args, ops, our_names, peer_names, frame_rebuilds, out)
    return 0


def _usable_layouts(layouts: list[str], args, unavailable: dict[str, str]) -> list[str]:
    """The requested layouts whose scene can be made here; the others go to ``unavailable``."""
    usable = []
    for layout in layouts:
        try:
            make_workload(10, layout, queries=1, rays=1, world=world_side(10, args.world))
        except FamilyUnavailable as exc:
            unavailable[f"family {layout}"] = str(exc)
            continue
        except ValueError as exc:
            raise SystemExit(f"--layouts: {exc}") from None
        usable.append(layout)
    return usable


def _not_run(adapter: Adapter, layout: str, n: int, args, ops: list[str]) -> dict[str, Cell] | None:
    """Skipped cells for an implementation left out of this scene, or ``None`` to run it."""
    if f"{adapter.label}@{layout}" in _split(args.skip):
        note = f"not run in this family (--skip {adapter.label}@{layout})"
    elif adapter.label == "brute" and n > args.brute_max:
        note = f"brute force is quadratic: run only up to --brute-max {args.brute_max:,}"
    else:
        return None
    return {op: Cell("skip", note=note) for op in ops}


def _run_scene(n: int, layout: str, args, ops: list[str], adapters: list[Adapter], predictor: Predictor,
               deadline: float, frame_rebuilds: dict[str, str]) -> dict:
    """Every implementation on the scene of ``layout`` with ``n`` objects, cross-checked."""
    w = make_workload(n, layout, queries=args.queries, rays=args.rays, seed=args.seed,
                      world=world_side(n, args.world))
    print(f"== {layout}, N = {n:,}, world {w.world:.0f}", flush=True)
    scene = {"layout": layout, "n": n, "world": w.world,
             "estimated_pairs": w.estimated_pairs, "cells": {},
             "checks": [], "memory_reported": {}}
    sides = {}
    for adapter in adapters:
        skipped = _not_run(adapter, layout, n, args, ops)
        if skipped is not None:
            scene["cells"][adapter.label] = skipped
            continue
        cells, side = run_implementation(adapter, w, ops, args, predictor, deadline)
        adapter.close()
        scene["cells"][adapter.label] = cells
        scene["memory_reported"][adapter.label] = side.pop("memory_reported", None)
        if "pairs_answer" in side:
            known = side.pop("pairs_answer")
            if "floor" not in scene["cells"]:
                scene["cells"]["floor"] = {"pairs": pair_floor(known, w.n, args.repeats,
                                                               args.time_limit, args.seed)}
            del known
        gc.collect()
        sides[adapter.label] = side
        marks = [m for m, on in (("rebuilds", adapter.rebuilds_per_frame),
                                 ("no rays", not adapter.frame_casts_rays)) if on]
        if marks:
            frame_rebuilds[adapter.label] = "; ".join(marks)
    scene["checks"] = check_scene(scene, w, adapters, sides)
    for line in scene["checks"]:
        print(("!!! " if "MISMATCH" in line else "    ") + line, flush=True,
              file=sys.stderr if "MISMATCH" in line else sys.stdout)
    return scene


def _memory_section(scenes: list[dict], layout: str, sizes: list[int], names: list[str], args) -> dict:
    """Memory probes of every implementation at the largest ``layout`` scene it built."""
    targets, reported = [], {}
    for name in names:
        built = [(s["n"], s["cells"][name]["build"].median) for s in scenes
                 if s["layout"] == layout and name in s["cells"]
                 and s["cells"][name].get("build", Cell("na")).status == "ok"]
        if built:
            targets.append((name, *max(built)))
            reported[name] = next(s["memory_reported"].get(name) for s in scenes
                                  if s["layout"] == layout and s["n"] == max(built)[0])
    if args.memory_all:
        from spatial.registry import default_registry

        probed = {t[0] for t in targets}
        targets += [(name, max(sizes), 30.0) for name in sorted(default_registry().backends)
                    if name not in probed and name != "brute"]
    print(f"== memory probes ({layout})", flush=True)
    probes = probe_memory(targets, layout, args.seed, args.memory_budget, args.world)
    for name, probe in probes.items():
        # The timed run's own figure stands when the probe could not finish.
        probe["reported"] = probe.get("reported") or reported.get(name)
    return {"layout": layout, "probes": probes}


def _write(results, args, ops, ours, peers, frame_rebuilds, out: Path | None) -> None:
    body = render(results, args, ops, ours, peers, frame_rebuilds)
    if out is not None:
        report.write_section(out, body, args.section)
    if args.json and not getattr(args, "render_json", ""):
        serial = dict(results)
        serial["scenes"] = [{**s, "cells": {name: {op: c.to_json() for op, c in cells.items()}
                                            for name, cells in s["cells"].items()}}
                            for s in results["scenes"]]
        atomic_write_text(args.json, json.dumps(serial, indent=1, default=str))


if __name__ == "__main__":
    sys.exit(main())
