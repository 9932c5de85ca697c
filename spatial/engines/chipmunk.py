"""Chipmunk2D (7.x) and pymunk: the spatial hash of ``cpSpaceUseSpatialHash(space, dim, count)``.

Chipmunk's default index is a bounding-box tree (cpBBTree) that "requires no tuning"; the only
index knobs are those of switching a space to the spatial hash: a cell size ``dim`` and a
minimum table size ``count``. ``dim`` is modelled by our ``grid`` backend in hash mode
(``cell_size = dim``); the tree is modelled by our ``bvh`` and measured beside it, so the output
says when the tree is the better choice. Our hash has no table, so ``count`` is settled only in
Chipmunk itself, jointly with ``dim``, when pymunk is installed
(:mod:`.chipmunk_search`: what each knob costs in Chipmunk's source, and the search); without
pymunk it is written at the docs' advice, ten cells per shape. Chipmunk has no unit of length:
``dim`` is in the level's own units, the units a space built from the level's coordinates uses.
"""
from __future__ import annotations

import time
from typing import Any

from .chipmunk_search import table_size
from .profile import Derived, EngineProfile, EngineSettings, Knob, LevelFrame
from .text import fmt, header_lines, knob_note

PYMUNK_DOC = "pymunk 7.x pymunk/space.py, Space.use_spatial_hash docstring"
CHIPMUNK_H = "Chipmunk2D 7.0 include/chipmunk/chipmunk_structs.h / cpSpace.h: cpSpaceUseSpatialHash"
CHIPMUNK_HASH = "Munk2D (pymunk 7's Chipmunk) src/cpSpaceHash.c: cpSpaceHashInit, next_prime (src/prime.h)"
#: share of a tuning budget the search in Chipmunk gets when pymunk is installed (the model's
#: search gets the rest): Chipmunk's own timing decides, the model only proposes a cell size
ENGINE_SHARE = 0.8
#: confirming blocks of Chipmunk's tree against the kept hash, and the share of the engine's
#: budget their steps may take
TREE_ROUNDS = 2
TREE_SHARE = 0.1


class ChipmunkProfile(EngineProfile):
    name = "chipmunk"
    title = "Chipmunk2D / pymunk"
    version = "Chipmunk2D 7.0, pymunk 7"
    backend = "grid"
    syntax = "C (cpSpaceUseSpatialHash) with the pymunk call beside it"
    suffix = ".c"
    alternative_backend = "bvh"
    alternative_text = "Chipmunk's default bounding-box tree (cpBBTree), modelled by our bvh"
    knobs: tuple[Knob, ...] = (
        Knob("dim", "dim", None, "units",
             "cell size of the spatial hash; the docs advise the average collision shape size",
             f"{CHIPMUNK_H}; {PYMUNK_DOC}", lo=1e-6, hi=1e9, scale="log"),
        Knob("count", "count", None, "cells",
             "minimum number of cells of the hash table (Chipmunk allocates the next of its table "
             "primes); the docs advise about 10x the number of objects",
             f"{PYMUNK_DOC}; {CHIPMUNK_HASH}", lo=1, hi=1_610_612_741, tunable=False,
             engine_tuned=True),
    )
    not_modelled = (
        "count (the hash table's size) has no counterpart in our hash: it is settled by timing "
        "Chipmunk itself when pymunk is installed, else written at the docs' 10 x objects",
        "the index is 2D in Chipmunk; the model hashes the level's 3D boxes",
    )

    def with_frame(self, frame: LevelFrame) -> ChipmunkProfile:
        """This profile with the docs' starting values for ``frame``: ``dim`` the median object
        size across the ground plane (Chipmunk is 2D; it has no default hash, its docs advise
        the average shape size) and ``count`` ten cells per object."""
        profile = ChipmunkProfile()
        starts = {"dim": float(frame.ground_size), "count": max(10 * frame.objects, 1)}
        profile.knobs = tuple(Knob(k.key, k.name, k.default, k.unit, k.help, k.source, k.lo, k.hi,
                                   scale=k.scale, tunable=k.tunable, baseline=starts[k.key],
                                   engine_tuned=k.engine_tuned) for k in self.knobs)
        return profile

    def backend_params(self, values: dict, frame: LevelFrame) -> dict:
        return {"mode": "hash", "cell_size": float(values["dim"])}

    def engine_share(self) -> float:
        from .chipmunk_run import available

        return ENGINE_SHARE if available() else 0.0

    def refine_in_engine(self, settings: EngineSettings, workload: Any, budget_s: float,
                         held: frozenset[str] = frozenset()) -> None:
        """Settle ``dim`` and ``count`` on Chipmunk's own timing (:func:`.chipmunk_search.search_hash`:
        candidates around the docs' values and the model's pick, each timed in lockstep with the
        docs' values; one is kept only when it beats them by more than the engine's noise in
        every confirming round), then time Chipmunk's tree against the kept hash, all within
        ``budget_s``. A held knob keeps its value (and is the baseline)."""
        from .chipmunk_run import WARM_UP, ChipmunkBench, available, measure_in_chipmunk
        from .chipmunk_search import MAX_STEPS, MIN_STEPS, search_hash

        if not available():
            return
        if budget_s <= 0:
            settings.notes.append("no time was left in the budget to time Chipmunk's hash "
                                  "settings: the model's dim and the docs' count are written")
            return
        began = time.perf_counter()
        docs = (float(settings.values["dim"]) if "dim" in held else float(self.knob("dim").start),
                int(settings.values["count"]) if "count" in held else int(self.knob("count").start))
        axes = settings.frame.ground_axes
        bench = ChipmunkBench(workload, docs, axes)
        # kept for the tree's comparison: two fresh spaces and their timed blocks (the tree may
        # step slower than the hash: a margin)
        fit = TREE_SHARE * budget_s / (TREE_ROUNDS * 2 * bench.step_s) - WARM_UP
        steps = int(max(MIN_STEPS, min(MAX_STEPS, fit)))
        reserve = 2 * bench.build_s + 1.5 * 2 * TREE_ROUNDS * (steps + WARM_UP) * bench.step_s
        left = budget_s - (time.perf_counter() - began) - reserve
        choice = search_hash(bench, docs, float(settings.values["dim"]), left, bench.step_s,
                             held=held)
        del bench  # its two spaces, before the tree's two are built
        settings.values["dim"], settings.values["count"] = choice.kept
        settings.notes.append(choice.note())
        settings.engine_run = measure_in_chipmunk(workload, choice.kept, steps=steps,
                                                  rounds=TREE_ROUNDS, axes=axes)

    def measure_in_engine(self, settings: EngineSettings, workload: Any) -> dict | None:
        """The tree against the tuned hash: as timed by :meth:`refine_in_engine`, else now."""
        from .chipmunk_run import measure_in_chipmunk

        if settings.engine_run is not None:
            return settings.engine_run
        return measure_in_chipmunk(workload, (float(settings.values["dim"]), docs_count(settings)),
                                   axes=settings.frame.ground_axes)

    def derived(self, frame: LevelFrame) -> list[Derived]:
        return []

    def render(self, settings: EngineSettings) -> str:
        dim, count = float(settings.values["dim"]), docs_count(settings)
        out = [f"/* {line} */" for line in header_lines(settings)]
        out.append(f"/* {knob_note(settings, self.knob('dim'))} */")
        out.append(f"/* {knob_note(settings, self.knob('count'))}; Chipmunk allocates "
                   f"{table_size(count)} cells */")
        out.append(f"/* pymunk: space.use_spatial_hash({fmt(dim)}, {count}) */")
        call = f"cpSpaceUseSpatialHash(space, {fmt(dim)}, {count});"
        if settings.prefer_alternative:  # the tree is the better index: keep the call disabled
            out.append("/* recommended: keep Chipmunk's default tree (see the notes above) */")
            call = f"/* {call} */"
        out.append(call)
        return "\n".join(out) + "\n"


def docs_count(settings: EngineSettings) -> int:
    """``settings``' count, else the docs' advice for its level: ten cells per object."""
    count = settings.values.get("count")
    return int(count) if count is not None else max(10 * settings.frame.objects, 1)


PROFILE = ChipmunkProfile()
