"""What one side of a comparison costs, measured on the shared query set and motion.

Order of the work, so every figure describes the tree built from the document: build (the
median time of :data:`BUILD_REPEATS` builds),
then the shape (nodes, leaves, depth, references, memory), every overlapping pair of the level
(``count_pairs('all')``: candidates tested and pairs really overlapping), the rays, frusta and
boxes of the :class:`~.queries.QuerySet` (nodes visited and objects tested, per query), and
last the motion: the frames of a recording replayed into a fresh index of the same side
(:class:`~editor.model.recording.Replay`, as ``simulate --recording`` does), or else seeded
synthetic motion of the moving entities applied to this index through the shared frame step
(:mod:`editor.model.frame_step`), each frame timed and its active pairs counted.

Before the timed build, every code path of the backend runs once on a tiny part of the level
(:func:`spatial.tuner.warm_up`), so build and update times measure the structure, not the
compiler or the kernel cache.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spatial.contract import SpatialIndex
from spatial.cost import Workload
from spatial.params import params_to_dict
from spatial.tuner import warm_up

from ..frame_step import FrameDelta, apply_delta, settle_frame
from ..index_input import IndexInput
from ..tuning import synthetic_motion
from .queries import QuerySet
from .sides import SideSpec, build_side, new_index, side_params

DEFAULT_FRAMES = 30
#: builds timed per side (the median is reported)
BUILD_REPEATS = 3


@dataclass
class QueryWork:
    """Nodes visited and objects tested by each query of one kind (arrays, query order)."""

    visited: np.ndarray
    tested: np.ndarray

    def summary(self) -> dict:
        n = len(self.visited)
        return {"count": n,
                "nodes_visited": round(float(self.visited.mean()), 3) if n else 0.0,
                "objects_tested": round(float(self.tested.mean()), 3) if n else 0.0,
                "max_nodes_visited": int(self.visited.max()) if n else 0,
                "max_objects_tested": int(self.tested.max()) if n else 0}


@dataclass
class SideMeasure:
    """One side measured: its spec, the index built from the document and every figure.

    ``index`` is the tree as built (queried, never moved: motion runs on a second index).
    ``figures`` is the flat dictionary of numbers the report and the GUI's table show;
    ``frames`` one dictionary per frame of the motion (frame, moved, candidates, overlapping,
    update_ms, pairs_ms), for the per-frame plot.
    """

    spec: SideSpec
    index: SpatialIndex
    figures: dict
    queries: dict[str, QueryWork]
    frames: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        """The side's part of the report: backend, parameters, figures and queries."""
        out = {"backend": self.spec.backend, "params": params_to_dict(self.index.params),
               **self.figures,
               "queries": {kind: work.summary() for kind, work in self.queries.items()}}
        out["frames"] = self.frames
        return out


def _workload(record: IndexInput, queries: QuerySet) -> Workload:
    """The warm-up's workload: the level, two frames of motion (the update path) and the
    queries."""
    motion = synthetic_motion(record.ids, record.lo, record.hi, record.dynamic, 2, 0)
    return Workload(record.ids, record.lo, record.hi, record.dynamic, record.awake, motion,
                    queries.ray_origins, queries.ray_directions, queries.ray_max_t,
                    queries.frusta, record.split_planes)


def run_queries(index: SpatialIndex, queries: QuerySet) -> dict[str, QueryWork]:
    """The per-query work of ``index`` on ``queries`` (rays closest hit, frusta, boxes)."""
    work = {}
    if len(queries.ray_origins):
        casts = index.query_rays(queries.ray_origins, queries.ray_directions, queries.ray_max_t)
        work["rays"] = QueryWork(np.asarray(casts.nodes_visited), np.asarray(casts.objects_tested))
    else:
        work["rays"] = QueryWork(np.zeros(0, np.int64), np.zeros(0, np.int64))
    seen = [index.query_frustum(planes) for planes in queries.frusta]
    work["frusta"] = QueryWork(np.array([s.nodes_visited for s in seen], dtype=np.int64),
                               np.array([s.objects_tested for s in seen], dtype=np.int64))
    if len(queries.box_lo):
        boxes = index.query_boxes(queries.box_lo, queries.box_hi)
        work["boxes"] = QueryWork(np.asarray(boxes.nodes_visited), np.asarray(boxes.objects_tested))
    else:
        work["boxes"] = QueryWork(np.zeros(0, np.int64), np.zeros(0, np.int64))
    return work


def shape_figures(index: SpatialIndex) -> dict:
    """Nodes, leaves, depth, references, duplication and memory of a built index."""
    stats = index.stats()
    objects = max(int(stats["objects"]), 1)
    return {"objects": int(stats["objects"]), "nodes": int(stats["nodes"]),
            "leaves": int(stats["leaves"]), "max_depth": int(stats["max_depth"]),
            "references": int(stats["references"]),
            "duplication": round(int(stats["references"]) / objects, 4),
            "memory_bytes": int(stats["memory_bytes"])}


def synthetic_frames(index: SpatialIndex, record: IndexInput, frames: int, seed: int) -> list[dict]:
    """Seeded drift of the moving entities played into ``index``; one dict per frame."""
    out = []
    for number, motion in enumerate(synthetic_motion(record.ids, record.lo, record.hi,
                                                     record.dynamic, frames, seed), start=1):
        delta = FrameDelta(moved=motion.moved, moved_lo=motion.moved_lo, moved_hi=motion.moved_hi)
        edit_ms = apply_delta(index, delta)
        settle_ms, result, pairs_ms = settle_frame(index, delta.awake_ids, delta.awake_flags)
        out.append({"frame": number, "moved": len(delta.moved), "candidates": result.tests,
                    "overlapping": len(result.pairs), "update_ms": round(edit_ms + settle_ms, 4),
                    "pairs_ms": round(pairs_ms, 4)})
    return out


def recording_frames(index: SpatialIndex, recording, frames: int) -> list[dict]:
    """A recording replayed into ``index`` (rebuilt from its first frame); one dict per frame."""
    from ..recording import Replay

    replay = Replay(recording, index)
    replay.seek(recording.first_frame)
    out: list[dict] = []
    while len(out) < frames and replay.position + 1 < len(recording):
        stats = replay.step().as_dict()
        out.append({k: stats[k] for k in ("frame", "moved", "candidates", "overlapping",
                                          "update_ms", "pairs_ms")})
    return out


def motion_figures(frames: list[dict]) -> dict:
    """Median update time and mean active pair work over the frames."""
    if not frames:
        return {"frames": 0, "update_ms": 0.0, "frame_candidates": 0.0, "frame_overlapping": 0.0}
    return {"frames": len(frames),
            "update_ms": round(float(np.median([f["update_ms"] for f in frames])), 4),
            "frame_candidates": round(float(np.mean([f["candidates"] for f in frames])), 3),
            "frame_overlapping": round(float(np.mean([f["overlapping"] for f in frames])), 3)}


def measure_side(record: IndexInput, spec: SideSpec, queries: QuerySet, *, recording=None,
                 frames: int = DEFAULT_FRAMES, seed: int = 0, warm: bool = True) -> SideMeasure:
    """Measure one side on ``record`` (see the module docstring for the order of the work)."""
    params = side_params(record, spec)
    if warm:
        warm_up(type(new_index(record, spec)), _workload(record, queries),
                params=params_to_dict(params))
    index = build_side(record, spec)
    # the median of three builds: one build's wall clock is at the mercy of the machine's load
    times = [index.build_ms] + [build_side(record, spec).build_ms for _ in range(BUILD_REPEATS - 1)]
    figures = {"build_ms": round(float(np.median(times)), 3), **shape_figures(index)}
    counted = index.count_pairs("all")
    figures["pair_candidates"] = int(counted.tests)
    figures["pair_overlapping"] = int(counted.overlapping)
    work = run_queries(index, queries)
    mover = new_index(record, spec)
    if recording is not None:
        played = recording_frames(mover, recording, frames)
    else:
        record.build(mover)
        played = synthetic_frames(mover, record, frames, seed)
    figures.update(motion_figures(played))
    return SideMeasure(spec, index, figures, work, played)
