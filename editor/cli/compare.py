"""``compare``: two partitions of one level measured on the same work, side by side.

``python app.py compare LEVEL [--a BACKEND] [--b BACKEND] [--a-param K=V ...] [--b-param K=V ...]
[--recording R] [--frames N] [--seed S] [--json]`` builds both indexes from the one document
(through the document's one path to an index), runs the same rays, frusta and boxes on each,
plays the same motion (a recording, or seeded drift of the moving entities) and prints
``{"source", "a": {...}, "b": {...}, "ratios": {...}, "workload": {...}}`` where each ratio is
B / A (see :mod:`editor.model.compare.report`).

With neither given, a Doom map compares our BSP with the map's shipped one (``shipped_bsp``);
otherwise ``--a`` defaults to the document's own backend and ``--b`` to the BSP (the octree
when A is the BSP). Two
parameter sets of one backend: ``--a octree --b octree --b-param max_depth=6``.
"""
from __future__ import annotations

from spatial.params import split_assignments

from . import CliError, load_recording_file, open_document, subcommand


def _configure(p) -> None:
    p.add_argument("path", help="level file (native .json or any importable format, FILE.wad:MAP)")
    p.add_argument("--a", metavar="BACKEND", help="backend of side A (default: the document's)")
    p.add_argument("--b", metavar="BACKEND",
                   help="backend of side B (default: shipped_bsp for a Doom map, else bsp)")
    p.add_argument("--a-param", action="append", default=[], metavar="KEY=VALUE",
                   help="parameter of side A (repeatable)")
    p.add_argument("--b-param", action="append", default=[], metavar="KEY=VALUE",
                   help="parameter of side B (repeatable)")
    p.add_argument("--recording", metavar="FILE",
                   help="replay this recording (.npz or frame-lines .jsonl) for the update figures")
    p.add_argument("--frames", type=int, default=30, metavar="N",
                   help="frames of motion to play (default 30)")
    p.add_argument("--seed", type=int, default=0, help="seed of the queries and motion (default 0)")


def cmd_compare(args) -> dict:
    """Measure both sides and report them with their ratios."""
    from editor.model.compare import SideSpec
    from editor.model.compare.report import compare_record
    from editor.model.compare.sides import default_sides
    from editor.model.index_input import index_input
    from spatial.registry import default_registry

    if args.frames < 0:
        raise CliError(f"--frames must be at least 0, got {args.frames}")
    recording = load_recording_file(args.recording) if args.recording else None
    record = index_input(open_document(args.path), args.path)
    a, b = default_sides(record, args.a, args.b)
    for flag, name in (("--a", a), ("--b", b)):
        if name not in default_registry().backends:
            known = ", ".join(sorted(default_registry().backends))
            raise CliError(f"{flag}: no backend named '{name}' (known: {known})")
    sides = (SideSpec(a, split_assignments(args.a_param)),
             SideSpec(b, split_assignments(args.b_param)))
    return compare_record(record, *sides, recording=recording, frames=args.frames,
                          seed=args.seed).as_dict()


def _number(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.3f}"
    return f"{value:,}"


def _show(report: dict) -> None:
    from editor.model.compare.report import comparison_rows

    a, b = report["a"], report["b"]
    print(f"compare  {report['source']}")
    print(f"A        {a['backend']} {a['params']}")
    print(f"B        {b['backend']} {b['params']}")
    w = report["workload"]
    print(f"workload {w['rays']} rays, {w['frusta']} frusta, {w['boxes']} boxes "
          f"(seed {w['seed']}); motion: {w['motion']}")
    print(f"{'':38s} {'A':>14s} {'B':>14s} {'B/A':>8s}")
    for _key, label, va, vb, r in comparison_rows(report):
        print(f"{label:38s} {_number(va):>14s} {_number(vb):>14s} {_number(r):>8s}")


subcommand("compare", "two partitions of one level measured on the same work, side by side",
           _configure, _show)(cmd_compare)
