"""Keeps a spatial index in step with a scene: the one owner of the live index.

:class:`IndexSync` subscribes to :attr:`Scene.did_change` and, for the ids an edit touched
only, removes, inserts or updates objects of the index, under the scene's own ids: each point
entity is a *dynamic* (awake) object, each brush (and anything else the scene indexes) a
*static* one. Brush face planes are offered to the backend with ``set_split_planes``
(geometry-driven backends such as a BSP use them; see :mod:`.split_planes`).

It also holds the whole rebuild policy, for the command line and the editor alike: when the
document's settings (backend, parameters) change it rebuilds — in place for new parameters of
the same backend, else from the scene's :func:`~.index_input.index_input` record — and above
:attr:`IndexSync.background_above` objects, or when the backend's kernels must first be
prepared (the warm-up hook), it hands the build to its *runner*. The default runner builds at
once, in the caller's thread; the editor passes one that builds on a worker thread. A result
that arrives after the document moved on is dropped and the build starts again; a new rebuild
or :meth:`IndexSync.cancel` forgets the one in flight.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np

from spatial.contract import SpatialIndex
from spatial.errors import PluginError
from spatial.memory_budget import MemoryBudgetError
from spatial.params import parse_params

from .entities import Entity
from .events import ChangeKind, Signal
from .index_input import IndexInput, index_input
from .scene import Scene
from .split_planes import scene_split_planes

#: scenes with more indexed objects than this rebuild through the runner (a worker thread in
#: the editor) rather than at once
BACKGROUND_ABOVE = 20_000

#: ``done(index, build_ms)``: what a runner calls with the finished index
Done = Callable[[SpatialIndex, float], None]
#: ``failed(exc)``: what a runner calls when the build raised (plugin code: even SystemExit)
Failed = Callable[[BaseException], None]


class Cancellable(Protocol):
    """What a runner returns for a build in flight."""

    def cancel(self) -> None:
        """Forget the build: its result must not be delivered (or is dropped if it is)."""


class Runner(Protocol):
    """Runs a build away from the caller (or at once) and delivers its result.

    ``runner(build, prepare, done, failed)`` runs ``prepare()`` when given (a backend's
    kernels; its failure is ignored, the build compiles what it needs itself), then ``build()``,
    and calls ``done(index, build_ms)`` — or ``failed(exc)`` when the build raised — on the
    thread that owns the document, unless cancelled; ``build_ms`` excludes ``prepare``.
    """

    def __call__(self, build: Callable[[], SpatialIndex], prepare: Callable[[], None] | None,
                 done: Done, failed: Failed) -> Cancellable: ...


class Preparation(Protocol):
    """A backend's first use with a cold kernel cache, prepared before its build."""

    def run(self) -> None:
        """Compile (or load) the kernels the first frame needs; on the runner's thread."""

    def cancel(self) -> None:
        """Stop preparing (a newer rebuild replaced this one)."""


class WarmUp(Protocol):
    """The warm-up hook: which backends need preparing, and how."""

    def needed(self, backend: str) -> bool:
        """Whether building ``backend`` here would compile its kernels from scratch."""

    def preparation(self, backend: str, current: str) -> Preparation:
        """A preparation of ``backend`` while ``current`` is the tree on screen."""


class _Inline:
    """Does nothing to cancel: an inline build has already finished."""

    def cancel(self) -> None:
        pass


def run_inline(build: Callable[[], SpatialIndex], prepare: Callable[[], None] | None,
               done: Done, failed: Failed) -> Cancellable:
    """The default :class:`Runner`: prepare and build now, in the caller's thread."""
    if prepare is not None:
        try:
            prepare()
        except Exception:  # the build below compiles what it needs itself
            pass
    start = time.perf_counter()
    try:
        index = build()
    except BaseException as exc:  # noqa: B036 - plugin code: sys.exit() included
        failed(exc)
        return _Inline()
    done(index, (time.perf_counter() - start) * 1e3)
    return _Inline()


def build_for_settings(scene: Scene, registry=None) -> SpatialIndex | None:
    """The index of ``scene``'s own backend and parameters, built from
    :func:`~.index_input.index_input` exactly as :class:`IndexSync` builds it — for a thread
    that reads a level to hand over with it (:meth:`IndexSync.following`). None when the
    settings name a backend this installation lacks or parameters it refuses, or the build is
    over the memory budget: the sync then builds (or falls back) itself and says why."""
    if registry is None:
        from spatial.registry import default_registry
        registry = default_registry()
    settings = scene.settings
    cls = registry.backends.get(settings.backend)
    if cls is None:
        return None
    try:
        return build_index(cls, settings.parsed(cls), index_input(scene))
    except (PluginError, MemoryBudgetError, ValueError):
        return None


def build_index(cls: type[SpatialIndex], params: Any, record: IndexInput) -> SpatialIndex:
    """A new ``cls(params)`` index built from ``record``, its lazy work flushed (so a worker
    thread, when there is one, does it all)."""
    index = cls(params)
    record.build(index)
    index.nodes()
    return index


class _Job:
    """A build in flight: the runner's handle and the preparation before it."""

    def __init__(self, preparation: Preparation | None) -> None:
        self.preparation = preparation
        self.handle: Cancellable | None = None
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
        if self.handle is not None:
            self.handle.cancel()
        if self.preparation is not None:
            self.preparation.cancel()


class IndexSync:
    """A spatial index that follows a scene.

    Parameters
    ----------
    scene : Scene
        The document to follow.
    backend : str or SpatialIndex, optional
        Backend name; default: the scene's ``settings.backend``. A backend named here is this
        sync's own choice (a side of compare mode, a command line's ``--backend``): the index
        then keeps it when the document's settings change, where a sync without one follows
        them. An index instead of a name is one already built from the scene as it is now (a
        worker built it from :func:`~.index_input.index_input` of a snapshot, so a big level
        does not hold up the caller): it becomes the live index as it is, and ``params`` are
        its own.
    params : mapping, optional
        Backend parameters; default: the scene's ``settings.params`` (when the backend is the
        scene's).
    registry : Registry, optional
        Where backends are looked up; default :func:`spatial.registry.default_registry`.
    eager_planes : bool
        Offer brush planes to a geometry-driven backend after every brush edit (else only
        when :meth:`offer_split_planes` is called).
    runner : Runner, optional
        Runs rebuilds for the settings in the background; default :func:`run_inline`.
    warm_up : WarmUp, optional
        Prepares a backend's kernels before its first build; default none.
    background_above : int
        Rebuilds of an index holding more objects than this go through ``runner``.

    Attributes
    ----------
    index : SpatialIndex
        The live index. Replaced (not mutated) when the backend changes.
    changed : Signal
        ``callback(ids: frozenset[int], kind: ChangeKind)`` after the index has caught up with
        an edit or a rebuild (views that query the index subscribe here, not to the scene).
    rebuild_started, rebuild_finished : Signal
        ``callback()`` when a rebuild for the settings starts (:attr:`rebuilding` and
        :attr:`preparing_backend` then say how it runs) and ``callback(build_ms)`` once its
        index is live (after ``changed``).
    rebuild_failed : Signal
        ``callback(backend: str, exc: BaseException)`` when a rebuild for the settings raised
        (or plugin code called ``sys.exit()``): the previous index stays live, unchanged, and
        the document's settings still name the failed choice — the caller takes it back.
    fallback : str or None
        Why the requested backend could not be used (unknown name), when it fell back.
    preparing_backend : str or None
        The backend whose kernels the rebuild in flight prepares first.
    last_rebuild_ms : float
        How long the last rebuild for the settings took (preparation excluded).
    split_planes_stale : bool
        Brush planes changed since they were last offered. Backends that choose splits from
        geometry get fresh planes after every brush edit (``eager_planes=True``, the default)
        or when :meth:`offer_split_planes` is called (e.g. at the end of a drag); backends that
        ignore split planes get them at every rebuild only, as computing them costs time on
        big levels.
    """

    def __init__(self, scene: Scene, backend: str | SpatialIndex | None = None,
                 params: Mapping | None = None,
                 registry=None, eager_planes: bool = True, *, runner: Runner | None = None,
                 warm_up: WarmUp | None = None, background_above: int = BACKGROUND_ABOVE) -> None:
        if registry is None:
            from spatial.registry import default_registry
            registry = default_registry()
        self.scene = scene
        self.registry = registry
        self.follows_document = backend is None
        self.eager_planes = eager_planes
        self.runner: Runner = runner or run_inline
        self.warm_up = warm_up
        self.background_above = background_above
        self.split_planes_stale = False
        self.changed = Signal()
        self.rebuild_started = Signal()
        self.rebuild_finished = Signal()
        self.rebuild_failed = Signal()
        self.fallback: str | None = None
        self.preparing_backend: str | None = None
        self.last_rebuild_ms = 0.0
        self._job: _Job | None = None
        self._edit_version = 0
        if isinstance(backend, SpatialIndex):  # built elsewhere from this very scene
            self.index: SpatialIndex = backend
            scene.did_change.connect(self._on_scene_did_change)
            return
        self.index = self._make(backend, params)
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

    @classmethod
    def following(cls, scene: Scene, built: SpatialIndex, **options: Any) -> IndexSync:
        """A sync whose live index is ``built``: the document's index already built for its
        own settings from the scene as it is now (:func:`build_for_settings`, on the thread
        that read the level). From there it follows the document's settings like any sync
        made without a backend. ``options`` are the constructor's."""
        sync = cls(scene, built, **options)
        sync.follows_document = True
        return sync

    # ------------------------------------------------------------------ backend choice
    def _resolve(self, backend: str | None, params: Mapping | None) -> tuple[type[SpatialIndex], Any]:
        """The backend class and parsed parameters for a choice (None: the document's)."""
        settings = self.scene.settings
        name = backend or settings.backend
        try:
            cls = self.registry.backend(name)
        except PluginError as exc:
            if backend is not None:
                raise
            # A document saved with a backend this installation lacks still opens.
            self.fallback = str(exc)
            return self.registry.backend("brute"), None
        self.fallback = None
        if params is None and name == settings.backend:
            return cls, settings.parsed(cls)  # parsed where the settings entered
        return cls, parse_params(cls.Params, dict(params or {}))

    def _make(self, backend: str | None, params: Mapping | None) -> SpatialIndex:
        cls, parsed = self._resolve(backend, params)
        return cls(parsed) if parsed is not None else cls()

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
        self.cancel()
        self.index = self._make(name, params)
        self.rebuild()

    def set_params(self, params: Mapping[str, Any]) -> None:
        """Change parameters of the current backend (others keep their value) and rebuild."""
        self.index.set_params(dict(params))
        self._offer_planes()
        self.changed.emit(frozenset(), ChangeKind.SETTINGS)

    def rebuild(self) -> None:
        """Rebuild the current index from scratch from the scene, now."""
        # the one record every index builder uses: boxes, flags, split planes and the exact
        # wall segments and triangles the Doom-style BSP and the triangle octree partition
        record = index_input(self.scene)
        record.build(self.index)
        self.split_planes_stale = False
        self.changed.emit(frozenset(record.ids.tolist()), ChangeKind.ADDED)

    def close(self) -> None:
        """Stop following the scene (and forget a rebuild in flight)."""
        self.cancel()
        if self._on_scene_did_change in self.scene.did_change._slots:
            self.scene.did_change.disconnect(self._on_scene_did_change)

    # ------------------------------------------------------------------ the rebuild policy
    def _settings_differ(self) -> bool:
        """Whether the document's backend or parameters differ from the live index's."""
        settings = self.scene.settings
        cls = self.registry.backends.get(settings.backend)
        if cls is None:  # unknown here: fall back once, then stay there
            return self.fallback is None
        if self.fallback:
            return True
        return cls is not type(self.index) or settings.parsed(cls) != self.index.params

    def rebuild_for_settings(self, background: bool | None = None) -> None:
        """Rebuild the index for the document's backend and parameters.

        New parameters of the same backend rebuild in place, from the objects, planes,
        segments and triangles the index already holds; another backend builds from
        :func:`~.index_input.index_input`, the record ``stats`` builds from too, so a switch
        gives the very tree ``stats`` reports. ``background`` None chooses: through the runner
        above :attr:`background_above` objects or when the backend needs preparing.
        """
        cls, params = self._resolve(None, None)
        old = self.index
        self.cancel()
        warm = self.warm_up is not None and self.warm_up.needed(cls.name)
        self.preparing_backend = cls.name if warm else None
        if background is None:
            background = old.objects.count > self.background_above or warm
        if not background and type(old) is cls and params is not None:
            self.rebuild_started.emit()
            start = time.perf_counter()
            previous = old.params
            try:
                old.set_params(params)
                old.nodes()
            except BaseException as exc:  # noqa: B036 - plugin code: sys.exit() included
                _quietly(lambda: old.set_params(previous))
                self._failed(cls.name, exc)
                return
            self._finish(old, (time.perf_counter() - start) * 1e3)
            return
        parsed = params if params is not None else cls.Params()
        if background:
            # the record is gathered on the worker too (a level's takes ~100 ms, which held
            # the window at every switch): an edit meanwhile bumps the edit version, and the
            # result, or a read that failed under it, is dropped and built again (_adopt)
            scene = self.scene
            self._start(lambda: build_index(cls, parsed, index_input(scene)), cls.name)
            return
        record = index_input(self.scene)
        self.rebuild_started.emit()
        start = time.perf_counter()
        try:
            built = build_index(cls, parsed, record)
        except BaseException as exc:  # noqa: B036 - plugin code: sys.exit() included
            self._failed(cls.name, exc)
            return
        self._finish(built, (time.perf_counter() - start) * 1e3)

    def _start(self, build: Callable[[], SpatialIndex], backend: str) -> None:
        preparation = None
        if self.preparing_backend is not None and self.warm_up is not None:
            preparation = self.warm_up.preparation(self.preparing_backend, self.index.name)
        job = self._job = _Job(preparation)
        version = self._edit_version
        self.rebuild_started.emit()  # rebuilding (and preparing_backend) tell what runs

        def failed(exc: BaseException) -> None:
            if self._job is not job:  # cancelled, or replaced by a newer rebuild
                return
            if version != self._edit_version:  # the scene changed under the worker's read
                self._job = None
                self.rebuild_for_settings(background=True)
                return
            self._failed(backend, exc)

        handle = self.runner(build, preparation.run if preparation else None,
                             lambda index, ms: self._adopt(job, version, index, ms), failed)
        job.handle = handle
        if job.cancelled:
            handle.cancel()

    def _adopt(self, job: _Job, version: int, index: SpatialIndex, ms: float) -> None:
        if self._job is not job:
            return  # cancelled, or replaced by a newer rebuild: its result is dropped
        self._job = None
        if version != self._edit_version:
            self.rebuild_for_settings(background=True)  # the scene moved on while we built: again
            return
        self._finish(index, ms)

    def _finish(self, index: SpatialIndex, ms: float) -> None:
        if index is not self.index:
            self.index = index
            self.split_planes_stale = False
        self.preparing_backend = None
        self.last_rebuild_ms = ms
        self.changed.emit(frozenset(), ChangeKind.SETTINGS)
        self.rebuild_finished.emit(ms)

    def _failed(self, backend: str, exc: BaseException) -> None:
        self._job = None
        self.preparing_backend = None
        self.rebuild_failed.emit(backend, exc)

    def cancel(self) -> None:
        """Forget a rebuild in flight (its result is dropped when it arrives)."""
        job, self._job = self._job, None
        self.preparing_backend = None
        if job is not None:
            job.cancel()

    @property
    def rebuilding(self) -> bool:
        """A rebuild runs through the runner (its index is not live yet)."""
        return self._job is not None

    # ------------------------------------------------------------------ incremental sync
    def _on_scene_did_change(self, ids: frozenset, kind: ChangeKind) -> None:
        if kind != ChangeKind.SELECTION:
            self._edit_version += 1
        if kind & ChangeKind.SETTINGS and self.follows_document and self._settings_differ():
            self.rebuild_for_settings()
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


def _quietly(call: Callable[[], Any]) -> None:
    try:
        call()
    except Exception:  # the index keeps whatever state it could; the failure is reported already
        pass
