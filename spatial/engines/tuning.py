"""Tune an engine profile on a workload and keep the result as the engine's settings.

:func:`tune_engine` searches the profile's knobs with :func:`spatial.tuner.tune` through the
profile's model backend (:func:`~.profile.engine_index_class`): trial 0 is the engine's
defaults, ties resolve towards them, and the plateau says which knobs made no difference.
When the profile names an alternative structure (Chipmunk's tree beside its hash), its
defaults are measured on the same workload, and the settings say which one to use. An engine
that runs in this process (Chipmunk through pymunk) then settles its knobs on its own timing
(:meth:`~.profile.EngineProfile.refine_in_engine`), with its share of the budget
(:meth:`~.profile.EngineProfile.engine_share`; the model's search gets the rest, so the whole
stays within ``budget_s``): the model proposes, the engine has the last word.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..backend_lookup import backend_class
from ..cost import CostWeights, Workload, measure
from ..params import parse_params
from ..tuner import TuneOptions, TuneResult, tune
from .profile import EngineProfile, EngineSettings, LevelFrame, engine_index_class


class EngineTuningError(ValueError):
    """The engine's defaults could not be measured (budget too small, backend failure)."""


@dataclass
class EngineTuning:
    """The tuned settings and the search that found them."""

    settings: EngineSettings
    result: TuneResult

    def render(self) -> str:
        return self.settings.profile.render(self.settings)

    def as_dict(self) -> dict:
        s = self.settings
        knobs = {k.key: {"name": k.name, "value": s.values[k.key], "default": k.default,
                         "unit": k.unit, "tuned": k.tunable or k.engine_tuned, "source": k.source}
                 for k in s.profile.knobs}
        return {"engine": s.profile.name, "backend": s.profile.backend, "knobs": knobs,
                "derived": [{"name": d.name, "value": d.value, "unit": d.unit, "note": d.note}
                            for d in s.profile.derived(s.frame)],
                "cost": s.cost, "default_cost": s.default_cost, "improvement": s.gain,
                "plateau": s.plateau, "notes": s.notes, "alternative_cost": s.alternative_cost,
                "engine_run": s.engine_run, "prefer_alternative": s.prefer_alternative,
                "units_per_metre": s.frame.units_per_metre, "trials": len(self.result.trials),
                "stop_reason": self.result.stop_reason}


def profile_for(profile: EngineProfile, frame: LevelFrame) -> EngineProfile:
    """``profile`` with any starting value that depends on the level filled in."""
    with_frame = getattr(profile, "with_frame", None)
    return with_frame(frame) if callable(with_frame) else profile


def tune_engine(profile: EngineProfile, workload: Workload, frame: LevelFrame,
                options: TuneOptions | None = None, *, cancel: Any = None, on_trial: Any = None,
                registry: Any = None, source: str = "", **settings: Any) -> EngineTuning:
    """Search ``profile``'s knobs on ``workload`` (see the module docstring).

    ``options``/``settings`` are those of :func:`spatial.tuner.tune`. Raises
    :class:`EngineTuningError` when not even the defaults could be measured.
    """
    began = time.perf_counter()
    profile = profile_for(profile, frame)
    options = (options or TuneOptions()).with_settings(**settings)
    model = engine_index_class(profile, frame, backend_class(profile.backend, registry))
    # an engine that runs here gets its share of the budget; the model's search the rest
    engine_budget = options.budget_s * profile.engine_share()
    model_options = options.with_settings(budget_s=options.budget_s - engine_budget)
    result = tune(model, workload, model_options, cancel=cancel, on_trial=on_trial)
    if result.best is None or result.defaults is None or result.defaults.cost is None:
        first = result.trials[0] if result.trials else None
        why = f"{first.status}: {first.message}" if first else result.stop_reason
        raise EngineTuningError(f"{profile.name}: the engine's defaults could not be measured "
                                f"within {options.budget_s:g} s ({why})")
    chosen = EngineSettings(profile, frame, dict(result.best.params), result.best.cost,
                            result.defaults.cost, _engine_plateau(profile, result.plateau),
                            source=source)
    if profile.alternative_backend:
        _measure_alternative(chosen, workload, options.weights or CostWeights(), registry)
    if not (cancel is not None and cancel.cancelled):
        picked = dict(chosen.values)
        if engine_budget:  # what the budget has left, less one model measurement for the cost
            left = options.budget_s - (time.perf_counter() - began) - result.defaults.seconds
            profile.refine_in_engine(chosen, workload, max(left, 0.0),
                                     held=frozenset(options.fixed or ()))
        if chosen.values != picked:  # the engine kept other values: their model cost, too
            params = parse_params(model.Params, chosen.values)
            chosen.cost = measure(model, params, workload, options.weights or CostWeights(),
                                  all_pairs=False).cost
            changed = {k for k in picked if picked[k] != chosen.values[k]}
            chosen.plateau = [e for e in chosen.plateau if e["name"] not in changed]
            chosen.notes += [f"the model's {'pick' if profile.knob(k).tunable else 'starting value'} "
                             f"{profile.knob(k).name} = {picked[k]:.6g} was replaced by the "
                             f"engine's own timing" for k in sorted(changed)]
        _run_in_engine(chosen, workload)
    return EngineTuning(chosen, result)


def _run_in_engine(chosen: EngineSettings, workload: Workload) -> None:
    """The engine's own timing, when it runs here; it decides the advice over the model's."""
    run = chosen.profile.measure_in_engine(chosen, workload)
    if run is None:
        return
    chosen.engine_run = run
    text = chosen.profile.alternative_text
    verdict = (f"recommended: {text} (the tuned knobs are not clearly faster); the tuned call is "
               "written disabled" if chosen.prefer_alternative else "the tuned knobs are faster")
    chosen.notes.append(f"measured in the engine ({run['steps']} steps each): default "
                        f"{run['tree_ms']:.3f} ms/step, tuned {run['hash_ms']:.3f} ms/step: {verdict}")


def _engine_plateau(profile: EngineProfile, plateau: list[dict]) -> list[dict]:
    """The tuner's plateau entries with the engine's own knob names in their sentences."""
    out = []
    for entry in plateau:
        name = profile.knob(entry["name"]).name
        out.append({**entry, "knob": name, "text": entry["text"].replace(entry["name"], name, 1)})
    return out


def _measure_alternative(chosen: EngineSettings, workload: Workload, weights: CostWeights,
                         registry: Any) -> None:
    """Cost the profile's alternative structure at its defaults and say which one to use."""
    cls = backend_class(chosen.profile.alternative_backend, registry)
    cost = measure(cls, cls.Params(), workload, weights, all_pairs=False).cost
    chosen.alternative_cost = cost
    text = chosen.profile.alternative_text
    if chosen.alternative_cost < (chosen.cost or 0.0):
        chosen.notes.append(f"model: {text} (cost {cost:.1f}) beats the tuned knobs "
                            f"(cost {chosen.cost:.1f})")
    else:
        chosen.notes.append(f"model: {text} costs {cost:.1f}, the tuned knobs {chosen.cost:.1f}")


def default_settings(profile: EngineProfile, frame: LevelFrame, source: str = "") -> EngineSettings:
    """The engine's defaults as settings (nothing measured), e.g. to show or export untuned."""
    profile = profile_for(profile, frame)
    return EngineSettings(profile, frame, profile.defaults(), source=source)
