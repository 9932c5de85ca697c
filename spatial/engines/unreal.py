"""Unreal Engine (Chaos): the AABB tree's console variables, for DefaultEngine.ini.

Chaos builds its acceleration structure from console variables declared in
PBDRigidsEvolution.cpp: ``p.BroadphaseType`` (1: AABB tree with leaf arrays),
``p.MaxChildrenInLeaf`` (5), ``p.MaxTreeDepth`` (200), and for the other tree types
``p.AABBMaxChildrenInLeaf`` (500), ``p.AABBMaxTreeDepth`` (200), ``p.BoundingVolumeNumCells``
(35), ``p.MaxPayloadSize`` (20000). Modelled by our ``kdtree`` (``leaf_size`` = children in a
leaf, ``max_depth`` = tree depth, capped at its 64 levels). Lengths are centimetres.
"""
from __future__ import annotations

from .profile import EngineProfile, EngineSettings, Knob, LevelFrame
from .text import fmt, header_lines, knob_note

EVOLUTION = ("Unreal Engine Engine/Source/Runtime/Experimental/Chaos/Private/Chaos/PBDRigidsEvolution.cpp "
             "(FAutoConsoleVariableRef declarations and defaults, 4.26)")
#: our kd-tree's deepest tree; deeper Chaos limits behave the same in the model
KDTREE_MAX_DEPTH = 64


class UnrealProfile(EngineProfile):
    name = "unreal"
    title = "Unreal Engine Chaos"
    version = "4.26+ / 5.x"
    backend = "kdtree"
    syntax = "DefaultEngine.ini [ConsoleVariables]"
    suffix = ".ini"
    knobs = (
        Knob("max_children_in_leaf", "p.MaxChildrenInLeaf", 5, "objects",
             "objects a leaf of the AABB tree holds before it splits", EVOLUTION, lo=1, hi=4096,
             scale="log"),
        Knob("max_tree_depth", "p.MaxTreeDepth", 200, "levels", "deepest level of the AABB tree",
             EVOLUTION, lo=1, hi=1024),
        Knob("broadphase_type", "p.BroadphaseType", 1, "type",
             "0 bounding volume grid, 1 AABB tree of leaf arrays, 2 AABB tree of grids", EVOLUTION,
             lo=0, hi=2, tunable=False),
        Knob("aabb_max_children_in_leaf", "p.AABBMaxChildrenInLeaf", 500, "objects",
             "children per leaf of the tree of grids (p.BroadphaseType 2)", EVOLUTION, lo=1,
             tunable=False),
        Knob("aabb_max_tree_depth", "p.AABBMaxTreeDepth", 200, "levels",
             "depth of the tree of grids (p.BroadphaseType 2)", EVOLUTION, lo=1, tunable=False),
        Knob("bounding_volume_num_cells", "p.BoundingVolumeNumCells", 35, "cells",
             "cells per axis of the bounding-volume grid (types 0 and 2)", EVOLUTION, lo=1,
             tunable=False),
        Knob("max_payload_size", "p.MaxPayloadSize", 20000, "cm",
             "objects larger than this go to a global list instead of the tree", EVOLUTION, lo=0,
             tunable=False),
    )
    not_modelled = (
        "p.BroadphaseType 0 and 2 (grids): the model measures the AABB tree of leaf arrays (1)",
        "p.MaxPayloadSize's global list of large objects",
        "console variable names differ between engine versions: check them with the console's "
        "help before pasting",
    )

    def backend_params(self, values: dict, frame: LevelFrame) -> dict:
        return {"leaf_size": int(values["max_children_in_leaf"]),
                "max_depth": min(int(values["max_tree_depth"]), KDTREE_MAX_DEPTH)}

    def render(self, settings: EngineSettings) -> str:
        # Unreal's ini reader has no trailing comments: every note is a line of its own
        out = [f"; {line}" for line in header_lines(settings)]
        out.append("[ConsoleVariables]")
        for knob in self.knobs:
            out.append(f"; {knob_note(settings, knob)}")
            out.append(f"{knob.name}={fmt(settings.values[knob.key])}")
        return "\n".join(out) + "\n"


PROFILE = UnrealProfile()
