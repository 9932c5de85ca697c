"""``tune --engine NAME``: tune a game engine's own broad-phase knobs and write its settings file.

Called by :mod:`editor.cli.tune` (not a subcommand of its own). The profile comes from
:mod:`spatial.engines`; the workload from :func:`editor.model.tuning.scene_workload`, as for
``tune --backend``; lengths are converted with ``--units-per-metre`` (default from the level's
format: 32 for Quake and Doom maps, 1 for meshes and native documents). ``--engine list``
names the engines. The file is written atomically in the engine's own syntax; ``--json``
prints::

    {"source", "engine", "title", "syntax", "backend", "knobs": {key: {name, value, default,
     unit, tuned, source}}, "derived", "cost", "default_cost", "improvement", "plateau",
     "notes", "alternative_cost", "units_per_metre", "trials", "stop_reason", "elapsed_s",
     "out"}
"""
from __future__ import annotations

import math

from spatial.atomic import atomic_write_text, check_output_path
from spatial.params import split_assignments

from . import CliError


def engine_list() -> dict:
    """``{"engines": [...]}``: every profile's name, title, syntax and model backend."""
    from spatial.engines import ENGINE_NAMES, engine_profile

    rows = []
    for name in ENGINE_NAMES:
        p = engine_profile(name)
        rows.append({"name": p.name, "title": p.title, "version": p.version, "syntax": p.syntax,
                     "backend": p.backend,
                     "knobs": [k.name for k in p.knobs if k.tunable or k.engine_tuned] or ["(none at run time)"]})
    return {"engines": rows}


def _check(args) -> None:
    if args.backend or args.all_backends or args.format:
        raise CliError("--engine writes the engine's own settings: it cannot go with --backend, "
                       "--all-backends or --format")
    if not (args.path or args.demo):
        raise CliError("--engine: give a level FILE (or --demo)")
    if not args.out:
        raise CliError("--engine: --out FILE is required")
    upm = args.units_per_metre
    if upm is not None and not (math.isfinite(upm) and upm > 0):
        raise CliError(f"--units-per-metre must be a positive number, got {upm}")


def run_engine(args, weights, progress) -> dict:
    """Tune ``args.engine`` on the level and write its settings; the report (see module doc)."""
    from editor.model.tuning import scene_workload
    from spatial.engines import engine_profile
    from spatial.engines.profile import LevelFrame
    from spatial.engines.tuning import EngineTuningError, tune_engine
    from spatial.engines.units import level_scale

    from . import load_recording_file, open_document

    _check(args)
    try:
        profile = engine_profile(args.engine)
    except KeyError as exc:
        raise CliError(f"--engine: {exc.args[0]}") from None
    check_output_path(args.out, args.force, "--out")
    source = "demo" if args.demo else args.path
    scene = open_document(None if args.demo else args.path)
    recording = load_recording_file(args.recording) if args.recording else None
    workload = scene_workload(scene, args.seed, recording=recording, source=source)
    upm, up_axis = level_scale(None if args.demo else args.path)
    frame = LevelFrame.of(workload.lo, workload.hi, args.units_per_metre or upm, up_axis)
    try:
        tuned = tune_engine(profile, workload, frame, budget_s=args.budget, seed=args.seed,
                            weights=weights, max_trials=args.max_trials, isolation="process",
                            fixed=split_assignments(args.param) or None, source=source,
                            on_trial=(lambda p: progress(p, profile.name)) if progress else None)
    except EngineTuningError as exc:
        raise CliError(f"{exc}; raise --budget") from None
    atomic_write_text(args.out, tuned.render())
    report = {"source": source, "title": profile.title, "syntax": profile.syntax,
              **tuned.as_dict(), "elapsed_s": round(tuned.result.elapsed_s, 3), "out": args.out}
    return report


def show_engine(report: dict) -> None:
    """The human-readable form of :func:`run_engine`'s or :func:`engine_list`'s report."""
    if "engines" in report:
        for row in report["engines"]:
            print(f"{row['name']:9s} {row['title']} {row['version']}: {row['syntax']}; "
                  f"knobs {', '.join(row['knobs'])} (modelled by our {row['backend']})")
        return
    gain = report["improvement"]
    print(f"tuned {report['title']} on {report['source']}: cost {report['cost']:.1f} "
          f"(engine defaults {report['default_cost']:.1f}"
          + (f", {100 * gain:.1f}% cheaper" if gain is not None else "") + ")")
    print(f"  {report['trials']} trials in {report['elapsed_s']:.1f} s ({report['stop_reason']}); "
          f"1 m = {report['units_per_metre']:g} level units")
    from spatial.engines.text import fmt

    for knob in report["knobs"].values():
        if knob["tuned"]:
            default = "none" if knob["default"] is None else fmt(knob["default"])
            print(f"  {knob['name']} = {fmt(knob['value'])} {knob['unit']} (engine default {default})")
    for entry in report["plateau"]:
        print(f"  no difference: {entry['text']}")
    for note in report["notes"]:
        print(f"  {note}")
    print(f"wrote {report['out']} ({report['syntax']})")
