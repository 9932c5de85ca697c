"""Bullet (2.89+ / 3.x): btDbvtBroadphase's margin, and btAxisSweep3's world bounds.

``btDbvtBroadphase`` keeps two dynamic AABB trees whose leaves are fattened by the global
``gDbvtMargin`` (``btScalar(0.05)`` in btDbvtBroadphase.cpp; a ``DBVT_BP_MARGIN`` define in
older releases). Modelled by our ``bvh`` with that absolute margin, but **not tuned**: Bullet
finds pairs on the fat leaves and visits every cached pair each step, while our ``bvh`` finds
them on the tight boxes, so the model sees what a bigger margin saves (reinsertions) and not
what it costs (pairs); a margin it picked would be a reading of the model, not of Bullet.
``btAxisSweep3(worldAabbMin, worldAabbMax, maxHandles)`` needs world bounds: derived from the
level and written beside it (its sweep-and-prune is not modelled).
"""
from __future__ import annotations

from .profile import Derived, EngineProfile, EngineSettings, Knob, LevelFrame
from .text import fmt, header_lines, knob_note

DBVT_CPP = ("Bullet 3 src/BulletCollision/BroadphaseCollision/btDbvtBroadphase.cpp: "
            "btScalar gDbvtMargin = btScalar(0.05)")
SWEEP_H = ("Bullet 3 src/BulletCollision/BroadphaseCollision/btAxisSweep3.h: "
           "btAxisSweep3(worldAabbMin, worldAabbMax, maxHandles = 16384, ...)")


class BulletProfile(EngineProfile):
    name = "bullet"
    title = "Bullet Physics"
    version = "2.89+ / 3.x"
    backend = "bvh"
    syntax = "C++ (btDbvtBroadphase / btAxisSweep3)"
    suffix = ".h"
    knobs = (
        Knob("dbvt_margin", "gDbvtMargin", 0.05, "m",
             "fat-AABB margin of btDbvtBroadphase's trees (global, set before stepping)",
             DBVT_CPP, lo=0.0, hi=10.0, scale="log", tunable=False),
    )
    not_modelled = (
        "gDbvtMargin is written at Bullet's default, not tuned: Bullet finds pairs on the fat "
        "leaves, the model on tight boxes, so the model sees the reinsertions a bigger margin "
        "saves and not the cached pairs it adds",
        "btDbvtBroadphase's m_prediction, m_dupdates and m_fupdates (incremental update rates)",
        "btAxisSweep3's sweep and prune: only its world bounds are derived",
    )

    def backend_params(self, values: dict, frame: LevelFrame) -> dict:
        return {"margin_mode": "absolute", "margin": frame.to_level(float(values["dbvt_margin"]), "m")}

    def derived(self, frame: LevelFrame) -> list[Derived]:
        lo = [frame.to_engine(v, "m") for v in frame.world_lo]
        hi = [frame.to_engine(v, "m") for v in frame.world_hi]
        handles = max(16384, 2 * frame.objects)
        return [Derived("worldAabbMin", lo, "m", "the level's bounds"),
                Derived("worldAabbMax", hi, "m", "the level's bounds"),
                Derived("maxHandles", handles, "objects",
                        f"default 16384, or twice the level's objects if more ({SWEEP_H})")]

    def render(self, settings: EngineSettings) -> str:
        margin = float(settings.values["dbvt_margin"])
        lo, hi, handles = self.derived(settings.frame)
        vec = lambda v: ", ".join(f"btScalar({fmt(float(x))})" for x in v)  # noqa: E731
        out = [f"// {line}" for line in header_lines(settings)]
        out.append(f"// {knob_note(settings, self.knob('dbvt_margin'))}")
        out.append("extern btScalar gDbvtMargin;")
        out.append(f"gDbvtMargin = btScalar({fmt(margin)});  // metres")
        out.append("btBroadphaseInterface* broadphase = new btDbvtBroadphase();")
        out.append(f"// btAxisSweep3 instead: world bounds of the level in metres; {handles.note}")
        out.append(f"const btVector3 worldAabbMin({vec(lo.value)});")
        out.append(f"const btVector3 worldAabbMax({vec(hi.value)});")
        out.append(f"// btBroadphaseInterface* broadphase = new btAxisSweep3(worldAabbMin, worldAabbMax, "
                   f"{handles.value});")
        return "\n".join(out) + "\n"


PROFILE = BulletProfile()
