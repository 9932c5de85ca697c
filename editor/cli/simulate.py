"""``simulate``: step the moving entities of a level (or replay a recording) and report per frame.

``python app.py simulate (FILE | --demo | --recording FILE) --frames N [--backend NAME]
[--param K=V ...] [--seed S] [--no-animate] [--save-recording OUT] --json`` prints one JSON
document::

    {"source", "mode": "simulate"|"replay", "backend", "params", "seed", "dt", "animate",
     "frames": [{"frame", "moved", "spawned", "despawned", "awake", "dynamic", "nodes",
                 "candidates", "overlapping", "update_ms", "pairs_ms", "frame_ms"}, ...],
     "summary": {"frames", "median_update_ms", "median_frame_ms", "max_frame_ms",
                 "spawned", "despawned", "overlapping_max"},
     "lifespans": {"max": {lifespan: nodes}, "counting_down": {frames_left: nodes}},
     "hotspots": [{"lo", "hi", "pair_tests", "frames", "depth", "row"}, ...]}

Frame 0 (the initial state) is not listed; frames 1..N are. ``candidates`` counts the
candidate pair tests of ``pairs('active')`` and ``overlapping`` the pairs whose boxes really
overlap. Hotspots are summed over the last ``--window`` frames (see :mod:`editor.model.hotspots`).
Level entities move as their class does (monsters wander and shoot, see
:mod:`editor.model.class_motion`) unless ``--no-animate`` keeps only the explicit motion keys;
``animate`` is ``null`` for a replay.
A recording (``.npz`` from ``--save-recording`` or a frame-lines ``.jsonl``, see
``docs/frame-format.md``) is replayed into the chosen backend frame by frame.

``--save-recording OUT`` is checked before the first frame (folder exists and is writable,
``OUT`` does not exist unless ``--force``) and written atomically after the last one; a
replay has nothing new to record, so it is refused with ``--recording``.
"""
from __future__ import annotations

import argparse

import numpy as np

from editor.model.index_input import IndexInput
from editor.model.simulation import SimulationConfig
from spatial.atomic import check_output_path
from spatial.params import params_to_dict

from . import CliError, _add_backend_args, load_recording_file, make_backend, subcommand

DEFAULT_FRAMES = 300

_DEFAULTS = SimulationConfig()


def _configure(p) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("path", nargs="?", help="scene file (native .json or any importable format)")
    src.add_argument("--demo", action="store_true", help="use the embedded demo level")
    src.add_argument("--recording", metavar="FILE", help="replay a recording (.npz or frame-lines .jsonl)")
    p.add_argument("--frames", type=int, default=DEFAULT_FRAMES, metavar="N",
                   help=f"frames to step (default {DEFAULT_FRAMES}; a replay stops at its end)")
    p.add_argument("--seed", type=int, default=0, help="seed of the simulation (default 0)")
    p.add_argument("--animate", action=argparse.BooleanOptionalAction, default=True,
                   help="level entities move as their class does: monsters wander and shoot "
                        "(default); --no-animate moves only entities with motion keys")
    p.add_argument("--window", type=int, default=60, metavar="W", help="hotspot window in frames (default 60)")
    p.add_argument("--top", type=int, default=10, metavar="K", help="hotspots listed (default 10)")
    p.add_argument("--save-recording", metavar="OUT", help="save the frames (.npz, or .jsonl frame lines)")
    p.add_argument("--force", action="store_true", help="let --save-recording overwrite an existing file")
    p.add_argument("--sleep-frames", type=int, default=_DEFAULTS.sleep_frames, metavar="N",
                   help=f"slow frames before a body falls asleep (default {_DEFAULTS.sleep_frames})")
    p.add_argument("--wake-margin", type=float, default=_DEFAULTS.wake_margin, metavar="UNITS",
                   help=f"a sleeper wakes when an awake box comes this close (default {_DEFAULTS.wake_margin:g})")
    _add_backend_args(p)


def _load_scene(path: str):
    """A scene from a native ``.json`` file or any registered importer."""
    from . import open_document

    return open_document(path)


def _save_recording(recording, path: str) -> None:
    from editor.model.frame_format import write_frame_lines
    from editor.model.recording import save_recording

    if path.lower().endswith(".npz"):
        save_recording(recording, path)
    else:
        write_frame_lines(recording, path)


def _summary(frames: list[dict]) -> dict:
    if not frames:
        return {"frames": 0}
    col = {k: np.array([f[k] for f in frames]) for k in frames[0]}
    return {"frames": len(frames),
            "median_update_ms": round(float(np.median(col["update_ms"])), 4),
            "median_frame_ms": round(float(np.median(col["frame_ms"])), 4),
            "max_frame_ms": round(float(col["frame_ms"].max()), 4),
            "spawned": int(col["spawned"].sum()), "despawned": int(col["despawned"].sum()),
            "overlapping_max": int(col["overlapping"].max())}


def _no_source(backend=None, params=None, source: str = "", metadata=None) -> IndexInput:
    empty = np.empty((0, 3))
    return IndexInput(source, {}, np.empty(0, dtype=np.int64), empty, empty,
                      np.empty(0, dtype=bool), backend=backend, params=params,
                      metadata=dict(metadata or {}))


def cmd_simulate(args) -> dict:
    """Run ``--frames`` frames of a simulation or a replay and report them."""
    from editor.model.hotspots import HotspotWindow
    from editor.model.recording import Replay
    from editor.model.simulation import Simulation, lifespan_histogram

    if args.frames < 1:
        raise CliError(f"--frames must be at least 1, got {args.frames}")
    if args.window < 1 or args.top < 0 or args.sleep_frames < 1 or not args.wake_margin >= 0:
        raise CliError("--window and --sleep-frames must be at least 1, --top and --wake-margin at least 0")
    if args.save_recording:
        if args.recording:
            raise CliError("--save-recording cannot go with --recording: a replay records nothing new")
        check_output_path(args.save_recording, args.force, "--save-recording")
    if args.recording:
        recording = load_recording_file(args.recording)
        index = make_backend(args.backend, args.param, args.params, _no_source())
        replay = Replay(recording, index)
        hotspots = HotspotWindow(args.window)
        frames = []
        # every recorded frame from 1 on is reported (a game's first frame included, so the
        # frames sent to `listen` come back one for one); frame 0, the state a simulation
        # starts from, is built but not reported, as `simulate` never reports it
        while len(frames) < args.frames and replay.position + 1 < len(recording):
            stats = _within_budget(replay.step, args.recording, replay.position + 1)
            if stats.frame < 1:
                continue
            nodes = index.nodes()
            stats.nodes = len(nodes)
            hotspots.push(stats.frame, nodes, replay.last_pairs.node_tests, replay.last_pairs.pairs)
            frames.append(stats.as_dict())
        source, mode, seed, dt = args.recording, "replay", None, recording.meta.get("dt")
        animate = None
    else:
        scene = _load_scene(args.path) if args.path else _demo_scene()
        settings = scene.settings
        index = make_backend(args.backend, args.param, args.params,
                             _no_source(settings.backend, dict(settings.params),
                                        args.path or "demo", settings.metadata))
        config = SimulationConfig(hotspot_window=args.window, sleep_frames=args.sleep_frames,
                                  wake_margin=args.wake_margin,
                                  recording_capacity=args.frames + 1,
                                  record=bool(args.save_recording), class_motion=args.animate)
        sim = Simulation(scene, index, seed=args.seed, config=config)
        name = "demo" if args.demo else args.path
        frames = [_within_budget(sim.step, name, sim.frame + 1).as_dict()
                  for _ in range(args.frames)]
        hotspots, recording = sim.hotspots, sim.recording
        source, mode, seed, dt = ("demo" if args.demo else args.path), "simulate", args.seed, config.dt
        animate = args.animate
        recording.meta["source"] = source
    if args.save_recording:
        _save_recording(recording, args.save_recording)
    return {
        "source": source, "mode": mode, "backend": index.name, "params": params_to_dict(index.params),
        "seed": seed, "dt": dt, "animate": animate, "frames": frames, "summary": _summary(frames),
        "lifespans": lifespan_histogram(index),
        "hotspots": [h.as_dict() for h in hotspots.ranking(args.top)],
    }


def _within_budget(step, source: str, frame: int):
    """``step()``, its work-budget error naming the level and the frame."""
    from editor.model.work_budget import WorkBudgetError

    try:
        return step()
    except WorkBudgetError as exc:
        raise exc.located(source, frame) from None


def _demo_scene():
    from editor.model.demo import build_demo_scene

    return build_demo_scene()


def _show(report: dict) -> None:
    print(f"{report['mode']} {report['source']} with {report['backend']} {report['params']}")
    print(f"{'frame':>6} {'moved':>6} {'awake':>6} {'nodes':>6} {'cand':>7} {'overlap':>7} {'update ms':>10}")
    for f in report["frames"]:
        print(f"{f['frame']:6d} {f['moved']:6d} {f['awake']:6d} {f['nodes']:6d} {f['candidates']:7d} "
              f"{f['overlapping']:7d} {f['update_ms']:10.3f}")
    s = report["summary"]
    if s.get("frames"):
        print(f"median update {s['median_update_ms']:.3f} ms, median frame {s['median_frame_ms']:.3f} ms, "
              f"max frame {s['max_frame_ms']:.3f} ms; {s['spawned']} spawned, {s['despawned']} despawned")
    print("lifespan max:", report["lifespans"]["max"] or "none")
    for h in report["hotspots"]:
        print(f"hotspot {h['pair_tests']:8d} tests  depth {h['depth']:2d}  {h['lo']} .. {h['hi']}")


subcommand("simulate", "step moving entities (or replay a recording) and report per frame",
           _configure, _show)(cmd_simulate)
