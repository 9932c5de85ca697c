"""Tunable parameters of a backend, declared once and used everywhere.

A backend's ``Params`` is a frozen dataclass whose fields are declared with :func:`param`.
The declaration carries the default, the bounds, the unit and a one-line help text, so that

* the GUI builds its parameter panel from :func:`param_specs`,
* the tuner searches inside the declared bounds (``scale`` says whether to search linearly or
  logarithmically),
* the exporter writes values with their units,
* the CLI parses ``--param KEY=VALUE`` strings with :func:`parse_params`, rejecting unknown
  keys, NaN and out-of-bounds values with a message naming the field.

Example
-------
>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class GridParams:
...     cell_size: float = param(0.0, lo=0.0, hi=1e6, unit="units",
...                              help="Cell edge length; 0 picks the median object size.")
>>> parse_params(GridParams, {"cell_size": "8"}).cell_size
8.0
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ParamError

_META_KEY = "partition_studio"


@dataclass(frozen=True)
class ParamSpec:
    """Everything known about one tunable parameter."""

    name: str
    kind: type  # int, float, bool or str
    default: Any
    lo: float | None
    hi: float | None
    unit: str
    help: str
    choices: tuple[str, ...] | None
    scale: str  # "linear" or "log": how a search should sample the range
    tunable: bool  # False for policies the tuner must not change (e.g. out-of-bounds policy)


def param(default: Any, *, lo: float | None = None, hi: float | None = None, unit: str = "",
          help: str, choices: Sequence[str] | None = None, scale: str = "linear",
          tunable: bool = True) -> Any:
    """Declare a dataclass field as a backend parameter (see the module docstring)."""
    if scale not in ("linear", "log"):
        raise ValueError(f"scale must be 'linear' or 'log', not {scale!r}")
    meta = {"lo": lo, "hi": hi, "unit": unit, "help": help,
            "choices": tuple(choices) if choices is not None else None,
            "scale": scale, "tunable": tunable}
    return dataclasses.field(default=default, metadata={_META_KEY: meta})


def param_specs(params_cls: type) -> list[ParamSpec]:
    """Return the :class:`ParamSpec` of every field of a ``Params`` dataclass, in order."""
    specs = []
    for f in dataclasses.fields(params_cls):
        meta = f.metadata.get(_META_KEY)
        if meta is None:
            raise TypeError(f"{params_cls.__name__}.{f.name} is not declared with param()")
        kind = type(f.default)
        specs.append(ParamSpec(f.name, kind, f.default, meta["lo"], meta["hi"], meta["unit"],
                               meta["help"], meta["choices"], meta["scale"], meta["tunable"]))
    return specs


def _shown(raw: Any, limit: int = 40) -> str:
    """``repr(raw)`` cut to ``limit`` characters, so a 5,000-digit value stays a short message."""
    text = repr(raw)
    return text if len(text) <= limit else f"{text[:limit - 3]}... ({len(text)} characters)"


def _coerce(spec: ParamSpec, raw: Any) -> Any:
    """Convert ``raw`` (a string from the CLI or a JSON value) to the field's type and check it."""
    name = spec.name
    if spec.kind is bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise ParamError(name, f"expected true or false, got {_shown(raw)}")
    if spec.kind is str:
        choice = str(raw)
        if spec.choices is not None and choice not in spec.choices:
            raise ParamError(name, f"expected one of {', '.join(spec.choices)}, got {choice!r}")
        return choice
    if isinstance(raw, bool):
        raise ParamError(name, f"expected a number, got {_shown(raw)}")
    try:
        number = float(raw)
    except (TypeError, ValueError):
        raise ParamError(name, f"expected a number, got {_shown(raw)}") from None
    if not math.isfinite(number):
        raise ParamError(name, f"must be a finite number, got {_shown(raw)}")
    if spec.kind is int:
        if number != int(number):
            raise ParamError(name, f"expected a whole number, got {_shown(raw)}")
        value: Any = int(number)
    else:
        value = number
    if spec.lo is not None and value < spec.lo:
        raise ParamError(name, f"{value} is below the minimum {spec.lo:g}")
    if spec.hi is not None and value > spec.hi:
        raise ParamError(name, f"{value} is above the maximum {spec.hi:g}")
    return value


def parse_params(params_cls: type, values: Mapping[str, Any] | None = None,
                 base: Any = None) -> Any:
    """Build a ``Params`` instance from ``values`` (strings or JSON values), validating each.

    Parameters
    ----------
    params_cls:
        The backend's ``Params`` dataclass.
    values:
        Field name to raw value. Unknown names raise :class:`ParamError`.
    base:
        An existing instance whose values are kept for fields not in ``values``.
    """
    specs = {s.name: s for s in param_specs(params_cls)}
    current = dataclasses.asdict(base) if base is not None else {}
    for key, raw in (values or {}).items():
        if key not in specs:
            known = ", ".join(specs) or "none"
            raise ParamError(key, f"unknown parameter for {params_cls.__name__} (known: {known})")
        current[key] = _coerce(specs[key], raw)
    return params_cls(**current)


def validate_params(params: Any) -> Any:
    """Check every field of an existing instance against its declaration; return it unchanged."""
    for spec in param_specs(type(params)):
        _coerce(spec, getattr(params, spec.name))
    return params


def params_to_dict(params: Any) -> dict[str, Any]:
    """Plain JSON-ready ``{name: value}`` of a ``Params`` instance."""
    return dataclasses.asdict(params)


def split_assignments(items: Sequence[str]) -> dict[str, str]:
    """Parse CLI ``KEY=VALUE`` items into a dict, naming the malformed item on error."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ParamError(item, "expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out
