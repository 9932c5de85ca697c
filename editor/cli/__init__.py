"""The headless command line: ``stats``, ``plugins`` and the other pipeline subcommands.

Qt-free. ``--json`` prints exactly one JSON document on stdout; errors print one line
``partition-studio: error: ...`` on stderr and exit non-zero (2 for bad arguments or input,
1 for an unexpected failure; every status in :mod:`.outcome`), so build pipelines can rely on
the exit status.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from spatial.errors import ParamError, PartitionStudioError
from spatial.params import params_to_dict, split_assignments
from spatial.plugin_guard import stdout_to_stderr

from .outcome import (
    EXIT_BAD_INPUT,
    EXIT_BUDGET,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PLUGIN,
    plugin_exit_line,
)

if TYPE_CHECKING:
    from editor.model.index_input import IndexInput

PROG = "partition-studio"
#: set to show the traceback of an unexpected failure instead of its one-line summary
TRACEBACK_ENV = "PARTITION_STUDIO_TRACEBACK"

#: the backend the running subcommand made, named when it runs out of memory
_ACTIVE_INDEX = None

#: the largest generated scene ``--random`` accepts (memory: ~100 bytes an object and more)
MAX_RANDOM_OBJECTS = 20_000_000


class CliError(PartitionStudioError):
    """A user error on the command line; printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: one line and exit 2, like ours
        raise CliError(message)


# --------------------------------------------------------------------------- scene sources
def _random_source(n: int, seed: int, layout: str) -> IndexInput:
    from editor.model.index_input import IndexInput
    from spatial.scenegen import random_boxes

    if n < 0 or n > MAX_RANDOM_OBJECTS:
        raise CliError(f"--random: N must be between 0 and {MAX_RANDOM_OBJECTS}, got {n}")
    ids, lo, hi = random_boxes(n, seed=seed, layout=layout)
    bounds = [lo.min(axis=0).tolist(), hi.max(axis=0).tolist()] if n else [[0, 0, 0], [0, 0, 0]]
    counts = {"brushes": 0, "entities": 0, "brush_entities": 0, "faces": 0, "triangles": 0,
              "segments": 0, "objects": n, "invalid_brushes": 0, "bounds": bounds}
    return IndexInput(f"random:{n}:seed={seed}:{layout}", counts, ids, lo, hi,
                      np.ones(n, dtype=bool))


def stage_reporter() -> Callable[[float, str], None] | None:
    """``progress(fraction, text)`` printing each stage of a long load or build on stderr, one
    line each, when stderr is a terminal (never into a pipe or a log a pipeline reads)."""
    if not sys.stderr.isatty():
        return None

    last = [""]

    def report(fraction: float, text: str) -> None:
        if text != last[0]:  # a loader and its importer may both announce the same stage
            last[0] = text
            print(f"{PROG}: {100 * fraction:3.0f}% {text}", file=sys.stderr, flush=True)

    return report


def open_document(path: str | None):
    """The document at ``path`` (None: the demo level) through the one loading path
    (:func:`editor.model.loading.open_level`); its warnings go to stderr, one line each, and
    its stages too on a terminal."""
    from editor.model.loading import open_level

    loaded = open_level(path, progress=stage_reporter())
    for warning in loaded.warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    return loaded.document


def _document_source(path: str | None) -> IndexInput:
    """Load the demo level (``path`` None) or a file through the importer registry."""
    from editor.model.loading import document_source

    return document_source(open_document(path), "demo" if path is None else path)


def load_source(args) -> IndexInput:
    if getattr(args, "random", None) is not None:
        return _random_source(args.random, args.seed, args.layout)
    if getattr(args, "demo", False):
        return _document_source(None)
    return _document_source(args.path)


# --------------------------------------------------------------------------- backends
def make_backend(name: str | None, assignments: list[str] | None, params_file: str | None,
                 source: IndexInput):
    """Instantiate the backend named on the command line (or the document's, or octree)."""
    from spatial.params import parse_params
    from spatial.registry import default_registry

    registry = default_registry()
    from_file = _read_params_file(params_file) if params_file else None
    # a tuned-parameters file selects the backend it was tuned for, unless --backend says otherwise
    chosen = name or (from_file or {}).get("backend") or source.backend or \
        ("octree" if "octree" in registry.backends else "brute")
    try:
        cls = registry.backend(chosen)
    except PartitionStudioError as exc:  # say where the name came from
        raise CliError(f"{_backend_origin(name, params_file, from_file, source)}: {exc}") from None
    values: dict[str, Any] = {}
    if source.params and chosen == source.backend:
        values.update(source.params)
    if from_file is not None:
        if from_file.get("backend") not in (None, chosen):
            raise CliError(f"{params_file}: parameters are for backend "
                           f"'{from_file['backend']}', not '{chosen}'")
        try:
            parse_params(cls.Params, from_file["params"])
        except ParamError as exc:  # say which file holds the bad value
            raise CliError(f"{params_file}: {exc}") from None
        values.update(from_file["params"])
    values.update(split_assignments(assignments or []))
    global _ACTIVE_INDEX
    _ACTIVE_INDEX = cls(parse_params(cls.Params, values))
    return _ACTIVE_INDEX


def _backend_origin(name, params_file, from_file, source: IndexInput) -> str:
    """Where the chosen backend's name was written: the option, the file and its field."""
    if name:
        return "--backend"
    if from_file is not None and from_file.get("backend"):
        return f"{params_file}: backend"
    where = source.source or "level"
    if (source.metadata or {}).get("map_format") is not None:
        return f"{where}: worldspawn key _ps_backend"
    return f"{where}: settings.backend"


def _read_params_file(path: str) -> dict:
    """The tuned-parameters document in ``path`` (its ``backend`` and ``params``)."""
    from spatial.bounded_json import loads_bounded
    from spatial.errors import ParseError

    try:
        with open(path, "rb") as fh:
            doc = loads_bounded(fh.read(), path)
    except OSError as exc:
        raise CliError(f"{path}: cannot read: {exc.strerror}") from None
    except ParseError as exc:  # located, nesting and number length bounded
        raise CliError(str(exc)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("params"), dict):
        raise CliError(f"{path}: expected an object with a 'params' object")
    if doc.get("backend") is not None and not isinstance(doc["backend"], str):
        raise CliError(f"{path}: backend: expected a backend name")
    return doc


def load_recording_file(path: str):
    """A recording for ``simulate --recording`` or ``tune --recording``: ``.npz``, else frame lines."""
    from editor.model.frame_format import load_frame_lines
    from editor.model.recording import load_recording

    if not os.path.exists(path):
        raise CliError(f"{path}: no such file")
    return load_recording(path) if path.lower().endswith(".npz") else load_frame_lines(path)


# --------------------------------------------------------------------------- subcommands
def _add_source_args(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("path", nargs="?", help="scene file (native .json or any importable format)")
    src.add_argument("--demo", action="store_true", help="use the embedded demo level")
    src.add_argument("--random", type=int, metavar="N", help="generate N random boxes")
    p.add_argument("--seed", type=int, default=0, help="seed for --random (default 0)")
    p.add_argument("--layout", choices=["uniform", "clustered"], default="uniform",
                   help="layout for --random (default uniform)")


def _add_backend_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", metavar="NAME", help="spatial index backend (see 'plugins')")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="backend parameter (repeatable)")
    p.add_argument("--params", metavar="PARAMS.json", help="parameters exported by 'tune'")


def cmd_stats(args) -> dict:
    """Build the index for a scene and report scene, index and pair statistics."""
    source = load_source(args)
    index = make_backend(args.backend, args.param, args.params, source)
    report = stage_reporter()
    if report is not None:
        report(0.9, f"Building the {index.name} index of {len(source.ids):,} objects")
    source.build(index)  # planes, wall segments and triangles offered, then the boxes
    if report is not None:
        report(0.95, "Counting candidate pairs")
    start = time.perf_counter()
    result = index.count_pairs("all")  # counted without holding the list (10^8 pairs on a big mesh)
    pairs_ms = (time.perf_counter() - start) * 1e3
    stats = index.stats()
    report = {
        "scene": {"source": source.source, **source.counts},
        "index": {
            "backend": index.name,
            "params": params_to_dict(index.params),
            **{k: v for k, v in stats.items() if k not in ("backend",)},
        },
        "pairs": {"candidates": result.tests, "overlapping": result.overlapping,
                  "ms": round(pairs_ms, 3)},
    }
    if getattr(args, "probe_radius", None) is not None:
        from spatial.probes import sphere_probes
        lo = source.lo.min(axis=0) if len(source.lo) else np.zeros(3)
        hi = source.hi.max(axis=0) if len(source.hi) else np.zeros(3)
        report["probe"] = sphere_probes(index, lo, hi, args.probe_radius, seed=args.seed)
    return report


def _print_stats(report: dict) -> None:
    s, i, p = report["scene"], report["index"], report["pairs"]
    print(f"scene    {s['source']}: {s['objects']} objects ({s['brushes']} brushes, "
          f"{s['entities']} entities, {s['faces']} faces)")
    if s.get("invalid_brushes"):
        print(f"         {s['invalid_brushes']} brushes bounding no solid, kept as written, "
              "not indexed")
    print(f"index    {i['backend']} {i['params']}")
    print(f"         {i['nodes']} nodes, {i['leaves']} leaves, depth {i['max_depth']} "
          f"(ideal {i['ideal_depth']}), {i['references']} references, built in {i['build_ms']:.1f} ms")
    print(f"pairs    {p['candidates']} candidate tests, {p['overlapping']} overlapping "
          f"({p['ms']:.1f} ms)")


def cmd_plugins(args) -> dict:
    """List every registered backend, importer, exporter, motion and every plugin failure."""
    from spatial.registry import default_registry

    return default_registry().describe()


def _print_plugins(report: dict) -> None:
    print("backends:")
    for name, b in report["backends"].items():
        params = ", ".join(f"{p['name']}={p['default']}" for p in b["params"])
        print(f"  {name:10s} {b['description']}  [{params}]")
    for kind in ("importers", "exporters"):
        print(f"{kind}:")
        for name, item in report[kind].items():
            print(f"  {name:14s} {' '.join(item['patterns'])}")
    if report["motions"]:
        print("motions: " + ", ".join(report["motions"]))
    failed = [p for p in report["plugins"] if p["error"]]
    for p in failed:
        print(f"FAILED plugin {p['name']} ({p['source']}): {p['error']}")


@dataclass
class Subcommand:
    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[Any], dict]
    show: Callable[[dict], None]


def _configure_stats(p):
    _add_source_args(p)
    _add_backend_args(p)
    p.add_argument("--probe-radius", type=float, metavar="R",
                   help="also query 256 spheres of radius R at random centres (--seed) inside "
                        "the scene bounds and report candidates per query (mean and max)")


SUBCOMMANDS: dict[str, Subcommand] = {}


def subcommand(name: str, help: str, configure, show):
    """Register a subcommand; other modules add theirs the same way (``simulate``, ``tune``)."""
    def wrap(run):
        SUBCOMMANDS[name] = Subcommand(name, help, configure, run, show)
        return run
    return wrap


subcommand("stats", "scene, index and pair statistics", _configure_stats, _print_stats)(cmd_stats)
subcommand("plugins", "list plugins, backends, importers and exporters",
           lambda p: None, _print_plugins)(cmd_plugins)


def _load_extra_subcommands() -> None:
    """Every other module of this package is a subcommand that registers itself on import, so a
    new subcommand is one new module here and nothing else."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        if info.name not in _NOT_SUBCOMMANDS:
            importlib.import_module(f"{__name__}.{info.name}")


#: modules of this package that hold shared helpers rather than a subcommand
_NOT_SUBCOMMANDS = frozenset({"limits", "outcome", "engine_tune"})


def build_parser() -> argparse.ArgumentParser:
    _load_extra_subcommands()
    parser = _Parser(prog=PROG, description="See and tune the spatial partition of a game level.")
    parser.add_argument("--plugin-dir", action="append", default=[], metavar="DIR",
                        help="extra plugin folder (repeatable)")
    subs = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for sc in SUBCOMMANDS.values():
        p = subs.add_parser(sc.name, help=sc.help, description=sc.help)
        sc.configure(p)
        p.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    return parser


def is_cli_invocation(argv: list[str]) -> bool:
    """True when the arguments name a subcommand (or ask for help) rather than a file to open."""
    rest = list(argv)
    while rest and rest[0].startswith("--plugin-dir"):
        rest = rest[1:] if "=" in rest[0] else rest[2:]
    if not rest:
        return False  # the editor on the demo level: no subcommand module is needed
    _load_extra_subcommands()
    first = rest[0]
    return first in SUBCOMMANDS or first in ("-h", "--help")


def _json_default(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def _one_line(text: str, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def describe_failure(exc: BaseException, command: str = "") -> str:
    """One line for an exception the product did not raise on purpose.

    A failure inside plugin code names the plugin and what it was asked to do; anything else
    names the exception and where it was raised. ``MemoryError`` says what ran out.
    """
    import traceback
    from pathlib import Path

    if isinstance(exc, MemoryError):
        from .limits import MEMORY_BUDGET_ENV, memory_budget_mb

        budget = memory_budget_mb()
        limit = (f"over the memory budget of {budget} MB (${MEMORY_BUDGET_ENV})" if budget
                 else "out of memory")
        index = _ACTIVE_INDEX
        if index is not None:
            params = ", ".join(f"{k}={v}" for k, v in params_to_dict(index.params).items())
            return (f"{index.name} with {params} on {index.objects.count} "
                    f"objects needs more memory: {limit}; choose parameters that build a smaller "
                    f"structure")
        doing = f" while running '{command}'" if command else ""
        return f"{limit}{doing}; use a smaller level"
    if isinstance(exc, OSError) and exc.filename and exc.strerror:  # e.g. a full disk mid-save
        return f"{exc.filename}: {exc.strerror}"
    what = f"{type(exc).__name__}: {_one_line(exc)}" if str(exc).strip() else type(exc).__name__
    from spatial import registry as registry_module

    registry = registry_module._DEFAULT  # only a registry that exists can hold plugin code
    blamed = registry.plugin_in_traceback(exc) if registry is not None else None
    if blamed is not None:
        plugin, function = blamed
        return f"plugin '{plugin}' failed in {function}(): {what}"
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" (at {Path(last[0].filename).name}:{last[0].lineno})" if last else ""
    return f"internal error: {what}{where}"


def _render(report: dict, args) -> str:
    """The whole output text, built before anything is printed (never a partial document)."""
    if args.json:
        return json.dumps(report, default=_json_default, allow_nan=False) + "\n"
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        SUBCOMMANDS[args.command].show(report)
    return buffer.getvalue()


def _failed(exc: BaseException, command: str) -> int:
    """Print the one line for ``exc`` and return its exit status (:mod:`.outcome`)."""
    from spatial.memory_budget import MemoryBudgetError

    if isinstance(exc, (SystemExit, GeneratorExit)):
        line = plugin_exit_line(exc) if isinstance(exc, SystemExit) else None
        if line is None:
            raise exc  # argparse's --help and our own exits
        print(f"{PROG}: error: {line}", file=sys.stderr)
        return EXIT_PLUGIN
    if isinstance(exc, MemoryBudgetError):
        print(f"{PROG}: error: {_one_line(exc, 2000)}", file=sys.stderr)
        return EXIT_BUDGET
    if isinstance(exc, PartitionStudioError):
        print(f"{PROG}: error: {_one_line(exc, 2000)}", file=sys.stderr)
        if getattr(exc, "plugin_failure", False):
            return EXIT_PLUGIN
        return EXIT_BUDGET if getattr(exc, "budget", False) else EXIT_BAD_INPUT
    if isinstance(exc, KeyboardInterrupt):
        print(f"{PROG}: error: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if os.environ.get(TRACEBACK_ENV):
        raise exc
    print(f"{PROG}: error: {describe_failure(exc, command)}", file=sys.stderr)
    if isinstance(exc, MemoryError):
        return EXIT_BUDGET
    return EXIT_PLUGIN if _blamed_plugin(exc) is not None else EXIT_INTERNAL


def _blamed_plugin(exc: BaseException):
    from spatial import registry as registry_module

    registry = registry_module._DEFAULT
    return registry.plugin_in_traceback(exc) if registry is not None else None


def run_cli(argv: list[str], memory_budget: bool = False) -> int:
    """Run a headless subcommand; returns the exit status.

    While the subcommand runs, stdout is redirected to stderr, so nothing a plugin or library
    prints can mix with the report; the report is built whole, then printed in one write.
    Errors are one line on stderr, with the exit status of their kind (:mod:`.outcome`): 2 for
    bad input, 3 for a plugin's failure (``sys.exit()`` in plugin code included), 4 for a memory
    or work budget, 1 for a failure of the product (set ``PARTITION_STUDIO_TRACEBACK=1`` to see
    the traceback), 130 when interrupted. File descriptor 1 itself goes to stderr while the
    subcommand runs, and a fork in plugin code never prints. ``memory_budget`` caps the whole process's memory (see
    :mod:`editor.cli.limits`): the entry point asks for it, a caller embedding the CLI need not.
    """
    command = ""
    pid = os.getpid()
    try:
        parser = build_parser()
        args = parser.parse_args(argv)  # --help prints on stdout and exits, as usual
        command = args.command
        if memory_budget:
            from .limits import apply_memory_budget

            apply_memory_budget()
        with stdout_to_stderr():  # file descriptor 1 too: plugins cannot write into the report
            from spatial.registry import add_plugin_dir

            for folder in args.plugin_dir:
                add_plugin_dir(folder)
            report = SUBCOMMANDS[args.command].run(args)
            text = None if report is None else _render(report, args)
    except BaseException as exc:  # noqa: B036 - the promise is one line, never a traceback
        return _failed(exc, command)
    if os.getpid() != pid:  # a plugin forked and its copy came back here: it prints nothing
        os._exit(EXIT_OK)
    if text is None:
        return 0
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head` closed the pipe: not an error of ours
        sys.stderr.close()
    return 0
