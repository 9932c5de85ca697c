"""The tuned-parameters document: what the tuner writes and ``--params FILE`` reads back.

:func:`tuned_params_document` builds it from a :class:`spatial.tuner.TuneResult`;
:func:`load_params_document` reads and validates a file of it, naming the file and field on
error. Exporters (``plugins/param_exporters.py``) turn the document into engine snippets.
"""
from __future__ import annotations

import datetime as _dt
import re
from pathlib import Path
from typing import Any

from spatial.bounded_json import loads_bounded
from spatial.errors import ParseError, PartitionStudioError
from spatial.params import param_specs, parse_params

FORMAT_NAME = "partition-studio-params"
FORMAT_VERSION = 1
TOOL_NAME = "partition-studio"


class ParamsFormatError(PartitionStudioError, ValueError):
    """A tuned-parameters document is unreadable; the message names the file and field path."""

    def __init__(self, source: str, field: str, message: str):
        self.source, self.field = source, field
        super().__init__(f"{source}: {field}: {message}" if field else f"{source}: {message}")


def tool_version() -> str:
    """The installed version of the tool (``0+unknown`` when not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(TOOL_NAME)
    except PackageNotFoundError:
        return "0+unknown"


# --------------------------------------------------------------------------- the document
def tuned_params_document(result, scene: dict, comparison: dict | None = None,
                          date: str | None = None) -> dict:
    """The JSON document of a :class:`spatial.tuner.TuneResult`.

    Parameters
    ----------
    result : spatial.tuner.TuneResult
        Its ``best`` trial gives the parameters (the defaults when no trial completed).
    scene : dict
        ``{"source", "hash", "objects"}`` of the scene the parameters were tuned on.
    comparison : dict, optional
        A :meth:`spatial.tuner.Comparison.as_dict` when several backends were compared.
    date : str, optional
        ISO-8601 date (default: now, UTC).
    """
    from spatial.backend_lookup import backend_class

    cls = backend_class(result.backend)
    specs = param_specs(cls.Params)
    defaults = {s.name: s.default for s in specs}
    best, base = result.best, result.defaults
    params = dict(best.params) if best is not None else dict(defaults)
    doc = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "tool": {"name": TOOL_NAME, "version": tool_version()},
        "date": date or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "backend": result.backend,
        "params": params,
        "units": {s.name: s.unit for s in specs},
        "defaults": defaults,
        "scene": {"source": str(scene.get("source", "")), "hash": str(scene.get("hash", "")),
                  "objects": int(scene.get("objects", 0))},
        "cost_model": {
            "objective": "per-frame work (spatial.cost): pair tests + rays_per_frame * ray work "
                         "+ frusta_per_frame * frustum work + weighted size and wall-clock terms",
            "weights": dict(result.as_dict()["weights"]),
            "seed": result.seed,
            "workload": result.workload,
        },
        "cost": {
            "tuned": best.cost if best is not None else None,
            "defaults": base.cost if base is not None and base.ok else None,
            "improvement": result.improvement,
            "tuned_report": best.report if best is not None else None,
            "defaults_report": base.report if base is not None and base.ok else None,
        },
        "search": {"trials": len(result.trials), "budget_s": result.budget_s,
                   "elapsed_s": round(result.elapsed_s, 3), "stop_reason": result.stop_reason,
                   "space": result.space, "warmup_s": round(result.warmup_s, 3),
                   "history": [{"index": t.index, "phase": t.phase, "status": t.status,
                                "cost": t.cost, "seconds": round(t.seconds, 3),
                                "params": t.params, "message": t.message}
                               for t in result.trials]},
    }
    if comparison is not None:
        doc["comparison"] = comparison
    return doc


def _require(doc: Any, key: str, kind, source: str, path: str):
    if not isinstance(doc, dict) or key not in doc:
        raise ParamsFormatError(source, f"{path}{key}", "missing")
    value = doc[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ParamsFormatError(source, f"{path}{key}", f"expected {names}, got {type(value).__name__}")
    return value


def check_params_document(doc: Any, source: str = "<params>", registry=None) -> Any:
    """Validate a parsed document; return the backend's ``Params`` instance it describes.

    Raises :class:`ParamsFormatError` naming the field path (``params.max_depth``...).
    """
    from spatial.backend_lookup import backend_class

    if registry is None:
        from spatial.registry import default_registry
        registry = default_registry()
    if not isinstance(doc, dict):
        raise ParamsFormatError(source, "", "expected a JSON object")
    fmt = _require(doc, "format", str, source, "")
    if fmt != FORMAT_NAME:
        raise ParamsFormatError(source, "format", f"expected {FORMAT_NAME!r}, got {fmt!r}")
    version = _require(doc, "version", int, source, "")
    if version < 1 or version > FORMAT_VERSION:
        raise ParamsFormatError(source, "version",
                                f"version {version} is not supported (this tool reads 1..{FORMAT_VERSION})")
    backend = _require(doc, "backend", str, source, "")
    if backend not in registry.backends:
        known = ", ".join(sorted(registry.backends))
        raise ParamsFormatError(source, "backend", f"unknown backend {backend!r} (known: {known})")
    params = _require(doc, "params", dict, source, "")
    scene = doc.get("scene")
    if scene is not None:
        if not isinstance(scene, dict):
            raise ParamsFormatError(source, "scene", "expected an object")
        if "hash" in scene and not (isinstance(scene["hash"], str)
                                    and re.fullmatch(r"(sha256:[0-9a-f]{64})?", scene["hash"])):
            raise ParamsFormatError(source, "scene.hash", "expected 'sha256:' and 64 hex digits")
    cls = backend_class(backend, registry)
    from spatial.errors import ParamError

    try:
        return parse_params(cls.Params, params)
    except ParamError as exc:
        raise ParamsFormatError(source, f"params.{exc.field}", str(exc).split(": ", 1)[-1]) from None


def load_params_document(path: str | Path, registry=None) -> tuple[dict, Any]:
    """Read a tuned-parameters JSON file: ``(document, Params instance)``; errors name file and field."""
    source = str(path)
    if Path(path).exists() and not Path(path).is_file():  # a folder, or a pipe never ending
        raise ParamsFormatError(source, "", "cannot read: not a regular file")
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ParamsFormatError(source, "", f"cannot read: {exc.strerror or exc}") from None
    try:
        doc = loads_bounded(data, source)
    except ParseError as exc:
        raise ParamsFormatError(f"{source}:{exc.line}:{exc.column}", "", exc.detail) from None
    return doc, check_params_document(doc, source, registry)
