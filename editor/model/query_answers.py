"""The user's ray and frustum asked of an index, and answered where a frame's index lives.

A ray or frustum placed while a game streams in is asked again of every frame shown. Asked of
the frame's copy of the index in the window's process, each frame brought that copy over from
the processing process (10-30 MB at 30,000 objects). Instead, the display says what it asks
(:class:`QueryAsk`) and the processing answers it on the session's index as it hands a frame
over (:func:`answer`): the frame then carries its :class:`QueryAnswers`, a few node rows and
ids, read from the same index state as the frame's node table, so the traced rows are rows of
the table on screen. A frame handed over before the ask arrived has no answers: the display
asks its index itself, once (Qt-free).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatial.contract import QueryResult, RayResult, SpatialIndex


@dataclass(frozen=True)
class QueryAsk:
    """A ray (``origin``, unit ``direction``, ``max_t``) and frustum (six inward ``planes``),
    either ``None``; asked with trace on, as the query tools do."""

    ray: tuple[np.ndarray, np.ndarray, float] | None = None
    planes: np.ndarray | None = None

    @property
    def empty(self) -> bool:
        return self.ray is None and self.planes is None

    def same_as(self, other: QueryAsk | None) -> bool:
        """``other`` asks exactly this (arrays compared by value)."""
        if other is None:
            return False
        if (self.ray is None) != (other.ray is None) or (self.planes is None) != (other.planes is None):
            return False
        if self.ray is not None and other.ray is not None:
            (o1, d1, t1), (o2, d2, t2) = self.ray, other.ray
            if not (np.array_equal(o1, o2) and np.array_equal(d1, d2) and t1 == t2):
                return False
        return self.planes is None or (other.planes is not None
                                       and np.array_equal(self.planes, other.planes))


@dataclass(frozen=True)
class QueryAnswers:
    """What :func:`answer` found for ``ask`` in one frame's index."""

    ask: QueryAsk
    ray: RayResult | None
    frustum: QueryResult | None
    objects: int  # objects in the index: what a brute-force search tests
    index_name: str  # the index's name (its backend), for the query's report


def object_count(index: SpatialIndex) -> int:
    """Objects ``index`` holds (what a brute-force query tests)."""
    return int(index.objects.count if hasattr(index, "objects") else len(index))


def answer(index: SpatialIndex, ask: QueryAsk) -> QueryAnswers:
    """``ask`` asked of ``index`` now, with trace on."""
    ray = frustum = None
    if ask.ray is not None:
        origin, direction, max_t = ask.ray
        ray = index.query_ray(origin, direction, max_t, trace=True)
    if ask.planes is not None:
        frustum = index.query_frustum(ask.planes, trace=True)
    return QueryAnswers(ask, ray, frustum, object_count(index), str(getattr(index, "name", "")))
