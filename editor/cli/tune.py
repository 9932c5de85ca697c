"""``tune``: search a backend's parameters for the lowest per-frame cost on a level and export them.

``python app.py tune (FILE | --demo | --recording REC) [--backend NAME | --all-backends]
[--budget SECONDS] [--seed S] [--max-trials N] [--recording REC] [--weight NAME=VALUE ...]
[--param KEY=VALUE ...] --out PARAMS.json [--force]
[--format json|c-header|unreal-ini|godot] [--json]``

A recording alone (a game's live session saved by ``listen --save-recording``) is tuned on its
own static and moving objects.

``python app.py tune (FILE | --demo) --engine NAME [--units-per-metre U] --out FILE`` tunes a
game engine's own knobs instead and writes its own settings syntax (:mod:`.engine_tune`,
``docs/engines.md``); ``--engine list`` names the engines.

The cost model is :mod:`spatial.cost` (per-frame work from deterministic counters by default;
``--weight update_ms=...`` adds wall-clock terms), the search is :mod:`spatial.tuner`, the
workload comes from :mod:`editor.model.tuning`. Trials run in child processes killed when the
budget runs out, so ``--budget`` holds within a fraction of a second even for backends whose
build cannot be interrupted. ``--all-backends`` tunes every backend but the brute-force oracle in
one shared budget, cheapest first, writes the best one and lists those it could not evaluate.

``--format`` defaults to the one matching ``--out``'s suffix (``.json``, ``.h``, ``.ini``,
``.godot``). The JSON output is what ``stats --params`` reads. Without ``--json`` every trial
is reported on stderr as it finishes. ``--json`` prints::

    {"source", "backend", "params", "cost", "default_cost", "improvement", "trials",
     "elapsed_s", "stop_reason", "out", "format", "not_evaluated"?, "ranking"?}
"""
from __future__ import annotations

import sys

from spatial.atomic import check_output_path
from spatial.params import split_assignments

from . import CliError, subcommand

DEFAULT_BUDGET_S = 30.0


def _configure(p) -> None:
    # not required here: `--engine list` needs neither a level nor --out (checked in cmd_tune)
    src = p.add_mutually_exclusive_group()
    src.add_argument("path", nargs="?", help="scene file (native .json or any importable format)")
    src.add_argument("--demo", action="store_true", help="use the embedded demo level")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--backend", metavar="NAME", help="backend to tune (default: the scene's)")
    which.add_argument("--all-backends", action="store_true",
                       help="tune every backend except brute in one budget and keep the cheapest")
    p.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S, metavar="SECONDS",
                   help=f"wall-clock budget of the search (default {DEFAULT_BUDGET_S:g})")
    p.add_argument("--seed", type=int, default=0, help="seed of the workload and the search (default 0)")
    p.add_argument("--max-trials", type=int, metavar="N",
                   help="stop after N trials (same seed and N: same result)")
    p.add_argument("--recording", metavar="REC",
                   help="measure frames of this recording (.npz or .jsonl) instead of a synthetic motion")
    p.add_argument("--weight", action="append", default=[], metavar="NAME=VALUE",
                   help="cost weight (pair_test, node_visit, object_test, rays_per_frame, "
                        "frusta_per_frame, node, memory_mb, update_ms, build_ms); repeatable")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="hold a parameter at this value (e.g. plane=xz); repeatable; "
                        "not with --all-backends")
    p.add_argument("--out", metavar="FILE", help="where to write the parameters (required)")
    p.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    p.add_argument("--format", metavar="NAME",
                   help="output format: a parameters exporter from `plugins` (json, c-header, "
                        "unreal-ini, godot, ...); default: from the --out suffix, else json")
    p.add_argument("--engine", metavar="NAME",
                   help="tune this engine's own knobs and write its settings (physx, unity, unreal, "
                        "godot, bullet, chipmunk, box2d); `--engine list` names them")
    p.add_argument("--units-per-metre", type=float, metavar="U",
                   help="level units per metre for --engine (default: 32 for Quake and Doom maps, "
                        "1 for meshes)")


def _exporter(args):
    """``(format name, exporter)`` for ``--format`` or the ``--out`` suffix (default json)."""
    from spatial.registry import default_registry

    registry = default_registry()
    exporters = registry.exporters_of_kind("params")
    if args.format:
        if args.format not in exporters:
            raise CliError(f"--format: unknown parameters format {args.format!r} "
                           f"(known: {', '.join(sorted(exporters))})")
        return args.format, exporters[args.format]
    found = registry.exporter_for(args.out, kind="params")
    if found is None:
        found = exporters["json"]
    return found.name, found


def _weights(items):
    from spatial.cost import CostWeights

    raw = split_assignments(items)
    values = {}
    for key, text in raw.items():
        try:
            values[key] = float(text)
        except ValueError:
            raise CliError(f"--weight {key}: expected a number, got {text!r}") from None
    return CostWeights.from_dict(values)


def cmd_tune(args) -> dict:
    """Tune, export, report."""
    from .engine_tune import engine_list, run_engine

    if args.engine == "list":
        return engine_list()
    if not args.budget > 0:
        raise CliError(f"--budget must be a positive number of seconds, got {args.budget}")
    if args.max_trials is not None and args.max_trials < 1:
        raise CliError(f"--max-trials must be at least 1, got {args.max_trials}")
    if args.engine:
        return run_engine(args, _weights(args.weight), None if args.json else _print_progress)
    if not (args.path or args.demo or args.recording):
        raise CliError("give a level FILE, --demo or a --recording (a live session's, say)")
    if not args.out:
        raise CliError("--out FILE is required")
    return _tune_backend(args)


class _BudgetRefusal(CliError):
    """The backend's defaults are over a budget: the budget's exit status, not bad input."""

    budget = True


def _tune_backend(args) -> dict:
    """``tune`` without ``--engine``: one backend (or all) and a parameters exporter."""
    from editor.model.tuning import scene_content_hash, scene_fixed_params, scene_workload
    from spatial.registry import default_registry
    from spatial.tuned_params import tuned_params_document
    from spatial.tuner import compare_backends, tune

    if not (args.budget > 0):
        raise CliError(f"--budget must be a positive number of seconds, got {args.budget}")
    if args.max_trials is not None and args.max_trials < 1:
        raise CliError(f"--max-trials must be at least 1, got {args.max_trials}")
    check_output_path(args.out, args.force, "--out")
    if args.param and args.all_backends:
        raise CliError("--param holds one backend's parameter; it cannot go with --all-backends")
    fmt, exporter = _exporter(args)
    weights = _weights(args.weight)
    registry = default_registry()

    from . import open_document

    if args.path or args.demo:
        scene = open_document(None if args.demo else args.path)
        source = "demo" if args.demo else args.path
    else:  # a recording alone (a game's live session): its own static and moving objects
        from editor.model.scene import Scene

        scene, source = Scene(), args.recording
    recording = None
    if args.recording:
        from . import load_recording_file
        recording = load_recording_file(args.recording)
    workload = scene_workload(scene, args.seed, recording=recording, source=source)

    report: dict = {}
    comparison = None
    progress = None if args.json else _print_progress
    if args.all_backends:
        classes = [cls for name, cls in sorted(registry.backends.items()) if name != "brute"]
        outcome = compare_backends(classes, workload, budget_s=args.budget, seed=args.seed,
                                   weights=weights, isolation="process",
                                   on_trial=(lambda name, p: progress(p, name)) if progress else None)
        if outcome.best is None:
            raise CliError("no backend could be evaluated within the budget: "
                           + "; ".join(f"{k}: {v}" for k, v in outcome.not_evaluated.items()))
        result = outcome.best
        comparison = outcome.as_dict()
        report["ranking"] = comparison["ranking"]
        report["not_evaluated"] = outcome.not_evaluated
    else:
        cls = registry.backend(args.backend or scene.settings.backend)
        fixed = {**scene_fixed_params(scene, cls), **split_assignments(args.param)}
        result = tune(cls, workload, budget_s=args.budget, seed=args.seed, weights=weights,
                      max_trials=args.max_trials, isolation="process", on_trial=progress,
                      fixed=fixed)
        if result.best is None:
            first = result.trials[0] if result.trials else None
            if first is not None and first.status == "refused":  # over a memory or work budget
                raise _BudgetRefusal(f"{source}: {cls.name}: {first.message}")
            why = f"{first.status}: {first.message}" if first else result.stop_reason
            raise CliError(f"{cls.name}: the defaults could not be measured within "
                           f"{args.budget:g} s ({why}); raise --budget")

    document = tuned_params_document(
        result, {"source": source, "hash": scene_content_hash(scene), "objects": len(workload.ids)},
        comparison)
    exporter.save(document, args.out)
    report.update({
        "source": source, "backend": result.backend, "params": document["params"],
        "cost": document["cost"]["tuned"], "default_cost": document["cost"]["defaults"],
        "improvement": document["cost"]["improvement"], "trials": len(result.trials),
        "elapsed_s": round(result.elapsed_s, 3), "stop_reason": result.stop_reason,
        "out": args.out, "format": fmt,
    })
    return report


def _print_progress(progress, backend: str = "") -> None:
    """One line per trial on stderr (without ``--json``), so a long search shows it is alive."""
    t = progress.trial
    cost = f"cost {t.cost:.1f}" if t.ok else f"{t.status}: {t.message}"
    best = f"best {progress.best.cost:.1f}" if progress.best else "no best yet"
    who = f"{backend} " if backend else ""
    print(f"  {who}trial {t.index} ({t.phase}) {cost}; {best} "
          f"[{progress.elapsed_s:.1f}/{progress.budget_s:.0f} s]", file=sys.stderr, flush=True)


def _show(report: dict) -> None:
    if "engines" in report or "engine" in report:
        from .engine_tune import show_engine

        show_engine(report)
        return
    gain = report["improvement"]
    print(f"tuned {report['backend']} on {report['source']}: cost {report['cost']:.1f} "
          f"(defaults {report['default_cost']:.1f}"
          + (f", {100 * gain:.1f}% cheaper" if gain is not None else "") + ")")
    print(f"  {report['trials']} trials in {report['elapsed_s']:.1f} s ({report['stop_reason']})")
    print(f"  params {report['params']}")
    for row in report.get("ranking", []):
        print(f"  {row['backend']:16s} cost {row['cost']:.1f} (defaults {row['default_cost']})")
    for name, why in report.get("not_evaluated", {}).items():
        print(f"  {name:16s} not evaluated: {why}")
    print(f"wrote {report['out']} ({report['format']})")


subcommand("tune", "search a backend's parameters for the lowest per-frame cost and export them",
           _configure, _show)(cmd_tune)
