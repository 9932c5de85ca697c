"""A level as a Chipmunk2D space (through pymunk), seen from the top.

Doom walls become static segments, the other static objects (brushes, mesh parts) their
top-view rectangles as static polygons, and the moving entities dynamic boxes with a seeded
velocity. The same level gives the tuner's workload (:func:`level_workload`), so the settings
exported for Chipmunk can be checked in Chipmunk itself. Used by ``benchmarks/engine_check.py``
and its test; needs ``pymunk`` (the ``engines`` extra).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymunk

from editor.model.tuning import synthetic_motion
from spatial.cost import Workload

#: smallest edge of a body or polygon (level units): pymunk rejects degenerate shapes
MIN_EDGE = 1.0
#: motion per frame as a fraction of the level's diagonal (as the tuner's synthetic motion)
SPEED_FRACTION = 0.002
STEP_S = 1.0 / 60.0


@dataclass
class Level2D:
    """The top view of a level: walls, static rectangles, movers (all in level units)."""

    name: str
    segments: np.ndarray       # (K, 2, 2) wall endpoints
    rects: np.ndarray          # (S, 2, 2) static rectangles: lo, hi
    movers: np.ndarray         # (M, 2, 2) dynamic boxes: lo, hi
    workload: Workload

    @property
    def bodies(self) -> int:
        return len(self.segments) + len(self.rects) + len(self.movers)


def from_record(name: str, record) -> Level2D:
    """The top view of an :class:`~editor.model.index_input.IndexInput`."""
    walls = set()
    segments = np.empty((0, 2, 2))
    if record.segments is not None and len(record.segments.ids):
        walls = set(record.segments.ids.tolist())
        segments = np.stack([record.segments.a, record.segments.b], axis=1).astype(float)
    is_wall = np.array([int(i) in walls for i in record.ids], dtype=bool)
    static = ~record.dynamic & ~is_wall
    rects = np.stack([record.lo[static, :2], record.hi[static, :2]], axis=1)
    movers = np.stack([record.lo[record.dynamic, :2], record.hi[record.dynamic, :2]], axis=1)
    return Level2D(name, segments, rects, movers, level_workload(record.ids, record.lo, record.hi,
                                                                  record.dynamic, name))


def level_workload(ids, lo, hi, dynamic, name: str, frames: int = 30, seed: int = 0) -> Workload:
    """The tuner's workload for the same objects (drifting movers, no rays or frusta: Chipmunk's
    hash serves the broad phase)."""
    diagonal = max(float(np.linalg.norm(hi.max(axis=0) - lo.min(axis=0))), 1.0)
    motion = synthetic_motion(ids, lo, hi, dynamic, frames, seed, SPEED_FRACTION)
    return Workload(ids=ids, lo=lo, hi=hi, dynamic=dynamic, frames=motion, ray_max_t=diagonal,
                    description=f"{name}: {len(ids)} objects, {frames} frames")


def generated(n: int = 20_000, seed: int = 0) -> Level2D:
    """``n`` unit-ish boxes, all moving, spread over a square arena four sizes apart, walled in."""
    rng = np.random.default_rng(seed)
    side = 4.0 * np.sqrt(n)
    size = rng.uniform(0.5, 1.5, size=(n, 2))
    centre = rng.uniform(2.0, side - 2.0, size=(n, 2))
    lo2, hi2 = centre - size / 2, centre + size / 2
    corners = np.array([[0, 0], [side, 0], [side, side], [0, side]], dtype=float)
    segments = np.stack([corners, np.roll(corners, -1, axis=0)], axis=1)
    lo = np.column_stack([lo2, np.zeros(n)])
    hi = np.column_stack([hi2, np.ones(n)])
    ids = np.arange(n, dtype=np.int64)
    name = f"generated {n} bodies"
    return Level2D(name, segments, np.empty((0, 2, 2)), np.stack([lo2, hi2], axis=1),
                   level_workload(ids, lo, hi, np.ones(n, dtype=bool), name))


def build_space(level: Level2D, spatial_hash: tuple[float, int] | None = None,
                seed: int = 0) -> tuple[pymunk.Space, list[pymunk.Shape]]:
    """The level's space: Chipmunk's default tree, or ``use_spatial_hash(dim, count)``.

    Returns the space and its dynamic shapes (in the level's mover order)."""
    space = pymunk.Space()
    space.gravity = (0.0, 0.0)  # a top view: things slide, nothing falls
    if spatial_hash is not None:
        space.use_spatial_hash(float(spatial_hash[0]), int(spatial_hash[1]))
    static = space.static_body
    for a, b in level.segments:
        if np.any(a != b):
            _add(space, pymunk.Segment(static, tuple(a), tuple(b), 0.0))
    for lo, hi in level.rects:
        hi = np.maximum(hi, lo + MIN_EDGE)
        _add(space, pymunk.Poly(static, [(lo[0], lo[1]), (hi[0], lo[1]), (hi[0], hi[1]), (lo[0], hi[1])]))
    rng = np.random.default_rng([seed, 4])
    extent = np.ptp(np.concatenate([level.workload.lo[:, :2], level.workload.hi[:, :2]]), axis=0)
    speed = SPEED_FRACTION * float(np.linalg.norm(extent)) / STEP_S
    shapes = []
    for lo, hi in level.movers:
        w, h = (max(float(v), MIN_EDGE) for v in hi - lo)
        body = pymunk.Body(1.0, pymunk.moment_for_box(1.0, (w, h)))
        body.position = tuple((lo + hi) / 2)
        angle = rng.uniform(0, 2 * np.pi)
        body.velocity = (speed * np.cos(angle), speed * np.sin(angle))
        shape = pymunk.Poly.create_box(body, (w, h))
        space.add(body)
        _add(space, shape)
        shapes.append(shape)
    return space, shapes


def _add(space: pymunk.Space, shape: pymunk.Shape) -> None:
    shape._order = len(space.shapes)  # creation order, the same in every space of the level
    space.add(shape)


def step_times(space: pymunk.Space, steps: int, warm_up: int = 5) -> list[float]:
    """Seconds of each of ``steps`` ``space.step(1/60)`` calls, after ``warm_up`` untimed ones
    (the tuner's own timing in Chipmunk, :func:`spatial.engines.chipmunk_run.step_times`)."""
    from spatial.engines.chipmunk_run import step_times as engine_step_times

    return engine_step_times(space, steps, warm_up)


def _created(space: pymunk.Space) -> list[pymunk.Shape]:
    """The space's shapes in the order :func:`build_space` added them."""
    return sorted(space.shapes, key=lambda shape: shape._order)


def touching(space: pymunk.Space, shapes: list[pymunk.Shape]) -> set[tuple[int, int]]:
    """Which shapes' boxes each dynamic shape's box overlaps, through the space's own index
    (``bb_query``), as pairs of creation positions: the same for any correct index."""
    index = {id(s): k for k, s in enumerate(_created(space))}
    pairs = set()
    for shape in shapes:
        for other in space.bb_query(shape.bb, pymunk.ShapeFilter()):
            if other is not shape:
                a, b = index[id(shape)], index[id(other)]
                pairs.add((min(a, b), max(a, b)))
    return pairs


def touching_brute(space: pymunk.Space, shapes: list[pymunk.Shape]) -> set[tuple[int, int]]:
    """:func:`touching` without any index: every box against every box."""
    created = _created(space)
    index = {id(s): k for k, s in enumerate(created)}
    pairs = set()
    for shape in shapes:
        for other in created:
            if other is not shape and shape.bb.intersects(other.bb):
                a, b = index[id(shape)], index[id(other)]
                pairs.add((min(a, b), max(a, b)))
    return pairs
