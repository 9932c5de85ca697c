"""Godot (GodotPhysics): the BVH broad phase's collision margin, in project.godot.

Godot 3.5's GodotPhysics broad phase is a BVH whose pairing expansion is the project setting
``physics/3d/godot_physics/bvh_collision_margin`` (default 0.1, range hint 0.0-2.0, metres;
the 2D one, ``physics/2d/bvh_collision_margin``, is 1.0 pixels, range 0-20). Modelled by our
``bvh`` with that absolute margin. Godot 4's Jolt module builds its own broad phase and offers
no setting for it that we found; the profile tunes the GodotPhysics one.
"""
from __future__ import annotations

from .profile import EngineProfile, EngineSettings, Knob, LevelFrame
from .text import fmt, header_lines, knob_note

REGISTER = ("Godot 3.x GLOBAL_DEF(\"physics/3d/godot_physics/bvh_collision_margin\", 0.1) with range "
            "hint \"0.0,2.0,0.01\" (read in a Godot 3 derivative's register_server_types.cpp); "
            "2D: GLOBAL_DEF(\"physics/2d/bvh_collision_margin\", 1.0), range 0.0-20.0")
SECTION, KEY = "physics", "3d/godot_physics/bvh_collision_margin"


class GodotProfile(EngineProfile):
    name = "godot"
    title = "Godot Physics"
    version = "3.5 (GodotPhysics 3D)"
    backend = "bvh"
    syntax = "project.godot ([physics] section)"
    suffix = ".godot"
    knobs = (
        Knob("bvh_collision_margin", f"{SECTION}/{KEY}", 0.1, "m",
             "expansion of every BVH leaf for pairing (moves within it need no tree update)",
             REGISTER, lo=0.0, hi=2.0, scale="log"),
    )
    not_modelled = ("Jolt Physics (Godot 4.4+): its broad phase has no project setting",)

    def backend_params(self, values: dict, frame: LevelFrame) -> dict:
        return {"margin_mode": "absolute",
                "margin": frame.to_level(float(values["bvh_collision_margin"]), "m")}

    def render(self, settings: EngineSettings) -> str:
        out = [f"; {line}" for line in header_lines(settings)]
        out.append("; merge into project.godot")
        out.append(f"[{SECTION}]")
        out.append("")
        out.append(f"; {knob_note(settings, self.knob('bvh_collision_margin'))}")
        out.append(f"{KEY}={fmt(float(settings.values['bvh_collision_margin']))}")
        return "\n".join(out) + "\n"


PROFILE = GodotProfile()
