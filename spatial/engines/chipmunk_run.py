"""Chipmunk2D itself, when pymunk is installed: step the level with its tree and with a hash.

The profile's model (our ``bvh`` for Chipmunk's tree, our hashed ``grid`` for its spatial hash)
can misjudge which index Chipmunk runs faster; with pymunk importable (the ``engines`` extra),
:func:`measure_in_chipmunk` builds the workload's top view as a space — static boxes as static
rectangles, dynamic ones as moving boxes with the velocity of their first recorded move — and
times a few steps with each index, so the advice follows the engine. Without pymunk it returns
None and the model's comparison stands.
"""
from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

STEP_S = 1.0 / 60.0
MIN_EDGE = 1e-3


def _space(pymunk: Any, workload: Any, spatial_hash: tuple[float, int] | None) -> Any:
    space = pymunk.Space()
    space.gravity = (0.0, 0.0)
    if spatial_hash is not None:
        space.use_spatial_hash(float(spatial_hash[0]), int(spatial_hash[1]))
    lo, hi = workload.lo[:, :2], workload.hi[:, :2]
    size = np.maximum(hi - lo, MIN_EDGE)
    velocity = np.zeros_like(lo)
    if workload.frames and workload.frames[0].moved is not None and len(workload.frames[0].moved):
        first = workload.frames[0]
        slot = {int(i): k for k, i in enumerate(workload.ids)}
        rows = np.array([slot[int(i)] for i in first.moved])
        velocity[rows] = (first.moved_lo[:, :2] - lo[rows]) / STEP_S
    static = space.static_body
    for k in range(len(lo)):
        w, h = float(size[k, 0]), float(size[k, 1])
        if workload.dynamic[k]:
            body = pymunk.Body(1.0, pymunk.moment_for_box(1.0, (w, h)))
            body.position = (float(lo[k, 0] + w / 2), float(lo[k, 1] + h / 2))
            body.velocity = (float(velocity[k, 0]), float(velocity[k, 1]))
            space.add(body, pymunk.Poly.create_box(body, (w, h)))
        else:
            x0, y0 = float(lo[k, 0]), float(lo[k, 1])
            space.add(pymunk.Poly(static, [(x0, y0), (x0 + w, y0), (x0 + w, y0 + h), (x0, y0 + h)]))
    return space


def _pymunk() -> Any:
    try:
        import pymunk
    except ImportError:
        return None
    return pymunk


def step_times(space: Any, steps: int, warm_up: int = 2) -> list[float]:
    """Seconds of each of ``steps`` ``space.step(1/60)`` calls of a pymunk space, after
    ``warm_up`` untimed ones (the first steps build the index and the contacts)."""
    for _ in range(warm_up):
        space.step(STEP_S)
    times = []
    for _ in range(steps):
        began = time.perf_counter()
        space.step(STEP_S)
        times.append(time.perf_counter() - began)
    return times


def _step_times(pymunk: Any, workload: Any, spatial_hash: tuple[float, int] | None,
                steps: int) -> list[float]:
    return step_times(_space(pymunk, workload, spatial_hash), steps)


def measure_in_chipmunk(workload: Any, spatial_hash: tuple[float, int], steps: int = 10,
                        rounds: int = 2) -> dict | None:
    """``{"tree_ms", "hash_ms", "steps"}``: median step times of Chipmunk's tree and of
    ``use_spatial_hash(*spatial_hash)`` on ``workload``'s top view; None without pymunk."""
    pymunk = _pymunk()
    if pymunk is None:
        return None
    times: dict[str, list[float]] = {"tree": [], "hash": []}
    for round_ in range(rounds):
        order = ("tree", "hash") if round_ % 2 == 0 else ("hash", "tree")
        for label in order:
            times[label] += _step_times(pymunk, workload, None if label == "tree" else spatial_hash,
                                        steps)
    return {"tree_ms": statistics.median(times["tree"]) * 1000,
            "hash_ms": statistics.median(times["hash"]) * 1000, "steps": steps * rounds}


def hash_sizes_in_chipmunk(workload: Any, dims: list[float], count: int, budget_s: float,
                           steps: int = 8, rounds: int = 3) -> dict[float, list[float]] | None:
    """Each round's median step time (ms) of the spatial hash with each cell size of ``dims``
    (in order, while ``budget_s`` lasts; the first two always), the rounds visiting them in
    alternating order so that a change of machine load touches them all alike; None without
    pymunk."""
    pymunk = _pymunk()
    if pymunk is None:
        return None
    began = time.perf_counter()
    times: dict[float, list[float]] = {}
    for k, dim in enumerate(dims):  # the first round decides which sizes fit in the budget
        if k >= 2 and time.perf_counter() - began > budget_s:
            break
        times[dim] = [statistics.median(_step_times(pymunk, workload, (float(dim), int(count)),
                                                    steps)) * 1000]
    for round_ in range(1, rounds):  # later rounds in the other order: drift touches all alike
        for dim in (reversed(list(times)) if round_ % 2 else list(times)):
            times[dim].append(statistics.median(
                _step_times(pymunk, workload, (float(dim), int(count)), steps)) * 1000)
    return times
