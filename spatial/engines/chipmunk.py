"""Chipmunk2D (7.x) and pymunk: the spatial hash of ``cpSpaceUseSpatialHash(space, dim, count)``.

Chipmunk's default index is a bounding-box tree (cpBBTree) that "requires no tuning"; the only
index knob is switching a space to the spatial hash with a cell size ``dim`` and a minimum
table size ``count``. Modelled by our ``grid`` backend in hash mode (``cell_size = dim``); the
tree is modelled by our ``bvh`` and measured beside it, so the output says when the tree is the
better choice. Chipmunk has no unit of length: ``dim`` is in the level's own units, the units a
space built from the level's coordinates uses.
"""
from __future__ import annotations

import statistics
from typing import Any

from .profile import ENGINE_NOISE, Derived, EngineProfile, EngineSettings, Knob, LevelFrame
from .text import fmt, header_lines, knob_note

PYMUNK_DOC = "pymunk 7.x pymunk/space.py, Space.use_spatial_hash docstring"
CHIPMUNK_H = "Chipmunk2D 7.0 include/chipmunk/chipmunk_structs.h / cpSpace.h: cpSpaceUseSpatialHash"


class ChipmunkProfile(EngineProfile):
    name = "chipmunk"
    title = "Chipmunk2D / pymunk"
    version = "Chipmunk2D 7.0, pymunk 7"
    backend = "grid"
    syntax = "C (cpSpaceUseSpatialHash) with the pymunk call beside it"
    suffix = ".c"
    alternative_backend = "bvh"
    alternative_text = "Chipmunk's default bounding-box tree (cpBBTree), modelled by our bvh"
    knobs = (
        Knob("dim", "dim", None, "units",
             "cell size of the spatial hash; the docs advise the average collision shape size",
             f"{CHIPMUNK_H}; {PYMUNK_DOC}", lo=1e-6, hi=1e9, scale="log"),
    )
    not_modelled = (
        "count (the hash table's minimum cell count; docs: about 10x the number of objects) is "
        "derived, not searched: our hash has no table size",
        "the index is 2D in Chipmunk; the model hashes the level's 3D boxes",
    )

    def with_frame(self, frame: LevelFrame) -> ChipmunkProfile:
        """This profile with the model's starting ``dim``: the median object size of ``frame``
        (Chipmunk has no default hash; its docs advise the average shape size)."""
        profile = ChipmunkProfile()
        knob = self.knob("dim")
        profile.knobs = (Knob(knob.key, knob.name, None, knob.unit, knob.help, knob.source,
                              knob.lo, knob.hi, scale=knob.scale,
                              baseline=float(frame.median_size)),)
        return profile

    def backend_params(self, values: dict, frame: LevelFrame) -> dict:
        return {"mode": "hash", "cell_size": float(values["dim"])}

    def refine_in_engine(self, settings: EngineSettings, workload: Any, budget_s: float) -> None:
        """Time the hash in Chipmunk at the docs' ``dim`` (the average shape size), the model's
        pick, and around both (x0.5 ... x2), in rounds; keep the fastest only when it beats the
        docs' size by more than the engine's noise in every round — else the docs' size is
        kept, as a person would keep the documented value among equals."""
        from .chipmunk_run import hash_sizes_in_chipmunk

        docs = float(self.knob("dim").start)
        model = float(settings.values["dim"])
        dims = list(dict.fromkeys([docs, model] + [round(base * f, 6) for base in (model, docs)
                                                   for f in (0.5, 0.7, 1.4, 2.0)]))
        count = int(self.derived(settings.frame)[0].value)
        rounds = hash_sizes_in_chipmunk(workload, dims, count, budget_s)
        if not rounds:
            return
        median = {d: statistics.median(r) for d, r in rounds.items()}
        best = min(median, key=lambda d: (median[d], abs(d - docs)))
        beats = all(b * (1 + ENGINE_NOISE) < a for b, a in zip(rounds[best], rounds[docs]))
        keep = best if best != docs and beats else docs
        settings.values["dim"] = keep
        tried = ", ".join(f"{fmt(d)}: {ms:.3f}" for d, ms in sorted(median.items()))
        verdict = (f"dim {fmt(keep)} beats the docs' {fmt(docs)} by "
                   f"{100 * (1 - median[keep] / median[docs]):.0f} % in every round" if keep != docs
                   else f"no size beats the docs' dim {fmt(docs)} by more than "
                        f"{100 * ENGINE_NOISE:.0f} % in every round: it is kept")
        settings.notes.append(f"hash sizes timed in Chipmunk (median ms/step over "
                              f"{len(rounds[docs])} rounds: {tried}); {verdict}")

    def measure_in_engine(self, settings: EngineSettings, workload: Any) -> dict | None:
        from .chipmunk_run import measure_in_chipmunk

        count = self.derived(settings.frame)[0].value
        return measure_in_chipmunk(workload, (float(settings.values["dim"]), int(count)))

    def derived(self, frame: LevelFrame) -> list[Derived]:
        count = max(10 * frame.objects, 1)
        return [Derived("count", count, "cells", f"10 x {frame.objects} objects ({PYMUNK_DOC})")]

    def render(self, settings: EngineSettings) -> str:
        dim = float(settings.values["dim"])
        count = self.derived(settings.frame)[0].value
        out = [f"/* {line} */" for line in header_lines(settings)]
        out.append(f"/* {knob_note(settings, self.knob('dim'))} */")
        out.append(f"/* count: {self.derived(settings.frame)[0].note} */")
        out.append(f"/* pymunk: space.use_spatial_hash({fmt(dim)}, {count}) */")
        call = f"cpSpaceUseSpatialHash(space, {fmt(dim)}, {count});"
        if settings.prefer_alternative:  # the tree is the better index: keep the call disabled
            out.append("/* recommended: keep Chipmunk's default tree (see the notes above) */")
            call = f"/* {call} */"
        out.append(call)
        return "\n".join(out) + "\n"


PROFILE = ChipmunkProfile()
