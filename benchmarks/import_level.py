#!/usr/bin/env python
"""Import + build of a real level, split by phase.

Phases, each timed separately (median of ``--repeats`` runs in one process, after one warm-up run
so compilation is not counted; the cold first run is reported too):

1. ``read+parse``  — read the ``.map`` text and parse it into :class:`plugins.quake_map.syntax.MapFile`;
2. ``scene``       — convert to the document (:func:`plugins.quake_map.convert.mapfile_to_scene`),
                     which builds every brush's convex solid;
3. ``objects``     — gather index ids and bounds from the scene (what the index sync inserts);
4. ``build``       — build the chosen backend (octree by default) from those arrays;
5. ``rebuild``     — a second build with other parameters, as after a parameter change in the GUI.

The table goes to ``benchmarks/RESULTS.md`` between ``<!-- BEGIN generated: import -->`` and
``<!-- END generated: import -->``. It measures; it asserts nothing.
"""
from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.data import E3M4, data_file  # noqa: E402
from benchmarks.machine import describe_machine  # noqa: E402
from benchmarks.report import write_section  # noqa: E402

DEFAULT_MAP = data_file(*E3M4)


def run_once(path: Path, backend: str, rebuild_params: dict) -> dict:
    from editor.model.loading import document_source
    from plugins.quake_map.convert import mapfile_to_scene
    from plugins.quake_map.syntax import parse_map
    from spatial.registry import default_registry

    times = {}
    t0 = time.perf_counter()
    text = path.read_bytes()
    mapfile = parse_map(text, str(path))
    t1 = time.perf_counter()
    scene = mapfile_to_scene(mapfile, str(path))
    t2 = time.perf_counter()
    source = document_source(scene, str(path))
    t3 = time.perf_counter()
    cls = default_registry().backend(backend)
    index = cls()
    index.build(source.ids, source.lo, source.hi, source.dynamic)
    t4 = time.perf_counter()
    index.set_params(**rebuild_params)
    t5 = time.perf_counter()
    times["read+parse"] = t1 - t0
    times["scene"] = t2 - t1
    times["objects"] = t3 - t2
    times["build"] = t4 - t3
    times["rebuild"] = t5 - t4
    times["total import+build"] = t4 - t0
    times["_counts"] = (source.counts["brushes"], source.counts["faces"], source.counts["objects"])
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("map", nargs="?", default=str(DEFAULT_MAP), help="a Quake .map file")
    parser.add_argument("--backend", default="octree")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rebuild-param", action="append", default=["max_depth=12"],
                        metavar="K=V", help="parameters of the second build (default max_depth=12)")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "RESULTS.md"))
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    path = Path(args.map)
    if not path.exists():
        print(f"import_level: {path} does not exist", file=sys.stderr)
        return 2
    rebuild = dict(item.split("=", 1) for item in args.rebuild_param)
    start = time.perf_counter()
    run_once(path, args.backend, rebuild)  # the first run pays for compilation
    cold_wall = time.perf_counter() - start
    runs = [run_once(path, args.backend, rebuild) for _ in range(args.repeats)]
    phases = [k for k in runs[0] if not k.startswith("_")]
    medians = {k: statistics.median(r[k] for r in runs) for k in phases}
    brushes, faces, objects = runs[0]["_counts"]
    lines = [
        f"Level: `{path.name}` — {brushes} brushes, {faces} faces, {objects} index objects; "
        f"backend `{args.backend}`, second build with `{' '.join(args.rebuild_param)}`.",
        f"Median of {args.repeats} warm runs in one process (numba caches loaded; the first, cold "
        f"run of the process took {cold_wall * 1e3:.0f} ms including JIT loading).",
        "",
        "| phase | median ms | min ms | max ms |",
        "|---|---:|---:|---:|",
    ]
    for k in phases:
        vals = [r[k] * 1e3 for r in runs]
        lines.append(f"| {k} | {medians[k] * 1e3:.1f} | {min(vals):.1f} | {max(vals):.1f} |")
    goal = medians["total import+build"] < 1.0
    lines += ["", f"Goal: import + build under 1 s — **{'met' if goal else 'not met'}** "
                  f"({medians['total import+build'] * 1e3:.0f} ms median).", "",
              machine_line(), "",
              f"Command: `python benchmarks/import_level.py {' '.join(argv or sys.argv[1:])}`".rstrip()]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section(Path(args.out), ["## Level import and build, by phase", "", *body.splitlines()],
                      "import")
    return 0


def machine_line() -> str:
    m = describe_machine(REPO, "1 (OMP/OpenBLAS/MKL/numba threads pinned to 1)")
    return (f"Machine: {m['cpu']}, {m['usable_cores']} usable cores, {m['ram_gib']} GiB, "
            f"Python {m['python']}, load average at the end {m['load_average']}, {m['date']}, "
            f"git {m['git']}.")


if __name__ == "__main__":
    sys.exit(main())
