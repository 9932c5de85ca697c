#!/usr/bin/env python
"""Start-up time: from spawning ``python app.py`` to the first frame of a usable window.

On a warm start that frame shows the level. A first start (empty kernel cache) shows the
window first and loads the level on a worker thread while the kernels compile; the time until
the level is on screen is reported beside it (``level_shown``).

Each run starts the real editor in a fresh process on its embedded demo level with the default
backend and the OpenGL 3D view, with ``PARTITION_STUDIO_REPORT_FIRST_FRAME`` set
(:mod:`editor.qt.first_frame`): once the main window's central views (3D view and the top,
front and side views) have painted for the first time, the editor writes a JSON report and
quits. The time measured is from just before the spawn (read here with
:func:`time.perf_counter`) to that first frame (read in the editor with the same clock, which
on Linux is the system-wide monotonic clock), so interpreter start-up is included. The report
also splits the time into phases:

============  ==============================================================================
interpreter   spawn to the first line of ``app.py`` (interpreter and ``site`` start-up)
dispatch      ``app.py`` deciding between the headless command line and the GUI (this imports
              the command-line modules, and with them numpy, numba and the document model)
qt app        importing PySide6 and creating the ``QApplication``
imports       importing the main window and everything it needs (Qt widgets, pyqtgraph, ...)
window        building the main window (views, docks, menus, OpenGL check)
document      loading the demo level and building its spatial index (JIT-compiled kernels)
show          ``window.show()``
first paint   from ``show()`` to the end of the first frame of the central views
============  ==============================================================================

Two conditions, each run in its own process and a fresh empty settings folder (so the user's
window layout is neither read nor written):

* **warm** — numba's on-disk cache already filled (one unmeasured priming run into a private
  ``NUMBA_CACHE_DIR`` first) and Python bytecode cached; target at most 3 s.
* **cold** — a fresh empty ``NUMBA_CACHE_DIR`` for every run, so every kernel the start-up
  path needs is compiled again; target at most 15 s.

It needs a display: run it under Xvfb (Mesa's llvmpipe gives the 3D view its OpenGL context)::

    xvfb-run -a -s "-screen 0 1600x1000x24" python benchmarks/startup.py [--warm 5] [--cold 3]

It prints a Markdown table and writes it to ``benchmarks/RESULTS.md`` between
``<!-- BEGIN generated: startup -->`` and ``<!-- END generated: startup -->`` (the rest of the
file is kept); ``--json FILE`` also saves every run's phases. It measures; it asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.report import write_section  # noqa: E402
from spatial.atomic import atomic_write_text  # noqa: E402

#: product targets, seconds from spawn to first frame
TARGETS = {"warm": 3.0, "cold": 15.0}

REPORT_VARIABLE = "PARTITION_STUDIO_REPORT_FIRST_FRAME"

#: (phase title, mark where it starts, mark where it ends); ``spawn`` is the parent's reading
PHASES = [
    ("interpreter", "spawn", "launched"),
    ("dispatch", "launched", "gui_entered"),
    ("qt app", "gui_entered", "qt_application"),
    ("imports", "qt_application", "modules_imported"),
    ("window", "modules_imported", "window_built"),
    ("document", "window_built", "document_loaded"),
    ("show", "document_loaded", "shown"),
    ("first paint", "shown", "first_frame"),
]


class StartupError(RuntimeError):
    """A run did not reach its first frame (crash, timeout or no report)."""


def run_once(numba_cache: Path, timeout: float, extra_args: list[str]) -> dict:
    """Start the editor once; returns its phases in seconds from the spawn, plus ``total``."""
    with tempfile.TemporaryDirectory(prefix="startup-run-") as tmp:
        report = Path(tmp) / "first_frame.json"
        env = dict(os.environ, NUMBA_CACHE_DIR=str(numba_cache), XDG_CONFIG_HOME=str(Path(tmp) / "config"))
        env[REPORT_VARIABLE] = str(report)
        spawn = time.perf_counter()
        proc = subprocess.run([sys.executable, str(REPO / "app.py"), *extra_args], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=timeout)
        exited = time.perf_counter()
        if proc.returncode != 0 or not report.exists():
            raise StartupError(f"app.py exited with {proc.returncode} "
                               f"{'without a report' if not report.exists() else ''}:\n{proc.stderr[-2000:]}")
        data = json.loads(report.read_text(encoding="utf-8"))
    marks = dict(data["marks"], spawn=spawn)
    if not spawn < marks["launched"] < marks["first_frame"] < exited:
        raise StartupError("the editor's clock readings do not fall between spawn and exit: "
                           "time.perf_counter is not one system-wide clock on this platform")
    phases = {title: marks[end] - marks[begin] for title, begin, end in PHASES}
    phases["total"] = marks["first_frame"] - spawn
    # a first start shows its window before the level (loaded while the kernels compile)
    phases["level_shown"] = marks.get("level_shown", marks["first_frame"]) - spawn
    phases["exit"] = exited - spawn
    return phases


def measure(kind: str, runs: int, timeout: float, extra_args: list[str]) -> list[dict]:
    """``runs`` runs of one condition (``warm`` or ``cold``)."""
    results = []
    with tempfile.TemporaryDirectory(prefix=f"startup-{kind}-numba-") as shared_cache:
        if kind == "warm":
            print("warm: priming the numba cache ...", file=sys.stderr, flush=True)
            run_once(Path(shared_cache), timeout, extra_args)
        for i in range(runs):
            if kind == "cold":
                with tempfile.TemporaryDirectory(prefix="startup-cold-numba-") as fresh:
                    results.append(run_once(Path(fresh), timeout, extra_args))
            else:
                results.append(run_once(Path(shared_cache), timeout, extra_args))
            print(f"{kind} {i + 1}/{runs}: {results[-1]['total']:.2f} s", file=sys.stderr, flush=True)
    return results


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def render(results: dict[str, list[dict]], command: str, machine: str) -> list[str]:
    """The Markdown section: totals against the targets, then the median of every phase."""
    lines = [f"Start-up to first frame of `python app.py` (demo level, default backend, OpenGL 3D view), "
             f"each run a fresh process. Generated by `{command}` on {machine}.", "",
             "| condition | runs | median s | min–max s | target | met | level on screen, median s |",
             "|---|---:|---:|---:|---:|:---:|---:|"]
    for kind, runs in results.items():
        totals = [r["total"] for r in runs]
        median = statistics.median(totals)
        met = "yes" if median <= TARGETS[kind] else f"no (×{median / TARGETS[kind]:.1f})"
        if max(totals) > TARGETS[kind] and median <= TARGETS[kind]:
            met += " (slowest run over)"
        lines.append(f"| {kind} | {len(runs)} | {median:.2f} | {min(totals):.2f}–{max(totals):.2f} | "
                     f"≤ {TARGETS[kind]:.0f} s | {met} | {_median(runs, 'level_shown'):.2f} |")
    lines += ["", "Median seconds per phase (see `benchmarks/startup.py` for what each phase covers):", "",
              "| condition | " + " | ".join(title for title, _, _ in PHASES) + " | total |",
              "|---|" + "---:|" * (len(PHASES) + 1)]
    for kind, runs in results.items():
        cells = [f"{_median(runs, title):.2f}" for title, _, _ in PHASES]
        lines.append(f"| {kind} | " + " | ".join(cells) + f" | {_median(runs, 'total'):.2f} |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warm", type=int, default=5, help="measured warm runs (after one priming run)")
    parser.add_argument("--cold", type=int, default=3, help="measured cold runs")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a run counts as failed")
    parser.add_argument("--no-gl", action="store_true", help="start without the OpenGL 3D view")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "RESULTS.md"))
    parser.add_argument("--no-write", action="store_true", help="print only, leave RESULTS.md alone")
    parser.add_argument("--json", help="also write every run's phases here")
    args = parser.parse_args(argv)
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        parser.error('no display: run under Xvfb, e.g. xvfb-run -a -s "-screen 0 1600x1000x24" '
                     "python benchmarks/startup.py")
    extra_args = ["--no-gl"] if args.no_gl else []
    from benchmarks.machine import describe_machine
    info = describe_machine(REPO, "numba default")
    results = {}
    for kind, runs in (("warm", args.warm), ("cold", args.cold)):
        if runs > 0:
            results[kind] = measure(kind, runs, args.timeout, extra_args)
    info["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    command = ('xvfb-run -a -s "-screen 0 1600x1000x24" python benchmarks/startup.py'
               + (f" --warm {args.warm}" if args.warm != 5 else "")
               + (f" --cold {args.cold}" if args.cold != 3 else "")
               + (" --no-gl" if args.no_gl else ""))
    machine = (f"{info['cpu']}, {info['usable_cores']} usable cores, {info['ram_gib']} GiB, "
               f"Python {info['python']}, numba {info['versions']['numba']}, git {info['git']}, "
               f"load {info['load_average']} before and {info['load_average_after']} after, {info['date']}")
    body = render(results, command, machine)
    if not args.no_write:
        write_section(Path(args.out), body, "startup", heading="## Start-up")
    if args.json:
        atomic_write_text(args.json, json.dumps({"machine": info, "command": command, "runs": results}, indent=1))
    print("\n".join(body))
    return 0


if __name__ == "__main__":
    sys.exit(main())
