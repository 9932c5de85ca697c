"""Box2D (2.4 and 3.x): no runtime broad-phase knob; the fat-AABB margin is compile-time.

Box2D's broad phase is a dynamic AABB tree whose proxies are fattened by ``b2_aabbMargin``
(``0.1f * b2_lengthUnitsPerMeter`` metres, b2_common.h in 2.4; ``B2_AABB_MARGIN`` in 3.x), a
``#define``. Modelled by our ``bvh`` (its Box2D-style dynamic tree) with that absolute margin;
nothing is searched, the output records the constant and the measured cost.
"""
from __future__ import annotations

from .profile import Derived, EngineProfile, EngineSettings, Knob, LevelFrame
from .text import fmt, header_lines, knob_note

COMMON_H = "Box2D 2.4 include/box2d/b2_common.h: #define b2_aabbMargin (0.1f * b2_lengthUnitsPerMeter)"
SETTINGS_H = "Box2D 2.4 include/box2d/b2_settings.h: b2_lengthUnitsPerMeter (default 1.0)"


class Box2dProfile(EngineProfile):
    name = "box2d"
    title = "Box2D"
    version = "2.4 / 3.x"
    backend = "bvh"
    syntax = "C (compile-time definitions)"
    suffix = ".h"
    knobs = (
        Knob("aabb_margin", "b2_aabbMargin", 0.1, "m",
             "fat-AABB margin of the dynamic tree's proxies (moves within it need no tree update)",
             COMMON_H, lo=0.0, hi=10.0, tunable=False, runtime=False),
    )
    not_modelled = ("b2_aabbMargin is a compile-time constant: Box2D has no runtime broad-phase "
                    "setting to tune",)

    def backend_params(self, values: dict, frame: LevelFrame) -> dict:
        return {"margin_mode": "absolute",
                "margin": frame.to_level(float(values["aabb_margin"]), "m")}

    def derived(self, frame: LevelFrame) -> list[Derived]:
        return [Derived("b2_lengthUnitsPerMeter", frame.units_per_metre, "level units per metre",
                        f"if the level's units are used as Box2D lengths ({SETTINGS_H}; "
                        "b2SetLengthUnitsPerMeter in 3.x)")]

    def render(self, settings: EngineSettings) -> str:
        margin = float(settings.values["aabb_margin"])
        units = self.derived(settings.frame)[0]
        out = [f"/* {line} */" for line in header_lines(settings)]
        out.append(f"/* {knob_note(settings, self.knob('aabb_margin'))} */")
        out.append(f"#define b2_aabbMargin ({fmt(margin)}f * b2_lengthUnitsPerMeter)")
        out.append(f"/* {units.name}: {units.note} */")
        out.append(f"#define b2_lengthUnitsPerMeter {fmt(float(units.value))}f")
        return "\n".join(out) + "\n"


PROFILE = Box2dProfile()
