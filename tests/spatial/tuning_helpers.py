"""Small workloads and deliberately slow backends for the cost-model and tuner tests."""
from __future__ import annotations

import time
from dataclasses import make_dataclass

import numpy as np

from plugins.brute import BruteForce
from spatial.cost import MotionFrame, Workload
from spatial.geometry import frustum_planes_from_camera
from spatial.params import param
from spatial.scenegen import random_boxes


def small_workload(n: int = 120, frames: int = 3, seed: int = 0) -> Workload:
    """``n`` random boxes, a third of them dynamic and drifting, 16 rays and 2 frusta."""
    ids, lo, hi = random_boxes(n, seed=seed, layout="clustered")
    rng = np.random.default_rng(seed)
    dynamic = np.zeros(n, dtype=bool)
    dynamic[::3] = True
    movers = ids[dynamic]
    motion, cur_lo, cur_hi = [], lo[dynamic].copy(), hi[dynamic].copy()
    step = rng.normal(size=(len(movers), 3)) * 5.0
    for _ in range(frames):
        cur_lo, cur_hi = cur_lo + step, cur_hi + step
        motion.append(MotionFrame(moved=movers, moved_lo=cur_lo.copy(), moved_hi=cur_hi.copy()))
    origins = (lo[dynamic][:16] + hi[dynamic][:16]) / 2
    directions = rng.normal(size=(len(origins), 3))
    center = (lo.min(axis=0) + hi.max(axis=0)) / 2
    frusta = np.array([frustum_planes_from_camera(center, f, (0, 0, 1), 90, 1.5, 1.0, 2000.0)
                       for f in ((1, 0, 0), (0, 1, 0))])
    return Workload(ids, lo, hi, dynamic, None, motion, origins, directions, 3000.0, frusta,
                    description=f"{n} random boxes")


def one_param(class_name: str, field_name: str, spec) -> type:
    """A frozen ``Params`` dataclass with one integer field declared by ``spec`` (a ``param()``)."""
    return make_dataclass(class_name, [(field_name, int, spec)], frozen=True)


def delay_params(default_ms: int, most_ms: int) -> type:
    """``Params`` with ``delay_ms``: how long every build sleeps, from 0 to ``most_ms``."""
    return one_param("DelayParams", "delay_ms", param(default_ms, lo=0, hi=most_ms, unit="ms",
                                                      help="Sleep this long in every build."))


class SlowBuild(BruteForce):
    """The oracle with a build that cannot be interrupted (like a BSP on a big level)."""

    name = "slow_build_for_tests"
    Params = delay_params(3000, 10000)

    def _build(self, slots):
        time.sleep(self.params.delay_ms / 1e3)
        super()._build(slots)


class QuickDefaultSlowElsewhere(SlowBuild):
    """Quick with its defaults, up to three seconds a build elsewhere in its range."""

    name = "quick_default_for_tests"
    Params = delay_params(5, 3000)
