"""The cost model: what one parameter choice of a backend costs on a given workload.

A :class:`Workload` is plain arrays: the objects to build (with their static/dynamic flags),
optional split planes, a list of :class:`MotionFrame` edits (a recording, or a seeded synthetic
motion), a sample of rays and a sample of view frusta. :func:`measure` builds one backend with
one set of parameters on it, plays the frames and runs the queries, and returns a
:class:`CostReport` of everything it counted and timed.

The objective
-------------
The default objective is the *work a game would pay per frame*, from deterministic work
counters only, so that the same parameters on the same workload always cost the same::

    cost = pair_test     * pair_tests_per_frame                     (pairs('active') tests)
         + rays_per_frame   * (node_visit * nodes_per_ray     + object_test * objects_per_ray)
         + frusta_per_frame * (node_visit * nodes_per_frustum + object_test * objects_per_frustum)
         + node          * nodes                                    (tree size)
         + memory_mb     * memory_bytes / 2**20
         + update_ms     * update_ms_per_frame                      (wall clock)
         + build_ms      * build_ms                                 (wall clock)

with the :class:`CostWeights` defaults ``pair_test = node_visit = object_test = 1``,
``rays_per_frame = 32``, ``frusta_per_frame = 1`` and every other weight 0. The wall-clock
terms (update and build time) are always measured and reported; they enter the objective only
when their weight is set, and then results depend on the machine's load. ``pair_tests`` are
the candidate tests a structure makes (``PairResult.tests``); the wasted ones are those whose
boxes do not really overlap (reported, and already contained in the tests).

Rays are closest-hit casts (``query_rays``), as a game's line traces are; frusta are
``query_frustum`` calls (visibility culling). Nothing here reads a document or a GUI: the
scene-facing layer (``editor.model.tuning``) turns a scene or a recording into a workload.

Bounding the time of one measurement: :func:`measure` checks ``deadline`` (a
``time.perf_counter`` value) between its stages (build, every frame, the ray batch, every
frustum) and raises :class:`TrialTimeout` once it has passed. A single build cannot be
interrupted from inside; :mod:`spatial.tuner` runs trials in a child process when it must bound
them hard.
"""
from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import ParamError, PartitionStudioError

#: terms of :class:`CostWeights` that read a wall clock (results vary with machine load)
WALL_CLOCK_TERMS = ("update_ms", "build_ms")


class TrialTimeout(PartitionStudioError):
    """A measurement passed its deadline between two stages."""


@dataclass(frozen=True)
class CostWeights:
    """Weights of the objective (see the module docstring for the formula).

    Attributes
    ----------
    pair_test : float
        Cost of one candidate pair test of ``pairs('active')``, per frame.
    node_visit : float
        Cost of visiting one node in a ray or frustum query.
    object_test : float
        Cost of testing one object's box in a ray or frustum query.
    rays_per_frame : float
        Ray casts a game makes per frame (the sample's mean work is scaled by this).
    frusta_per_frame : float
        Frustum queries per frame (1: one camera).
    node : float
        Cost per node of the tree (a size penalty; 0 by default).
    memory_mb : float
        Cost per MiB of the structure's memory estimate (0 by default).
    update_ms : float
        Cost per millisecond of incremental update per frame (wall clock; 0 by default).
    build_ms : float
        Cost per millisecond of a full build (wall clock; 0 by default).
    """

    pair_test: float = 1.0
    node_visit: float = 1.0
    object_test: float = 1.0
    rays_per_frame: float = 32.0
    frusta_per_frame: float = 1.0
    node: float = 0.0
    memory_mb: float = 0.0
    update_ms: float = 0.0
    build_ms: float = 0.0

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value < 0:
                raise ParamError(f"weights.{f.name}", f"must be a finite number >= 0, got {value!r}")
            object.__setattr__(self, f.name, float(value))

    @classmethod
    def from_dict(cls, values: dict | None) -> CostWeights:
        """Weights from a JSON object; unknown keys raise :class:`ParamError` naming them."""
        values = dict(values or {})
        known = {f.name for f in dataclasses.fields(cls)}
        for key in values:
            if key not in known:
                raise ParamError(f"weights.{key}", f"unknown weight (known: {', '.join(sorted(known))})")
        return cls(**values)

    def uses_wall_clock(self) -> bool:
        """True if a wall-clock term is weighted (the objective is then not reproducible)."""
        return any(getattr(self, name) > 0 for name in WALL_CLOCK_TERMS)


_NO_IDS = np.empty(0, dtype=np.int64)
_NO_BOXES = np.empty((0, 3))


@dataclass
class MotionFrame:
    """The edits of one frame, by object id (any part may be empty)."""

    removed: np.ndarray = field(default_factory=lambda: _NO_IDS)
    inserted: np.ndarray = field(default_factory=lambda: _NO_IDS)
    inserted_lo: np.ndarray = field(default_factory=lambda: _NO_BOXES)
    inserted_hi: np.ndarray = field(default_factory=lambda: _NO_BOXES)
    moved: np.ndarray = field(default_factory=lambda: _NO_IDS)
    moved_lo: np.ndarray = field(default_factory=lambda: _NO_BOXES)
    moved_hi: np.ndarray = field(default_factory=lambda: _NO_BOXES)
    awake_ids: np.ndarray = field(default_factory=lambda: _NO_IDS)
    awake_flags: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))


@dataclass
class Workload:
    """Everything a measurement runs, as arrays.

    Attributes
    ----------
    ids, lo, hi, dynamic, awake :
        The objects of the initial build.
    frames : list of MotionFrame
        Played after the build, one ``step(1)`` and one ``pairs('active')`` per frame.
    ray_origins, ray_directions, ray_max_t :
        The ray sample (closest-hit casts).
    frusta : (F, 6, 4) array
        Inward-facing planes of each frustum of the sample.
    split_planes : (K, 4) array
        Planes offered with ``set_split_planes`` before the build (BSP candidates).
    prepare : callable, optional
        ``prepare(index)`` before the build, e.g. to offer exact segments or triangles.
    description : str
        What the workload was made from (for reports).
    check_frame : callable, optional
        ``check_frame(frame_number, pair_tests, overlapping, seconds)`` after each frame's
        pairs: raises when the frame is over a work budget (the editor's
        :mod:`editor.model.work_budget`), so a trial of parameters that make a frame explode
        stops at that frame with the budget's one line instead of running on.
    """

    ids: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    dynamic: np.ndarray
    awake: np.ndarray | None = None
    frames: list[MotionFrame] = field(default_factory=list)
    ray_origins: np.ndarray = field(default_factory=lambda: _NO_BOXES)
    ray_directions: np.ndarray = field(default_factory=lambda: _NO_BOXES)
    ray_max_t: float = math.inf
    frusta: np.ndarray = field(default_factory=lambda: np.empty((0, 6, 4)))
    split_planes: np.ndarray = field(default_factory=lambda: np.empty((0, 4)))
    prepare: Callable[[Any], None] | None = None
    description: str = ""
    check_frame: Callable[[int, int, int, float], None] | None = None

    def subset(self, count: int) -> Workload:
        """A small workload with the first ``count`` objects (warm-up and cheapness probes)."""
        count = min(int(count), len(self.ids))
        keep = set(self.ids[:count].tolist())
        frames = []
        for fr in self.frames[:2]:
            mask = np.array([i in keep for i in fr.moved.tolist()], dtype=bool)
            frames.append(MotionFrame(moved=fr.moved[mask], moved_lo=fr.moved_lo[mask],
                                      moved_hi=fr.moved_hi[mask]))
        return Workload(self.ids[:count], self.lo[:count], self.hi[:count], self.dynamic[:count],
                        None if self.awake is None else self.awake[:count], frames,
                        self.ray_origins[:4], self.ray_directions[:4], self.ray_max_t,
                        self.frusta[:1], self.split_planes[:64], None, self.description + " (subset)",
                        self.check_frame)


@dataclass
class CostReport:
    """Everything one measurement counted and timed, and the objective it adds up to."""

    cost: float
    nodes: int
    leaves: int
    max_depth: int
    references: int
    memory_bytes: int
    build_ms: float
    update_ms_per_frame: float
    frames: int
    pair_tests_per_frame: float
    overlapping_per_frame: float
    wasted_tests_per_frame: float
    rays: int
    nodes_per_ray: float
    objects_per_ray: float
    frusta: int
    nodes_per_frustum: float
    objects_per_frustum: float
    pairs_all_candidates: int | None = None
    pairs_all_overlapping: int | None = None
    terms: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> CostReport:
        return cls(**values)


def _check_deadline(deadline: float | None, stage: str) -> None:
    if deadline is not None and time.perf_counter() > deadline:
        raise TrialTimeout(f"measurement passed its deadline before {stage}")


def objective_terms(report_values: dict, weights: CostWeights) -> dict:
    """The weighted terms of the objective, by name (their sum is the cost)."""
    v, w = report_values, weights
    return {
        "pairs": w.pair_test * v["pair_tests_per_frame"],
        "rays": w.rays_per_frame * (w.node_visit * v["nodes_per_ray"]
                                    + w.object_test * v["objects_per_ray"]),
        "frusta": w.frusta_per_frame * (w.node_visit * v["nodes_per_frustum"]
                                        + w.object_test * v["objects_per_frustum"]),
        "nodes": w.node * v["nodes"],
        "memory": w.memory_mb * v["memory_bytes"] / float(1 << 20),
        "update": w.update_ms * v["update_ms_per_frame"],
        "build": w.build_ms * v["build_ms"],
    }


def measure(backend_cls: type, params: Any, workload: Workload,
            weights: CostWeights | None = None, *, all_pairs: bool = True,
            deadline: float | None = None) -> CostReport:
    """Build ``backend_cls(params)`` on ``workload``, play its frames and queries, report the cost.

    Parameters
    ----------
    backend_cls : type
        A :class:`~spatial.contract.SpatialIndex` subclass.
    params : Params instance or dict
        Its parameters (a dict is parsed and validated by the backend).
    workload : Workload
    weights : CostWeights, optional
        Default :class:`CostWeights()`.
    all_pairs : bool
        Also count ``pairs('all')`` after the build (candidates vs really overlapping pairs of
        the level-analysis view; reported, not part of the objective).
    deadline : float, optional
        ``time.perf_counter()`` value after which :class:`TrialTimeout` is raised between stages.

    Returns
    -------
    CostReport
    """
    weights = weights or CostWeights()
    index = backend_cls(params)
    if workload.prepare is not None:
        workload.prepare(index)
    if len(workload.split_planes):
        index.set_split_planes(workload.split_planes)
    _check_deadline(deadline, "the build")
    index.build(workload.ids, workload.lo, workload.hi, workload.dynamic, workload.awake)
    build_ms = float(index.build_ms)
    _check_deadline(deadline, "pair counting")
    all_candidates = all_overlapping = None
    if all_pairs:
        counted = index.count_pairs("all")  # reported only: the list itself is not needed
        all_candidates, all_overlapping = counted.tests, counted.overlapping

    pair_tests, overlapping, update_ms = [], [], []
    if not workload.frames:  # a still scene: the per-frame pair cost is the state after build
        result = index.pairs("active")
        pair_tests.append(result.tests)
        overlapping.append(len(result.pairs))
    for number, frame in enumerate(workload.frames):
        _check_deadline(deadline, f"frame {number + 1}")
        start = time.perf_counter()
        if len(frame.removed):
            index.remove(frame.removed)
        if len(frame.inserted):
            index.insert(frame.inserted, frame.inserted_lo, frame.inserted_hi)
        if len(frame.moved):
            index.update(frame.moved, frame.moved_lo, frame.moved_hi)
        if len(frame.awake_ids):
            index.set_awake(frame.awake_ids, frame.awake_flags)
        index.step(1)
        update_ms.append((time.perf_counter() - start) * 1e3)
        began = time.perf_counter()
        result = index.pairs("active")
        if workload.check_frame is not None:
            workload.check_frame(number + 1, result.tests, len(result.pairs),
                                 time.perf_counter() - began)
        pair_tests.append(result.tests)
        overlapping.append(len(result.pairs))

    _check_deadline(deadline, "the ray sample")
    rays = len(workload.ray_origins)
    nodes_per_ray = objects_per_ray = 0.0
    if rays:
        casts = index.query_rays(workload.ray_origins, workload.ray_directions, workload.ray_max_t)
        nodes_per_ray = float(np.mean(casts.nodes_visited))
        objects_per_ray = float(np.mean(casts.objects_tested))

    frustum_nodes, frustum_objects = [], []
    for number, planes in enumerate(workload.frusta):
        _check_deadline(deadline, f"frustum {number + 1}")
        seen = index.query_frustum(planes)
        frustum_nodes.append(seen.nodes_visited)
        frustum_objects.append(seen.objects_tested)

    stats = index.stats()
    values: dict[str, Any] = {
        "nodes": int(stats["nodes"]), "leaves": int(stats["leaves"]),
        "max_depth": int(stats["max_depth"]), "references": int(stats["references"]),
        "memory_bytes": int(stats["memory_bytes"]), "build_ms": build_ms,
        "update_ms_per_frame": float(np.mean(update_ms)) if update_ms else 0.0,
        "frames": len(workload.frames),
        "pair_tests_per_frame": float(np.mean(pair_tests)),
        "overlapping_per_frame": float(np.mean(overlapping)),
        "wasted_tests_per_frame": float(np.mean(pair_tests) - np.mean(overlapping)),
        "rays": rays, "nodes_per_ray": nodes_per_ray, "objects_per_ray": objects_per_ray,
        "frusta": len(workload.frusta),
        "nodes_per_frustum": float(np.mean(frustum_nodes)) if frustum_nodes else 0.0,
        "objects_per_frustum": float(np.mean(frustum_objects)) if frustum_objects else 0.0,
        "pairs_all_candidates": all_candidates, "pairs_all_overlapping": all_overlapping,
    }
    terms = objective_terms(values, weights)
    return CostReport(cost=float(sum(terms.values())), terms=terms, **values)


def rescore(report: CostReport, weights: CostWeights) -> CostReport:
    """The same measurement under other weights (no re-measuring)."""
    values = report.as_dict()
    values.pop("cost")
    values.pop("terms")
    terms = objective_terms(values, weights)
    return CostReport(cost=float(sum(terms.values())), terms=terms, **values)
