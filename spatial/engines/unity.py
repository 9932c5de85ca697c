"""Unity (built-in 3D physics, PhysX): Physics settings' broadphase type, world bounds, subdivisions.

Project Settings > Physics: *Broadphase Type* (Sweep and Prune, Multibox Pruning, Automatic Box
Pruning), *World Bounds* and *World Subdivisions* — the last two used by Multibox Pruning, which
cuts the bounds into a grid of cells on the XZ plane (Physics.RebuildBroadphaseRegions). Stored in
ProjectSettings/DynamicsManager.asset as ``m_BroadphaseType``, ``m_WorldBounds`` (centre and
extent) and ``m_WorldSubdivisions``. Modelled by our ``grid`` (cells of one region's size) with
the type held at Multibox Pruning; the world bounds are derived from the level (metres, Unity's
Y up: the level's up axis becomes Y).
"""
from __future__ import annotations

from .profile import Derived, EngineProfile, EngineSettings, Knob, LevelFrame
from .regions import region_cell
from .text import fmt, header_lines, knob_note

REBUILD_DOC = ("Unity Scripting API, Physics.RebuildBroadphaseRegions(worldBounds, subdivisions): "
               "'How many cells to create along x and z axis'; effective with Multibox Pruning")
ASSET = ("ProjectSettings/DynamicsManager.asset defaults: m_BroadphaseType: 0, m_WorldBounds centre 0 "
         "extent 250, m_WorldSubdivisions: 8")
#: m_BroadphaseType values
TYPES = {"SweepAndPruneBroadphase": 0, "MultiboxPruningBroadphase": 1, "AutomaticBoxPruning": 2}


class UnityProfile(EngineProfile):
    name = "unity"
    title = "Unity Physics (PhysX)"
    version = "2019.3+ / Unity 6"
    backend = "grid"
    syntax = "YAML (ProjectSettings/DynamicsManager.asset)"
    suffix = ".asset"
    knobs = (
        Knob("m_BroadphaseType", "m_BroadphaseType (Broadphase Type)", "SweepAndPruneBroadphase",
             "choice", "broad-phase algorithm; world subdivisions apply to Multibox Pruning", ASSET,
             choices=tuple(TYPES), tunable=False, baseline="MultiboxPruningBroadphase"),
        Knob("m_WorldSubdivisions", "m_WorldSubdivisions (World Subdivisions)", 8, "cells per axis",
             "cells along x and z of the world bounds; searched 1-16", f"{REBUILD_DOC}; {ASSET}",
             lo=1, hi=16),
    )
    not_modelled = (
        "Sweep and Prune and Automatic Box Pruning (no spatial setting); the model measures "
        "Multibox Pruning",
        "Unity 6 marks Multibox Pruning obsolete in favour of Automatic Box Pruning "
        "(Physics.RebuildBroadphaseRegions docs)",
    )

    def backend_params(self, values: dict, frame: LevelFrame) -> dict:
        return {"mode": "uniform", "cell_size": region_cell(frame, values["m_WorldSubdivisions"])}

    def derived(self, frame: LevelFrame) -> list[Derived]:
        # Unity is Y-up: (level x, level up, the remaining axis)
        other = next(a for a in (1, 0, 2) if a not in (0, frame.up_axis))
        order = (0, frame.up_axis, other)
        centre = [frame.to_engine((frame.world_lo[a] + frame.world_hi[a]) / 2, "m") for a in order]
        extent = [frame.to_engine((frame.world_hi[a] - frame.world_lo[a]) / 2, "m") for a in order]
        return [Derived("m_WorldBounds", {"m_Center": centre, "m_Extent": extent}, "m",
                        "the level's bounds (centre and half size), level up axis as Y")]

    def render(self, settings: EngineSettings) -> str:
        v = settings.values
        bounds = self.derived(settings.frame)[0].value
        def xyz(p: list) -> str:
            x, y, z = (fmt(float(c)) for c in p)
            return f"{{x: {x}, y: {y}, z: {z}}}"
        out = [f"# {line}" for line in header_lines(settings)]
        out.append("# Merge these keys into the PhysicsManager block of ProjectSettings/DynamicsManager.asset.")
        out.append(f"# {knob_note(settings, self.knob('m_BroadphaseType'))}")
        out.append(f"# {knob_note(settings, self.knob('m_WorldSubdivisions'))}")
        out.append("# m_WorldBounds: the level's bounds in metres (engine default centre 0, extent 250)")
        out.append("%YAML 1.1")
        out.append("%TAG !u! tag:unity3d.com,2011:")
        out.append("--- !u!55 &1")
        out.append("PhysicsManager:")
        out.append(f"  m_BroadphaseType: {TYPES[v['m_BroadphaseType']]}")
        out.append("  m_WorldBounds:")
        out.append(f"    m_Center: {xyz(bounds['m_Center'])}")
        out.append(f"    m_Extent: {xyz(bounds['m_Extent'])}")
        out.append(f"  m_WorldSubdivisions: {int(v['m_WorldSubdivisions'])}")
        return "\n".join(out) + "\n"


PROFILE = UnityProfile()
