"""Everything a spatial index is built from, gathered from a document in one place.

:class:`IndexInput` is the one record every builder of an index uses — the ``stats``,
``simulate`` and ``tune`` commands, :class:`~.index_sync.IndexSync`, the editor's rebuild after
a backend switch, the simulation and the tuner — so they all build the same tree from the same
document: the boxes with their static/dynamic and awake flags, the brush face planes offered as
split candidates, and the exact wall segments and mesh triangles that geometry-driven backends
(the Doom-style BSP, the triangle octree) partition instead of boxes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spatial.errors import GeometryError

from .scene import Scene
from .split_planes import scene_split_planes


@dataclass
class SegmentArrays:
    """Wall segments as arrays: ids, endpoints ``a``/``b`` ``(N, 2)``, two-sided flags."""

    ids: np.ndarray
    a: np.ndarray
    b: np.ndarray
    two_sided: np.ndarray


@dataclass
class TriangleArrays:
    """Mesh triangles as arrays: ids and corners ``v0``/``v1``/``v2`` ``(N, 3)``."""

    ids: np.ndarray
    v0: np.ndarray
    v1: np.ndarray
    v2: np.ndarray


def _empty_planes() -> np.ndarray:
    return np.empty((0, 4))


@dataclass
class IndexInput:
    """What an index is built from, and what a report says about where it came from.

    Attributes
    ----------
    source : str
        Where the objects came from (a file name, ``demo``, ``random:...``).
    counts : dict
        The ``scene`` part of a ``stats`` report (may be empty when nobody reports it).
    ids, lo, hi : ndarray
        The indexed objects: ids ``(N,)`` and boxes ``(N, 3)``.
    dynamic, awake : ndarray
        ``(N,)`` flags: point entities are dynamic, everything else static; all awake.
    split_planes : ndarray
        ``(K, 4)`` brush face planes offered as split candidates.
    segments, triangles : SegmentArrays or TriangleArrays, optional
        Exact geometry behind some ids, when the level has some.
    backend, params : str and dict, optional
        The document's own backend choice and its parameters.
    metadata : dict
        The document's importer metadata (source format, file, map name), offered to the index
        with ``set_source`` (the shipped Doom BSP reads the map's own nodes through it).
    document : Scene, optional
        The document, when there is one.
    """

    source: str
    counts: dict
    ids: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    dynamic: np.ndarray
    awake: np.ndarray | None = None
    split_planes: np.ndarray = field(default_factory=_empty_planes)
    segments: SegmentArrays | None = None
    triangles: TriangleArrays | None = None
    backend: str | None = None
    params: dict | None = None
    metadata: dict = field(default_factory=dict)
    document: Any = None

    def offer_geometry(self, index) -> None:
        """Offer split planes, wall segments and triangles to ``index`` (before a build)."""
        if len(self.split_planes):
            index.set_split_planes(self.split_planes)
        self.offer_exact_geometry(index)

    def offer_exact_geometry(self, index) -> None:
        """Offer the document's source, wall segments and triangles (backends that do not use
        them ignore them)."""
        if self.metadata:
            index.set_source(self.metadata)
        if self.segments is not None:
            s = self.segments
            index.set_segments(s.ids, s.a, s.b, s.two_sided)
        if self.triangles is not None:
            t = self.triangles
            index.set_triangles(t.ids, t.v0, t.v1, t.v2)

    def build(self, index) -> None:
        """Offer the geometry to ``index``, then build it over the boxes."""
        self.offer_geometry(index)
        awake = self.awake if self.awake is not None else True
        try:
            index.build(self.ids, self.lo, self.hi, dynamic=self.dynamic, awake=awake)
        except GeometryError as exc:
            raise self._located(exc) from None

    def _located(self, exc: GeometryError) -> GeometryError:
        """``exc`` naming the level and the object whose box is out of range, when one is."""
        from spatial.geometry import MAX_COORDINATE

        inside = (np.abs(self.lo) <= MAX_COORDINATE).all(axis=1) & \
            (np.abs(self.hi) <= MAX_COORDINATE).all(axis=1)
        bad = np.flatnonzero(~inside)
        if not len(bad):
            return exc
        row = int(bad[0])
        oid = int(self.ids[row])
        what = f"object {oid}"
        if self.document is not None and oid in self.document:
            obj = self.document[oid]
            name = getattr(obj, "classname", None) or type(obj).__name__.lower()
            what = f"object {oid} ({name})"
        finite = np.isfinite(self.lo[row]).all() and np.isfinite(self.hi[row]).all()
        rule = f"must lie within ±{MAX_COORDINATE:g}" if finite else "must be finite"
        return GeometryError(f"{self.source or 'level'}: {what}: coordinates {rule}, got "
                             f"lo={self.lo[row].tolist()} hi={self.hi[row].tolist()}")

    @property
    def static_rows(self) -> np.ndarray:
        """Rows of the static objects (brushes, wall segments, triangles)."""
        return np.flatnonzero(~self.dynamic)


def _columns(objects: list, names: tuple[str, ...], width: int) -> list[np.ndarray]:
    """One ``(N, width)`` float array per attribute name of ``objects``."""
    return [np.array([getattr(o, name) for o in objects], dtype=np.float64).reshape(-1, width)
            for name in names]


def scene_segments(scene: Scene) -> SegmentArrays | None:
    """The scene's wall segments as arrays (None when it has none)."""
    ids = scene.segment_ids()
    if not ids:
        return None
    segments = [scene.segment(i) for i in ids]
    two_sided = np.array([s.two_sided for s in segments], dtype=np.bool_)
    a, b = _columns(segments, ("a", "b"), 2)
    return SegmentArrays(np.array(ids, dtype=np.int64), a, b, two_sided)


def scene_triangles(scene: Scene) -> TriangleArrays | None:
    """The scene's mesh triangles as arrays (None when it has none): views of the scene's own
    corner arrays, no object per triangle."""
    ids, corners = scene.triangle_arrays()
    if not len(ids):
        return None
    return TriangleArrays(ids, corners[:, 0], corners[:, 1], corners[:, 2])


def index_input(scene: Scene, source: str = "", *, counts: bool = False) -> IndexInput:
    """The record an index of ``scene`` is built from.

    Parameters
    ----------
    scene : Scene
        The document.
    source : str
        Where it came from, for reports.
    counts : bool
        Also count what the scene holds (the ``scene`` part of a ``stats`` report).
    """
    from .stats import scene_counts

    ids = scene.indexed_ids()
    lo, hi = scene.bounds_of(ids)
    # point entities move; brushes, wall segments and mesh triangles are static
    dynamic = np.isin(ids, np.array(scene.point_entity_ids(), dtype=np.int64))
    segments, triangles = scene_segments(scene), scene_triangles(scene)
    report: dict = {}
    if counts:
        found = scene_counts(scene, indexed=(ids, lo, hi))
        report = {"brushes": found["brushes"], "entities": found["entities"],
                  "brush_entities": found["brush_entities"], "faces": found["faces"],
                  "triangles": 0 if triangles is None else len(triangles.ids),
                  "segments": 0 if segments is None else len(segments.ids),
                  "objects": found["objects"], "invalid_brushes": found["invalid_brushes"],
                  "bounds": found["bounds"]}
    settings = scene.settings
    return IndexInput(str(source), report, ids, lo, hi, dynamic,
                      awake=np.ones(len(ids), dtype=bool),
                      split_planes=scene_split_planes(scene), segments=segments,
                      triangles=triangles, backend=settings.backend,
                      params=dict(settings.params), metadata=dict(settings.metadata), document=scene)
