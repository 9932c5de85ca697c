"""What an engine profile is: the engine's own knobs, and the backend of ours that models them.

A profile (one module per engine in this package) names

* its **knobs**: the engine's own setting names, legal ranges, defaults and units, each with
  the public header or manual it was read from (:class:`Knob`); a knob the model cannot
  measure is declared ``tunable=False`` and is written out at the engine's default;
* the **backend** of ours whose structure models the engine's broad phase or scene-query
  structure, and :meth:`EngineProfile.backend_params`, which turns knob values into that
  backend's parameters for one level (:class:`LevelFrame`: bounds, units per metre, up axis);
* values **derived** from the level rather than searched (world bounds, table sizes);
* :meth:`EngineProfile.render`, the engine's own configuration syntax.

:func:`engine_index_class` makes the backend class the tuner searches: a subclass of ours whose
``Params`` are the engine's knobs (in the engine's units), translated on construction. So the
tuner (:func:`spatial.tuner.tune`) searches exactly the engine's space, and its defaults trial
is the engine's defaults.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..params import param, params_to_dict, parse_params

if TYPE_CHECKING:
    from ..contract import SpatialIndex

#: engine length units and how many of them make a metre
LENGTH_UNITS = {"m": 1.0, "cm": 100.0}
#: an engine's own timings closer than this (relative) are a tie, kept by its default
ENGINE_NOISE = 0.05


@dataclass(frozen=True)
class Knob:
    """One engine setting, exactly as the engine names and bounds it.

    ``key`` is a Python name for the tuner; ``name`` the engine's own spelling (a member, a
    console variable, a project setting). ``unit`` is ``"m"``/``"cm"`` for lengths in the
    engine's units, ``"units"`` for lengths in the level's own units (engines without a unit
    of length), else a count or a choice. ``baseline`` is where the model starts when the
    engine's default cannot be modelled (``None``: the default itself). ``runtime`` is False
    for a compile-time constant. ``engine_tuned`` marks a knob the model cannot measure
    (``tunable=False``) that the engine's own timing settles when the engine runs here
    (:meth:`EngineProfile.refine_in_engine`).
    """

    key: str
    name: str
    default: Any
    unit: str
    help: str
    source: str
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] | None = None
    scale: str = "linear"
    tunable: bool = True
    baseline: Any = None
    runtime: bool = True
    engine_tuned: bool = False

    @property
    def start(self) -> Any:
        """The value the model measures as "the engine's defaults"."""
        return self.default if self.baseline is None else self.baseline


@dataclass(frozen=True)
class LevelFrame:
    """The level as an engine sees it: bounds in level units, scale and up axis.

    ``median_size`` is the median of the objects' largest extents; ``median_ground_size`` the
    same across the ground plane only (the two axes that are not up: a 2D engine's view of the
    level; 0 when unknown, then ``median_size`` stands in).
    """

    world_lo: tuple[float, float, float]
    world_hi: tuple[float, float, float]
    units_per_metre: float = 1.0
    up_axis: int = 2
    objects: int = 0
    median_size: float = 1.0
    median_ground_size: float = 0.0

    @classmethod
    def of(cls, lo: np.ndarray, hi: np.ndarray, units_per_metre: float = 1.0,
           up_axis: int = 2) -> LevelFrame:
        """The frame of objects with boxes ``lo``/``hi`` (level units)."""
        if not (units_per_metre > 0 and math.isfinite(units_per_metre)):
            raise ValueError(f"units per metre must be a positive number, got {units_per_metre!r}")
        if len(lo) == 0:
            return cls((0.0, 0.0, 0.0), (1.0, 1.0, 1.0), float(units_per_metre), up_axis, 0, 1.0)
        sizes = (hi - lo).max(axis=1)
        median = float(np.median(sizes))
        ground = [a for a in range(3) if a != up_axis]
        ground_median = float(np.median((hi - lo)[:, ground].max(axis=1)))
        a, b = lo.min(axis=0), hi.max(axis=0)
        return cls((float(a[0]), float(a[1]), float(a[2])), (float(b[0]), float(b[1]), float(b[2])),
                   float(units_per_metre), int(up_axis), int(len(lo)), median if median > 0 else 1.0,
                   ground_median if ground_median > 0 else 0.0)

    @property
    def ground_axes(self) -> tuple[int, int]:
        """The two axes that are not up, in order (a top view's x and y)."""
        first, second = (a for a in range(3) if a != self.up_axis)
        return first, second

    @property
    def ground_size(self) -> float:
        """The objects' median size across the ground plane (``median_size`` when unknown)."""
        return self.median_ground_size if self.median_ground_size > 0 else self.median_size

    @property
    def extent(self) -> np.ndarray:
        return np.maximum(np.subtract(self.world_hi, self.world_lo), 0.0)

    @property
    def horizontal_extent(self) -> float:
        """The largest extent across the two axes that are not up (the ground plane)."""
        ext = self.extent
        return float(max(ext[a] for a in range(3) if a != self.up_axis) or 1.0)

    def to_engine(self, level_length: float, unit: str) -> float:
        """A length in level units expressed in the engine unit ``unit``."""
        if unit == "units":
            return float(level_length)
        return float(level_length) / self.units_per_metre * LENGTH_UNITS[unit]

    def to_level(self, engine_length: float, unit: str) -> float:
        """A length in the engine unit ``unit`` expressed in level units."""
        if unit == "units":
            return float(engine_length)
        return float(engine_length) / LENGTH_UNITS[unit] * self.units_per_metre


@dataclass(frozen=True)
class Derived:
    """A value the profile computes from the level (not searched): name, value, unit, why."""

    name: str
    value: Any
    unit: str
    note: str


@dataclass
class EngineSettings:
    """A tuned (or default) assignment of a profile's knobs, ready to render."""

    profile: EngineProfile
    frame: LevelFrame
    values: dict
    cost: float | None = None
    default_cost: float | None = None
    plateau: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    source: str = ""
    #: cost of the profile's ``alternative_backend`` at its defaults, when measured
    alternative_cost: float | None = None
    #: the engine's own timing of the tuned knobs against its alternative, when it could run
    #: here: ``{"tree_ms", "hash_ms", ...}`` (see :meth:`EngineProfile.measure_in_engine`)
    engine_run: dict | None = None

    @property
    def prefer_alternative(self) -> bool:
        """Whether the engine's alternative structure (its default, e.g. Chipmunk's tree) is the
        better choice: by the engine's own timing when there is one — the tuned knobs must be
        faster by more than :data:`ENGINE_NOISE` — else by the model's costs."""
        if self.engine_run is not None:  # the tuned knobs must be clearly faster to replace it
            run = self.engine_run
            return not run["hash_ms"] * (1 + ENGINE_NOISE) < run["tree_ms"]
        return (self.alternative_cost is not None and self.cost is not None
                and self.alternative_cost < self.cost)

    @property
    def gain(self) -> float | None:
        """Relative cost saved against the engine's defaults (0.25 = a quarter cheaper)."""
        if self.cost is None or not self.default_cost:
            return None
        return 1.0 - self.cost / self.default_cost

    def gain_text(self) -> str:
        gain = self.gain
        return "not measured" if gain is None else f"{100 * gain:+.1f}% cheaper than the defaults"

    def plateau_of(self, key: str) -> str:
        """The plateau sentence about knob ``key`` ("" when it mattered)."""
        return next((p["text"] for p in self.plateau if p["name"] == key), "")


class EngineProfile:
    """Base of every engine profile (see the module docstring)."""

    name = ""
    title = ""
    version = ""
    backend = ""
    #: what the output file holds, e.g. "C++ (PxSceneDesc)"; and its usual suffix
    syntax = ""
    suffix = ""
    knobs: tuple[Knob, ...] = ()
    #: one sentence per part of the engine's structure the model does not measure
    not_modelled: tuple[str, ...] = ()
    #: another of our backends modelling an engine alternative (e.g. Chipmunk's tree), or ""
    alternative_backend = ""
    alternative_text = ""

    def backend_params(self, values: dict, frame: LevelFrame) -> dict:
        """Our backend's parameters for knob ``values`` on ``frame``."""
        raise NotImplementedError

    def derived(self, frame: LevelFrame) -> list[Derived]:
        """Values computed from the level, written beside the knobs."""
        return []

    def engine_share(self) -> float:
        """The share of a tuning budget that :meth:`refine_in_engine` gets (the model's search
        gets the rest): 0 unless the engine runs in this process."""
        return 0.0

    def refine_in_engine(self, settings: EngineSettings, workload: Any, budget_s: float,
                         held: frozenset[str] = frozenset()) -> None:
        """Settle the knobs by timing the engine itself, when it runs in this process: the
        model's pick and the engine's documented starting point, and around them (the profile
        changes ``settings.values`` and says what it measured in ``settings.notes``), within
        ``budget_s``; knobs named in ``held`` keep their values. By default the engine does not
        run here and the model's pick stands."""

    def measure_in_engine(self, settings: EngineSettings, workload: Any) -> dict | None:
        """Time the tuned knobs against the alternative in the engine itself, when the engine can
        run in this process (None: it cannot, the model's comparison stands)."""
        return None

    def render(self, settings: EngineSettings) -> str:
        """The engine's configuration text for ``settings``."""
        raise NotImplementedError

    # ---------------------------------------------------------------- helpers
    def knob(self, key: str) -> Knob:
        return next(k for k in self.knobs if k.key == key)

    def defaults(self) -> dict:
        """The values the model measures as the engine's defaults."""
        return {k.key: k.start for k in self.knobs}

    def describe(self) -> dict:
        """JSON-ready description: knobs, sources, what is not modelled."""
        return {"name": self.name, "title": self.title, "version": self.version,
                "backend": self.backend, "syntax": self.syntax,
                "knobs": [dataclasses.asdict(k) for k in self.knobs],
                "not_modelled": list(self.not_modelled)}


def knob_params_class(profile: EngineProfile) -> type:
    """A frozen ``Params`` dataclass with one :func:`~spatial.params.param` field per knob."""
    fields = []
    for k in profile.knobs:
        kind = type(k.start)
        spec = param(k.start, lo=k.lo, hi=k.hi, unit=k.unit, help=f"{k.name}: {k.help}",
                     choices=k.choices, scale=k.scale, tunable=k.tunable)
        fields.append((k.key, kind, spec))
    return dataclasses.make_dataclass(f"{profile.name.capitalize()}Knobs", fields, frozen=True)


def engine_index_class(profile: EngineProfile, frame: LevelFrame,
                       base: type[SpatialIndex]) -> type[SpatialIndex]:
    """``base`` (the profile's backend class) with the profile's knobs as its ``Params``.

    Constructed with knob values (engine units), it builds ``base`` with
    :meth:`EngineProfile.backend_params` for ``frame``; the memory estimate translates the same
    way. Everything else — build, queries, counters — is ``base``'s own.
    """
    knobs_cls = knob_params_class(profile)

    def translate(params: Any) -> Any:
        if not isinstance(params, knobs_cls):
            return params
        return parse_params(base.Params, profile.backend_params(params_to_dict(params), frame))

    def __init__(self, params: Any = None, **overrides: Any) -> None:
        if params is None:
            params = knobs_cls()
        elif isinstance(params, dict):
            params = parse_params(knobs_cls, params)
        if overrides:
            params = parse_params(knobs_cls, overrides, base=params)
        self.engine_params = params
        # the base validates its own parameters against its own Params
        self.Params = base.Params
        base.__init__(self, translate(params))

    def worst_case_bytes(cls: type, params: Any, lo: Any, hi: Any) -> float | None:
        return base.worst_case_bytes(translate(params), lo, hi)

    namespace = {"Params": knobs_cls, "name": profile.name, "__init__": __init__,
                 "worst_case_bytes": classmethod(worst_case_bytes), "param_variants": [],
                 "description": f"{profile.title} modelled by our {base.name}"}
    return type(f"{profile.name.capitalize()}Model", (base,), namespace)
