"""NVIDIA PhysX 5: the broad phase (PxSceneDesc::broadPhaseType, MBP regions) and scene queries.

The knob with a spatial meaning is the multi-box-pruning region grid:
``PxBroadPhaseExt::createRegionsFromWorldBounds(regions, worldBounds, nbSubdiv, upAxis)`` cuts
the world bounds into ``nbSubdiv x nbSubdiv`` regions on the ground plane, each a sweep and
prune. Modelled by our ``grid`` backend (uniform cells of one region's size) with
``broadPhaseType`` held at ``eMBP`` — the only type with regions; SAP, ABP and PABP have no
spatial setting. The scene-query settings (PxSceneQueryDesc, which PxSceneDesc extends) are
the engine's own knobs too, written at their defaults: our model has no counterpart for them.
"""
from __future__ import annotations

from .profile import Derived, EngineProfile, EngineSettings, Knob, LevelFrame
from .regions import region_cell
from .text import fmt, header_lines, knob_note

SCENE_DESC_H = "PhysX 5 include/PxSceneDesc.h (broadPhaseType, Default: PxBroadPhaseType::eABP)"
BROADPHASE_H = ("PhysX 5 include/PxBroadPhase.h, PxBroadPhaseRegion: 'a good default setup is to "
                "... subdivide these bounds into 4*4 regions'; limited by PxBroadPhaseCaps::mMaxNbRegions")
EXT_H = ("PhysX 5 include/extensions/PxBroadPhaseExt.h: "
         "createRegionsFromWorldBounds(regions, globalBounds, nbSubdiv, upAxis)")
SQ_DESC_H = "PhysX 5 include/PxSceneQueryDesc.h (PxSceneQueryDesc constructor defaults)"
BROADPHASE_TYPES = ("eSAP", "eMBP", "eABP", "ePABP", "eGPU")
PRUNING = ("eNONE", "eDYNAMIC_AABB_TREE", "eSTATIC_AABB_TREE")
BUILD = ("eFAST", "eDEFAULT", "eSAH")


class PhysxProfile(EngineProfile):
    name = "physx"
    title = "NVIDIA PhysX"
    version = "5.x"
    backend = "grid"
    syntax = "C++ (PxSceneDesc)"
    suffix = ".h"
    knobs = (
        Knob("broadPhaseType", "PxSceneDesc::broadPhaseType", "eABP", "choice",
             "broad-phase algorithm; only eMBP has regions to tune", SCENE_DESC_H,
             choices=BROADPHASE_TYPES, tunable=False, baseline="eMBP"),
        Knob("nbSubdiv", "nbSubdiv (createRegionsFromWorldBounds)", None, "regions per axis",
             "MBP regions per ground axis (nbSubdiv x nbSubdiv regions); searched 1-16 "
             "(256 regions) — check PxBroadPhaseCaps::mMaxNbRegions", f"{EXT_H}; {BROADPHASE_H}",
             lo=1, hi=16, baseline=4),
        Knob("staticStructure", "PxSceneDesc::staticStructure", "eDYNAMIC_AABB_TREE", "choice",
             "pruning structure of static actors", SQ_DESC_H, choices=PRUNING, tunable=False),
        Knob("dynamicStructure", "PxSceneDesc::dynamicStructure", "eDYNAMIC_AABB_TREE", "choice",
             "pruning structure of dynamic actors", SQ_DESC_H, choices=PRUNING, tunable=False),
        Knob("dynamicTreeRebuildRateHint", "PxSceneDesc::dynamicTreeRebuildRateHint", 100, "frames",
             "frames a dynamic-tree rebuild is spread over; range [4, PX_MAX_U32)", SQ_DESC_H,
             lo=4, hi=4294967294, tunable=False),
        Knob("staticNbObjectsPerNode", "PxSceneDesc::staticNbObjectsPerNode", 4, "objects",
             "objects per leaf of the static tree", SQ_DESC_H, lo=1, hi=4294967295, tunable=False),
        Knob("dynamicNbObjectsPerNode", "PxSceneDesc::dynamicNbObjectsPerNode", 4, "objects",
             "objects per leaf of the dynamic tree", SQ_DESC_H, lo=1, hi=4294967295, tunable=False),
        Knob("staticBVHBuildStrategy", "PxSceneDesc::staticBVHBuildStrategy", "eFAST", "choice",
             "build strategy of the static tree", SQ_DESC_H, choices=BUILD, tunable=False),
        Knob("dynamicBVHBuildStrategy", "PxSceneDesc::dynamicBVHBuildStrategy", "eFAST", "choice",
             "build strategy of the dynamic tree", SQ_DESC_H, choices=BUILD, tunable=False),
    )
    not_modelled = (
        "eSAP, eABP, ePABP and eGPU (no spatial setting); the model measures eMBP",
        "the scene-query trees (PxSceneQueryDesc): written at their defaults",
    )

    def backend_params(self, values: dict, frame: LevelFrame) -> dict:
        return {"mode": "uniform", "cell_size": region_cell(frame, values["nbSubdiv"])}

    def derived(self, frame: LevelFrame) -> list[Derived]:
        lo = [frame.to_engine(v, "m") for v in frame.world_lo]
        hi = [frame.to_engine(v, "m") for v in frame.world_hi]
        return [Derived("worldBounds", [lo, hi], "m", "the level's bounds (globalBounds of the regions)"),
                Derived("upAxis", frame.up_axis, "axis", "the level's up axis (0 x, 1 y, 2 z)")]

    def render(self, settings: EngineSettings) -> str:
        v = settings.values
        bounds, up = self.derived(settings.frame)
        lo, hi = bounds.value
        vec = lambda p: ", ".join(f"{fmt(float(x))}f" for x in p)  # noqa: E731
        out = [f"// {line}" for line in header_lines(settings)]
        out.append("physx::PxSceneDesc sceneDesc(physics->getTolerancesScale());")
        for key in ("broadPhaseType", "staticStructure", "dynamicStructure", "staticBVHBuildStrategy",
                    "dynamicBVHBuildStrategy"):
            knob = self.knob(key)
            enum = {"broadPhaseType": "PxBroadPhaseType", "staticStructure": "PxPruningStructureType",
                    "dynamicStructure": "PxPruningStructureType"}.get(key, "PxBVHBuildStrategy")
            out.append(f"// {knob_note(settings, knob)}")
            out.append(f"sceneDesc.{key} = physx::{enum}::{v[key]};")
        for key in ("dynamicTreeRebuildRateHint", "staticNbObjectsPerNode", "dynamicNbObjectsPerNode"):
            out.append(f"// {knob_note(settings, self.knob(key))}")
            out.append(f"sceneDesc.{key} = {int(v[key])};")
        out.append(f"// {knob_note(settings, self.knob('nbSubdiv'))}")
        out.append(f"const physx::PxU32 nbSubdiv = {int(v['nbSubdiv'])};")
        out.append(f"// world bounds: {bounds.note}, metres; upAxis: {up.note}")
        out.append(f"const physx::PxBounds3 worldBounds(physx::PxVec3({vec(lo)}), physx::PxVec3({vec(hi)}));")
        out.append(f"const physx::PxU32 upAxis = {int(up.value)};")
        out.append("// after createScene(sceneDesc):")
        out.append("physx::PxBounds3 regionBounds[256];")
        out.append("const physx::PxU32 nbRegions = physx::PxBroadPhaseExt::createRegionsFromWorldBounds("
                   "regionBounds, worldBounds, nbSubdiv, upAxis);")
        out.append("for (physx::PxU32 i = 0; i < nbRegions; i++) { physx::PxBroadPhaseRegion region; "
                   "region.mBounds = regionBounds[i]; region.mUserData = nullptr; "
                   "scene->addBroadPhaseRegion(region); }")
        return "\n".join(out) + "\n"


PROFILE = PhysxProfile()
