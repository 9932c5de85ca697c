"""Keeps a spatial index in step with a scene, incrementally.

:class:`IndexSync` subscribes to :attr:`Scene.did_change` and, for the ids an edit touched
only, removes, inserts or updates objects of the index: each brush is a *static* object and
each point entity a *dynamic* (awake) one, under the scene's own ids. Brush face planes are
offered to the backend with ``set_split_planes`` (geometry-driven backends such as a BSP use
them). The backend can be switched or re-parametrised at any time; that rebuilds from the
scene. By default the sync follows the backend and parameters stored in the scene's settings.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from spatial.contract import SpatialIndex
from spatial.errors import PluginError
from spatial.params import parse_params

from .brushes import Brush
from .events import ChangeKind, Signal
from .scene import Scene

#: planes closer than this (in normal components and distance) are offered once
_PLANE_DECIMALS = 9


def scene_split_planes(scene: Scene) -> np.ndarray:
    """Unique face planes of every brush as ``(K, 4)`` rows ``(nx, ny, nz, d)``, ``n.p + d = 0``.

    A plane and its flip split space the same way, so each is offered once, oriented with the
    first non-zero normal component positive (two brushes sharing a wall give one candidate).
    Rows are sorted, so the same scene always offers the same planes in the same order.
    """
    rows = []
    for oid in scene.brush_ids():
        normals, dists = scene[oid].planes()
        rows.append(np.column_stack([normals, -dists]))
    if not rows:
        return np.empty((0, 4))
    planes = np.round(np.concatenate(rows), _PLANE_DECIMALS) + 0.0  # + 0.0 turns -0.0 into 0.0
    normals = planes[:, :3]
    first = np.argmax(normals != 0, axis=1)
    flip = normals[np.arange(len(planes)), first] < 0
    planes[flip] = -planes[flip] + 0.0
    return np.unique(planes, axis=0)


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
    """

    def __init__(self, scene: Scene, backend: str | None = None, params: Mapping | None = None,
                 registry=None, follow_settings: bool = True) -> None:
        if registry is None:
            from spatial.registry import default_registry
            registry = default_registry()
        self.scene = scene
        self.registry = registry
        self.follow_settings = follow_settings
        self.changed = Signal()
        self.fallback: str | None = None
        self.index: SpatialIndex = self._make(backend, params)
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
        """Switch to backend ``name`` (with ``params``, else its defaults) and rebuild.

        This changes the live index only; to record the choice in the document (saved, undoable)
        push :class:`~.commands.SetSettings` instead, which this sync follows.
        """
        self.index = self._make(name, params if params is not None else {})
        self.rebuild()

    def set_params(self, params: Mapping[str, Any]) -> None:
        """Change parameters of the current backend (others keep their value) and rebuild."""
        self.index.set_params(dict(params))
        self._offer_planes()
        self.changed.emit(frozenset(), ChangeKind.SETTINGS)

    def rebuild(self) -> None:
        """Rebuild the index from scratch from the scene."""
        ids = self.scene.indexed_ids()
        lo, hi = self.scene.bounds_of(ids)
        dynamic = np.array([not isinstance(self.scene[i], Brush) for i in ids], dtype=bool)
        self.index.build(ids, lo, hi, dynamic=dynamic, awake=True)
        self._offer_planes()
        self.changed.emit(frozenset(ids.tolist()), ChangeKind.ADDED)

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
            dynamic = np.array([not isinstance(scene[int(i)], Brush) for i in new], dtype=bool)
            index.insert(new, lo, hi, dynamic=dynamic, awake=True)
        if len(kept):
            lo, hi = scene.bounds_of(kept)
            slots = index.objects.slots_of(kept)
            moved = ~(np.all(index.objects.lo[slots] == lo, axis=1)
                      & np.all(index.objects.hi[slots] == hi, axis=1))
            if moved.any():
                index.update(kept[moved], lo[moved], hi[moved])
        if kind & (ChangeKind.ADDED | ChangeKind.REMOVED | ChangeKind.GEOMETRY) and \
                self._touches_brushes(ids):
            self._offer_planes()
        self.changed.emit(ids, kind)

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
        return any(not (i in scene and not isinstance(scene[i], Brush) and scene[i].is_point)
                   for i in ids)

    def _offer_planes(self) -> None:
        self.index.set_split_planes(scene_split_planes(self.scene))


