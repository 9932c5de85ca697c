"""Shared wording of every engine's output: the provenance header and each value's comment."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .profile import EngineSettings, Knob


def fmt(value: object) -> str:
    """A value as the engine's text wants it: floats short and exact enough, others as is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def header_lines(settings: EngineSettings) -> list[str]:
    """What every output starts with (the caller adds its comment marker)."""
    p, f = settings.profile, settings.frame
    lines = [f"{p.title} ({p.version}) settings tuned by Partition Studio",
             f"level: {settings.source or 'unnamed'} ({f.objects} objects)",
             f"units: 1 m = {f.units_per_metre:g} level units; up axis: {'xyz'[f.up_axis]}",
             f"modelled as our {p.backend} backend; cost per frame "
             + (f"{settings.cost:.1f} (engine defaults {settings.default_cost:.1f}): {settings.gain_text()}"
                if settings.cost is not None and settings.default_cost is not None else "not measured")]
    lines += [f"no difference: {entry['text']}" for entry in settings.plateau]
    lines += settings.notes
    lines += [f"not modelled: {text}" for text in p.not_modelled]
    return lines


def knob_note(settings: EngineSettings, knob: Knob) -> str:
    """``default X [unit]; tuned|not tuned ...; source`` for one knob's line."""
    unit = "" if knob.unit in ("", "choice") else f" {knob.unit}"
    default = fmt(knob.default) if knob.default is not None else "none"
    parts = [f"{knob.name}: engine default {default}{unit}"]
    if knob.baseline is not None and knob.baseline != knob.default:
        parts.append(f"model baseline {fmt(knob.baseline)}{unit}")
    if not knob.runtime:
        parts.append("compile-time constant")
    if not knob.tunable and knob.engine_tuned:
        parts.append("tuned in the engine itself (the model has no counterpart)")
    elif not knob.tunable:
        parts.append("not tuned (the model has no counterpart)" if knob.runtime else "not tuned")
    else:
        plateau = settings.plateau_of(knob.key)
        parts.append(f"tuned: {plateau}" if plateau else "tuned")
    parts.append(f"source: {knob.source}")
    return "; ".join(parts)
