"""Read each engine's settings text back, the way that engine's own reader would see it.

One function per engine, returning ``{knob key: value}`` for the values the file sets; tests
compare them with what the tuner chose, so a writer that drops, renames or mangles a value
fails.
"""
from __future__ import annotations

import configparser
import re

NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def _ini(text: str) -> configparser.ConfigParser:
    # Unreal's and Godot's ini dialects: '=' only, ';' comments on their own lines, keys kept as is
    parser = configparser.ConfigParser(delimiters=("=",), comment_prefixes=(";",),
                                       inline_comment_prefixes=None, strict=True, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    return parser


def physx(text: str) -> dict:
    out: dict = {}
    for key, value in re.findall(r"^sceneDesc\.(\w+) = (?:physx::\w+::)?(\w+);$", text, re.M):
        out[key] = int(value) if value.isdigit() else value
    out["nbSubdiv"] = int(re.search(r"^const physx::PxU32 nbSubdiv = (\d+);$", text, re.M).group(1))
    bounds = re.search(r"worldBounds\(physx::PxVec3\((.*?)\), physx::PxVec3\((.*?)\)\);", text)
    out["worldBounds"] = [[float(v.rstrip("f")) for v in part.split(", ")] for part in bounds.groups()]
    return out


def unity(text: str) -> dict:
    block = text[text.index("PhysicsManager:"):]
    types = {0: "SweepAndPruneBroadphase", 1: "MultiboxPruningBroadphase", 2: "AutomaticBoxPruning"}
    vec = r"\{x: (" + NUMBER + r"), y: (" + NUMBER + r"), z: (" + NUMBER + r")\}"
    return {"m_BroadphaseType": types[int(re.search(r"^  m_BroadphaseType: (\d+)$", block, re.M).group(1))],
            "m_WorldSubdivisions": int(re.search(r"^  m_WorldSubdivisions: (\d+)$", block, re.M).group(1)),
            "m_Center": [float(v) for v in re.search(r"m_Center: " + vec, block).groups()],
            "m_Extent": [float(v) for v in re.search(r"m_Extent: " + vec, block).groups()]}


def unreal(text: str) -> dict:
    section = _ini(text)["ConsoleVariables"]
    return {name: float(value) for name, value in section.items()}


def godot(text: str) -> dict:
    section = _ini(text)["physics"]
    return {"bvh_collision_margin": float(section["3d/godot_physics/bvh_collision_margin"])}


def bullet(text: str) -> dict:
    margin = re.search(r"^gDbvtMargin = btScalar\((" + NUMBER + r")\);", text, re.M).group(1)
    return {"dbvt_margin": float(margin)}


def chipmunk(text: str) -> dict:
    found = re.search(r"cpSpaceUseSpatialHash\(space, (" + NUMBER + r"), (\d+)\);", text)
    pymunk = re.search(r"space\.use_spatial_hash\((" + NUMBER + r"), (\d+)\)", text)
    assert found.groups() == pymunk.groups(), "the C call and the pymunk call disagree"
    return {"dim": float(found.group(1)), "count": int(found.group(2)),
            "enabled": not found.group(0).startswith("/*") and
            not re.search(r"^/\* cpSpaceUseSpatialHash", text, re.M)}


def box2d(text: str) -> dict:
    margin = re.search(r"^#define b2_aabbMargin \((" + NUMBER + r")f \* b2_lengthUnitsPerMeter\)$", text, re.M)
    units = re.search(r"^#define b2_lengthUnitsPerMeter (" + NUMBER + r")f$", text, re.M)
    return {"aabb_margin": float(margin.group(1)), "b2_lengthUnitsPerMeter": float(units.group(1))}


PARSERS = {"physx": physx, "unity": unity, "unreal": unreal, "godot": godot, "bullet": bullet,
           "chipmunk": chipmunk, "box2d": box2d}
