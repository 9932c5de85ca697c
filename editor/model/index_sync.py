"""Keeps a spatial index in step with a scene, incrementally.

:class:`IndexSync` subscribes to :attr:`Scene.did_change` and, for the ids an edit touched
only, removes, inserts or updates objects of the index, under the scene's own ids: each point
entity is a *dynamic* (awake) object, each brush (and anything else the scene indexes) a
*static* one. Brush face planes are offered to the backend with ``set_split_planes``
(geometry-driven backends such as a BSP use them). The backend can be switched or re-parametrised
at any time; that rebuilds from the
scene. By default the sync follows the backend and parameters stored in the scene's settings.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from spatial.contract import SpatialIndex
from spatial.errors import PluginError
from spatial.memory_budget import MemoryBudgetError
from spatial.params import parse_params

from .brushes import Brush
from .entities import Entity
from .events import ChangeKind, Signal
from .index_input import index_input
from .scene import Scene

#: planes closer than this (in normal components and distance) are offered once
_PLANE_DECIMALS = 9


def brush_split_rows(brush: Brush) -> np.ndarray:
    """A brush's face planes as canonical ``(F, 4)`` rows (see :func:`scene_split_planes`).

    Cached on the brush value, so an edit only computes the rows of the brushes it touched.
    """
    rows = brush._cache.get("split_rows")
    if rows is None:
        rows = _canonical_rows(*brush.planes())
        brush._cache["split_rows"] = rows
    return rows


def _canonical_rows(normals: np.ndarray, dists: np.ndarray) -> np.ndarray:
    rows = np.round(np.column_stack([normals, -dists]), _PLANE_DECIMALS) + 0.0  # no -0.0
    first = np.argmax(rows[:, :3] != 0, axis=1)
    flip = rows[np.arange(len(rows)), first] < 0
    rows[flip] = -rows[flip] + 0.0
    return rows


def _cache_split_rows(brushes: list[Brush]) -> None:
    """Compute and cache the split rows of many brushes in one vectorised pass (a loaded level)."""
    if not brushes:
        return
    planes = [b.planes() for b in brushes]
    counts = [len(d) for _, d in planes]
    rows = _canonical_rows(np.concatenate([n for n, _ in planes]),
                           np.concatenate([d for _, d in planes]))
    for brush, part in zip(brushes, np.split(rows, np.cumsum(counts)[:-1])):
        brush._cache["split_rows"] = part


def scene_split_planes(scene: Scene) -> np.ndarray:
    """Unique face planes of every brush as ``(K, 4)`` rows ``(nx, ny, nz, d)``, ``n.p + d = 0``.

    A plane and its flip split space the same way, so each is offered once, oriented with the
    first non-zero normal component positive (two brushes sharing a wall give one candidate).
    Rows are sorted, so the same scene always offers the same planes in the same order.
    """
    brushes = [scene.brush(oid) for oid in scene.brush_ids()]
    _cache_split_rows([b for b in brushes if "split_rows" not in b._cache])
    rows = [b._cache["split_rows"] for b in brushes]
    if not rows:
        return np.empty((0, 4))
    planes = np.concatenate(rows)
    order = np.lexsort(planes.T[::-1])  # sort by nx, then ny, nz, d
    planes = planes[order]
    keep = np.ones(len(planes), dtype=bool)
    keep[1:] = np.any(planes[1:] != planes[:-1], axis=1)
    return planes[keep]


class IndexSync:
    """A spatial index that follows a scene.

    Parameters
    ----------
    scene : Scene
        The document to follow.
    backend : str, optional
        Backend name; default: the scene's ``settings.backend``.
    params : mapping, optional
        Backend parameters; default: the scene's ``settings.params`` (when the backend is the
        scene's).
    registry : Registry, optional
        Where backends are looked up; default :func:`spatial.registry.default_registry`.
    follow_settings : bool
        Switch backend/parameters when the scene's settings change (an undoable command).

    Attributes
    ----------
    index : SpatialIndex
        The live index. Replaced (not mutated) when the backend changes.
    changed : Signal
        ``callback(ids: frozenset[int], kind: ChangeKind)`` after the index has caught up with
        an edit (views that query the index subscribe here, not to the scene).
    fallback : str or None
        Why the requested backend could not be used (unknown name), when it fell back.
    split_planes_stale : bool
        Brush planes changed since they were last offered. Backends that choose splits from
        geometry get fresh planes after every brush edit (``eager_planes=True``, the default)
        or when :meth:`offer_split_planes` is called (e.g. at the end of a drag); backends that
        ignore split planes get them at every rebuild only, as computing them costs time on
        big levels.
    """

    def __init__(self, scene: Scene, backend: str | None = None, params: Mapping | None = None,
                 registry=None, follow_settings: bool = True, eager_planes: bool = True) -> None:
        if registry is None:
            from spatial.registry import default_registry
            registry = default_registry()
        self.scene = scene
        self.registry = registry
        self.follow_settings = follow_settings
        self.eager_planes = eager_planes
        self.split_planes_stale = False
        self.changed = Signal()
        self.fallback: str | None = None
        self.index: SpatialIndex = self._make(backend, params)
        try:
            self.rebuild()
        except MemoryBudgetError as exc:
            if backend is not None or params is not None:
                raise
            # A document whose recorded parameters exceed the memory budget still opens, on
            # the backend's defaults, saying why (its settings stay as they are).
            self.fallback = f"{exc}; the index uses {self.index.name}'s defaults instead"
            self.index = type(self.index)()
            self.rebuild()
        scene.did_change.connect(self._on_scene_did_change)

    # ------------------------------------------------------------------ backend choice
    def _make(self, backend: str | None, params: Mapping | None) -> SpatialIndex:
        settings = self.scene.settings
        name = backend or settings.backend
        if params is None and name == settings.backend:
            params = settings.params
        try:
            cls = self.registry.backend(name)
        except PluginError as exc:
            if backend is not None:
                raise
            # A document saved with a backend this installation lacks still opens.
            self.fallback = str(exc)
            cls, params = self.registry.backend("brute"), None
        else:
            self.fallback = None
        return cls(parse_params(cls.Params, dict(params or {})))

    @property
    def backend_name(self) -> str:
        return self.index.name

    def set_backend(self, name: str, params: Mapping | None = None) -> None:
        """Switch to backend ``name`` and rebuild.

        ``params`` default to the document's parameters when ``name`` is the document's
        backend, else to the backend's defaults.

        This changes the live index only; to record the choice in the document (saved, undoable)
        push :class:`~.commands.SetSettings` instead, which this sync follows.
        """
        self.index = self._make(name, params)
        self.rebuild()

    def set_params(self, params: Mapping[str, Any]) -> None:
        """Change parameters of the current backend (others keep their value) and rebuild."""
        self.index.set_params(dict(params))
        self._offer_planes()
        self.changed.emit(frozenset(), ChangeKind.SETTINGS)

    def rebuild(self) -> None:
        """Rebuild the index from scratch from the scene."""
        # the one record every index builder uses: boxes, flags, split planes and the exact
        # wall segments and triangles the Doom-style BSP and the triangle octree partition
        record = index_input(self.scene)
        record.build(self.index)
        self.split_planes_stale = False
        self.changed.emit(frozenset(record.ids.tolist()), ChangeKind.ADDED)

    def close(self) -> None:
        """Stop following the scene."""
        if self._on_scene_did_change in self.scene.did_change._slots:
            self.scene.did_change.disconnect(self._on_scene_did_change)

    # ------------------------------------------------------------------ incremental sync
    def _on_scene_did_change(self, ids: frozenset, kind: ChangeKind) -> None:
        if kind & ChangeKind.SETTINGS and self.follow_settings:
            if self._settings_differ():
                self.index = self._make(None, None)
                self.rebuild()
        if not ids or kind == ChangeKind.SELECTION:
            return
        try:
            self._apply_incremental(ids)
        except Exception:
            # A backend that failed half-way must not stay out of step with the document:
            # rebuild from the scene, then let the scene report the original error.
            self.rebuild()
            raise
        if kind & (ChangeKind.ADDED | ChangeKind.REMOVED | ChangeKind.GEOMETRY) and \
                self._touches_brushes(ids):
            self.split_planes_stale = True
            if self.eager_planes and self.uses_split_planes:
                self._offer_planes()
        self.changed.emit(ids, kind)

    def _apply_incremental(self, ids: frozenset) -> None:
        """Remove, insert or update exactly the touched ids."""
        scene, index = self.scene, self.index
        touched = np.array(sorted(ids), dtype=np.int64)
        in_index = index.objects.contains(touched)
        in_scene = np.array([scene.is_indexed(int(i)) for i in touched], dtype=bool)
        gone = touched[in_index & ~in_scene]
        new = touched[~in_index & in_scene]
        kept = touched[in_index & in_scene]
        if len(gone):
            index.remove(gone)
        if len(new):
            lo, hi = scene.bounds_of(new)
            dynamic = np.array([isinstance(scene[int(i)], Entity) for i in new], dtype=bool)
            index.insert(new, lo, hi, dynamic=dynamic, awake=True)
        if len(kept):
            lo, hi = scene.bounds_of(kept)
            slots = index.objects.slots_of(kept)
            moved = ~(np.all(index.objects.lo[slots] == lo, axis=1)
                      & np.all(index.objects.hi[slots] == hi, axis=1))
            if moved.any():
                index.update(kept[moved], lo[moved], hi[moved])

    def _settings_differ(self) -> bool:
        settings = self.scene.settings
        cls = self.registry.backends.get(settings.backend)
        if cls is None:  # unknown here: fall back once, then stay there
            return self.fallback is None
        if self.fallback:
            return True
        return cls is not type(self.index) or \
            parse_params(cls.Params, dict(settings.params)) != self.index.params

    def _touches_brushes(self, ids) -> bool:
        # Removed brushes are gone from the scene; their ids are no longer point entities
        # either, so anything touched that is not a current point entity may have been a brush.
        scene = self.scene
        return any(not (isinstance(obj := scene.get(i), Entity) and obj.is_point) for i in ids)

    @property
    def uses_split_planes(self) -> bool:
        """True if the backend chooses its splits from offered planes (it overrides the hook)."""
        return type(self.index)._split_planes_changed is not SpatialIndex._split_planes_changed

    def offer_split_planes(self) -> None:
        """Offer the current brush planes now (a geometry-driven backend rebuilds)."""
        self._offer_planes()
        self.changed.emit(frozenset(), ChangeKind.SETTINGS)

    def _offer_planes(self) -> None:
        self.index.set_split_planes(scene_split_planes(self.scene))
        self.split_planes_stale = False


