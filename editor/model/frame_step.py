"""One frame of index work, shared by the live simulation and the replay of a recording.

A frame reaches the index as a :class:`FrameDelta` (despawned ids, spawned objects, moved
objects, awake flags that changed). :func:`apply_delta` edits the index incrementally with
exactly those ids; :func:`settle_frame` sets the changed awake flags, advances the lifespans
by one frame and collects the active pairs. Running both on the same deltas gives the same
pairs in every backend, which is how designers compare backends on the same motion.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np

from spatial.contract import PairResult, SpatialIndex

from .work_budget import check_objects, check_pairs

_EMPTY_IDS = np.empty(0, dtype=np.int64)
_EMPTY_BOXES = np.empty((0, 3))


@dataclass
class FrameDelta:
    """What changed between two frames, by object id."""

    despawned: np.ndarray = field(default_factory=lambda: _EMPTY_IDS)
    spawned: np.ndarray = field(default_factory=lambda: _EMPTY_IDS)
    spawned_lo: np.ndarray = field(default_factory=lambda: _EMPTY_BOXES)
    spawned_hi: np.ndarray = field(default_factory=lambda: _EMPTY_BOXES)
    spawned_awake: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))
    moved: np.ndarray = field(default_factory=lambda: _EMPTY_IDS)
    moved_lo: np.ndarray = field(default_factory=lambda: _EMPTY_BOXES)
    moved_hi: np.ndarray = field(default_factory=lambda: _EMPTY_BOXES)
    awake_ids: np.ndarray = field(default_factory=lambda: _EMPTY_IDS)
    awake_flags: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))


@dataclass
class FrameStats:
    """Per-frame figures (the ``simulate`` CLI prints these; the timeline plots them).

    ``moved`` objects updated in the index, ``spawned``/``despawned`` objects inserted/removed,
    ``awake`` dynamic objects awake after the frame, ``dynamic`` dynamic objects alive,
    ``nodes`` rows of the node table (-1 when not inspected), ``candidates`` candidate pair
    tests of ``pairs('active')``, ``overlapping`` pairs whose boxes really overlap,
    ``update_ms`` index edits + awake flags + lifespan step, ``pairs_ms`` pair finding,
    ``frame_ms`` all index work of the frame (update, wake queries, pairs).
    """

    frame: int
    moved: int = 0
    spawned: int = 0
    despawned: int = 0
    awake: int = 0
    dynamic: int = 0
    nodes: int = -1
    candidates: int = 0
    overlapping: int = 0
    update_ms: float = 0.0
    pairs_ms: float = 0.0
    frame_ms: float = 0.0

    def as_dict(self) -> dict:
        out = asdict(self)
        for key in ("update_ms", "pairs_ms", "frame_ms"):
            out[key] = round(out[key], 4)
        return out


#: columns of :class:`FrameStats`, in order (the keys of the arrays of a stats history)
STATS_COLUMNS = tuple(FrameStats.__dataclass_fields__)


def apply_delta(index: SpatialIndex, delta: FrameDelta) -> float:
    """Remove, insert and move objects of one frame; returns the milliseconds spent."""
    start = time.perf_counter()
    if len(delta.despawned):
        index.remove(delta.despawned)
    if len(delta.spawned):
        index.insert(delta.spawned, delta.spawned_lo, delta.spawned_hi, dynamic=True,
                     awake=delta.spawned_awake)
    if len(delta.moved):
        index.update(delta.moved, delta.moved_lo, delta.moved_hi)
    return (time.perf_counter() - start) * 1e3


def settle_frame(index: SpatialIndex, awake_ids, awake_flags) -> tuple[float, PairResult, float]:
    """Set changed awake flags, step lifespans one frame, collect the active pairs.

    Returns ``(update_ms, pairs, pairs_ms)`` where ``update_ms`` covers the flags and the step.
    Raises :class:`~.work_budget.WorkBudgetError` when the frame is over the work budget.
    """
    start = time.perf_counter()
    if len(awake_ids):
        index.set_awake(awake_ids, awake_flags)
    index.step(1)
    check_objects(index.objects.count)
    middle = time.perf_counter()
    result = index.pairs("active")
    end = time.perf_counter()
    check_pairs(result.tests, len(result.pairs), end - middle)
    return (middle - start) * 1e3, result, (end - middle) * 1e3
