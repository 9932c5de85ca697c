"""Engine profiles: tune a game engine's own broad-phase knobs and write its own settings.

One module per engine (``physx``, ``unity``, ``unreal``, ``godot``, ``bullet``, ``chipmunk``,
``box2d``), each a :class:`~.profile.EngineProfile` named ``PROFILE``; :mod:`.tuning` searches a
profile with :mod:`spatial.tuner` and renders the result. ``docs/engines.md`` lists every knob
and its source. Qt-free, like all of :mod:`spatial`.
"""
from __future__ import annotations

import importlib

from .profile import EngineProfile

#: every engine, in the order ``--engine list`` prints them
ENGINE_NAMES = ("physx", "unity", "unreal", "godot", "bullet", "chipmunk", "box2d")


def engine_profile(name: str) -> EngineProfile:
    """The profile called ``name``; a ``KeyError`` naming the known ones otherwise."""
    if name not in ENGINE_NAMES:
        raise KeyError(f"unknown engine {name!r} (known: {', '.join(ENGINE_NAMES)})")
    profile = importlib.import_module(f"{__name__}.{name}").PROFILE
    if not isinstance(profile, EngineProfile):
        raise TypeError(f"{name}: PROFILE is not an EngineProfile")
    return profile


__all__ = ["ENGINE_NAMES", "EngineProfile", "engine_profile"]
