"""Chipmunk2D itself, when pymunk is installed: step the level with its tree and with hashes.

The profile's model (our ``bvh`` for Chipmunk's tree, our hashed ``grid`` for its spatial hash)
can misjudge which index Chipmunk runs faster; with pymunk importable (the ``engines`` extra),
the workload's top view becomes a space — static boxes as static rectangles, dynamic ones as
moving boxes with the velocity of their first recorded move — and Chipmunk's own step times
decide. Settings are compared **in lockstep**: spaces built alike from the workload are stepped
one step each in turn (the order alternating), so every setting is timed at the same simulation
time and under the same machine load; step times are the thread's CPU time
(``time.thread_time``), which leaves out the time other processes hold the core. A hash setting
is changed on a live space with ``use_spatial_hash`` (Chipmunk copies the shapes into two new
hashes), so the bench builds a space once, not once per setting. Without pymunk nothing here
runs and the model's comparison stands.
"""
from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

STEP_S = 1.0 / 60.0
MIN_EDGE = 1e-3
#: untimed steps after a space is built or its hash changed (the first step after a change
#: touches a freshly allocated table)
WARM_UP = 2
CLOCK = time.thread_time
#: steps a bench's spaces take before they are built afresh (10 s of game time): the movers keep
#: their first velocity, so after long they pile up on walls or leave the level, a state that no
#: longer resembles the workload's
MAX_SIMULATED_STEPS = 600


def _space(pymunk: Any, workload: Any, spatial_hash: tuple[float, int] | None,
           axes: tuple[int, int] = (0, 1)) -> Any:
    """The workload's view along ``axes`` (the ground plane) as a space with ``spatial_hash``
    (``(dim, count)``) or Chipmunk's default tree (None)."""
    space = pymunk.Space()
    space.gravity = (0.0, 0.0)
    if spatial_hash is not None:
        space.use_spatial_hash(float(spatial_hash[0]), int(spatial_hash[1]))
    cols = list(axes)
    lo, hi = workload.lo[:, cols], workload.hi[:, cols]
    size = np.maximum(hi - lo, MIN_EDGE)
    velocity = np.zeros_like(lo)
    if workload.frames and workload.frames[0].moved is not None and len(workload.frames[0].moved):
        first = workload.frames[0]
        slot = {int(i): k for k, i in enumerate(workload.ids)}
        rows = np.array([slot[int(i)] for i in first.moved])
        velocity[rows] = (first.moved_lo[:, cols] - lo[rows]) / STEP_S
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


def available() -> bool:
    """Whether Chipmunk can run here (pymunk importable)."""
    return _pymunk() is not None


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


def lockstep_times(spaces: list[Any], steps: int, warm_up: int = WARM_UP,
                   clock: Any = CLOCK) -> list[list[float]]:
    """Seconds of each of ``steps`` steps of every space, the spaces stepped one step each in
    turn (the order reversed every other step), after ``warm_up`` untimed steps of each."""
    for _ in range(warm_up):
        for space in spaces:
            space.step(STEP_S)
    times: list[list[float]] = [[] for _ in spaces]
    order = list(range(len(spaces)))
    for k in range(steps):
        for i in (order if k % 2 == 0 else order[::-1]):
            began = clock()
            spaces[i].step(STEP_S)
            times[i].append(clock() - began)
    return times


class ChipmunkBench:
    """Two spaces of one workload stepped in lockstep: one with the docs' hash, one whose hash is
    switched to each setting timed. Implements :class:`.chipmunk_search.PairTimer`."""

    def __init__(self, workload: Any, docs: tuple[float, int], axes: tuple[int, int] = (0, 1)):
        pymunk = _pymunk()
        if pymunk is None:
            raise RuntimeError("pymunk is not installed: Chipmunk cannot run here")
        self.docs = (float(docs[0]), int(docs[1]))
        self._build = lambda spatial_hash: _space(pymunk, workload, spatial_hash, axes)
        began = time.perf_counter()
        self._docs = self._build(self.docs)
        #: seconds to build one space of the workload
        self.build_s = time.perf_counter() - began
        self._trial = self._build(self.docs)
        self._trial_setting = self.docs
        began = time.perf_counter()
        lockstep_times([self._docs, self._trial], 3, warm_up=0)
        self._stepped = 3
        #: one step's wall-clock time with the docs' hash, the machine's load included (sizes
        #: the timed blocks within a wall-clock budget)
        self.step_s = (time.perf_counter() - began) / 6
        #: times the two spaces were built afresh (see MAX_SIMULATED_STEPS)
        self.rebuilds = 0

    def _use(self, setting: tuple[float, int]) -> None:
        setting = (float(setting[0]), int(setting[1]))
        if setting != self._trial_setting:
            self._trial.use_spatial_hash(*setting)
            self._trial_setting = setting

    def ratio(self, setting: tuple[float, int], steps: int) -> float:
        """Median step time with ``setting`` over that with the docs' hash, in lockstep."""
        if self._stepped + WARM_UP + steps > MAX_SIMULATED_STEPS:
            self._docs = self._trial = None  # free both before building two more
            self._docs, self._trial = self._build(self.docs), self._build(setting)
            self._trial_setting, self._stepped = (float(setting[0]), int(setting[1])), 0
            self.rebuilds += 1
        self._use(setting)
        self._stepped += WARM_UP + steps
        docs, trial = lockstep_times([self._docs, self._trial], steps)
        return statistics.median(trial) / statistics.median(docs)


def measure_in_chipmunk(workload: Any, spatial_hash: tuple[float, int], steps: int = 10,
                        rounds: int = 2, axes: tuple[int, int] = (0, 1)) -> dict | None:
    """``{"tree_ms", "hash_ms", "steps", "rounds"}``: median step times of Chipmunk's tree and
    of ``use_spatial_hash(*spatial_hash)`` on ``workload``'s top view, two spaces built for it
    (the same simulation time) stepped in lockstep; ``rounds`` holds each block's pair of
    medians. None without pymunk."""
    pymunk = _pymunk()
    if pymunk is None:
        return None
    tree_space = _space(pymunk, workload, None, axes)
    hash_space = _space(pymunk, workload, spatial_hash, axes)
    tree: list[float] = []
    hashed: list[float] = []
    per_round = []
    for _ in range(rounds):
        t, h = lockstep_times([tree_space, hash_space], steps)
        tree += t
        hashed += h
        per_round.append((statistics.median(t) * 1000, statistics.median(h) * 1000))
    return {"tree_ms": statistics.median(tree) * 1000, "hash_ms": statistics.median(hashed) * 1000,
            "steps": steps * rounds, "rounds": per_round}
