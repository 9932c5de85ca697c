"""The open document as the GUI sees it: scene, undo stack and index sync behind Qt signals.

The model is Qt-free and notifies through plain callbacks; :class:`Document` re-emits them as
Qt signals so widgets connect the usual way. Widgets never edit the scene: they call
:meth:`Document.push` with a command of :mod:`editor.model.commands`.

Backend changes are recorded in the document with the undoable ``SetSettings`` command. The
sync does not follow them by itself (``follow_settings=False``): :class:`Document` rebuilds the
index either at once (small scenes) or on a worker thread (see :mod:`.workers`), so a big
rebuild never freezes the window.
"""
from __future__ import annotations

import time

from PySide6.QtCore import QObject, Signal

from editor.model import ChangeKind, IndexSync, SetSettings, UndoStack
from editor.model.index_input import index_input
from editor.model.loading import stores_settings
from editor.model.scene import Edit
from spatial.params import parse_params

#: scenes with more indexed objects than this rebuild on a worker thread
ASYNC_REBUILD_OBJECTS = 20_000


class Document(QObject):
    """One open level.

    Signals
    -------
    scene_changed(ids: frozenset, kind: ChangeKind)
        After every applied edit (commands, undo, redo).
    index_changed()
        After the spatial index caught up (incremental edit or rebuild).
    stack_changed()
        After the undo history changed (push, undo, redo, clean state).
    rebuild_started(), rebuild_finished(ms: float)
        Around a rebuild of the index from scratch (``index_changed`` comes first). When
        ``rebuild_started`` comes, :attr:`rebuilding` tells whether it runs on a worker thread
        and :attr:`preparing_backend` whether that worker compiles the backend's kernels first
        (its first use with a cold cache); ``ms`` never includes that compile.
    preparing_status(text: str)
        A backend's kernels could not be compiled in a separate process and are being
        compiled in this one (see :class:`editor.warmup.BackendPreparation`); always emitted
        on the GUI thread.
    preparing_progress(fraction: float)
        How far the preparation of :attr:`preparing_backend` has come; on the GUI thread.
    rebuild_failed(message: str)
        A rebuild raised (or a plugin called ``sys.exit()`` in it): the previous index stays
        and the settings are taken back to it (:mod:`.switch_failure`); one line.
    """

    scene_changed = Signal(object, object)
    index_changed = Signal()
    stack_changed = Signal()
    rebuild_started = Signal()
    rebuild_finished = Signal(float)
    preparing_status = Signal(str)
    preparing_progress = Signal(float)
    rebuild_failed = Signal(str)

    def __init__(self, scene, path: str | None = None, warnings=(), selection=None, parent=None):
        super().__init__(parent)
        if selection:
            keep = frozenset(i for i in selection if i in scene)
            if keep:
                scene.apply(Edit(selection=keep))  # before any history: not an undo step
        self.scene = scene
        self.path = path
        self.warnings = list(warnings)
        self.stack = UndoStack(scene)
        self.sync = IndexSync(scene, follow_settings=False)
        self.last_rebuild_ms = 0.0
        self.index_version = 0
        self._edit_version = 0
        self._worker = None
        #: the backend whose kernels a background rebuild compiles first (None: none)
        self.preparing_backend: str | None = None
        self._preparation = None  # the editor.warmup.BackendPreparation of that rebuild
        self._warm_rest = None  # the thread loading a first-used backend's other kernels
        # status lines come from worker threads: re-emitted on the GUI thread
        self._status_relay = _StatusRelay(self)
        self._status_relay.text.connect(self.preparing_status)
        self._status_relay.fraction.connect(self._on_preparing_progress)
        scene.did_change.connect(self._on_scene_did_change)
        self.sync.changed.connect(self._on_index_did_change)
        self.stack.changed.connect(lambda stack: self.stack_changed.emit())

    # ------------------------------------------------------------------ reading
    @property
    def index(self):
        return self.sync.index

    @property
    def selection(self) -> frozenset:
        return self.scene.selection

    def is_dirty(self) -> bool:
        return not self.stack.is_clean()

    def display_name(self) -> str:
        import os
        return os.path.basename(self.path) if self.path else "demo level"

    # ------------------------------------------------------------------ editing
    def settings_command(self, **kwargs) -> SetSettings:
        """A :class:`~editor.model.SetSettings` for this document: it marks the document
        modified only when its file format can store the backend and parameters."""
        return SetSettings(saved=stores_settings(self.path), **kwargs)

    def push(self, command) -> bool:
        """Push ``command`` on the undo stack; returns False if it changed nothing."""
        return self.stack.push(command)

    def close(self) -> None:
        """Detach from the model (the document is being replaced)."""
        self.cancel_rebuild()
        self.sync.close()
        try:
            self.scene.did_change.disconnect(self._on_scene_did_change)
        except ValueError:
            pass

    # ------------------------------------------------------------------ index rebuilds
    def _on_scene_did_change(self, ids, kind) -> None:
        if kind != ChangeKind.SELECTION:
            self._edit_version += 1
        if kind & ChangeKind.SETTINGS and self._settings_differ():
            self.rebuild_index()
        self.scene_changed.emit(ids, kind)

    def _on_index_did_change(self, ids, kind) -> None:
        if kind == ChangeKind.SELECTION:
            return
        self.index_version += 1
        self.index_changed.emit()

    def _settings_differ(self) -> bool:
        settings = self.scene.settings
        cls = self.sync.registry.backends.get(settings.backend)
        if cls is None:
            return False
        try:
            params = parse_params(cls.Params, dict(settings.params))
        except Exception:
            return False
        return cls is not type(self.index) or params != self.index.params

    def rebuild_index(self, background: bool | None = None) -> None:
        """Rebuild the index for the scene's backend and parameters.

        The objects come from :func:`editor.model.index_input.index_input`, the record the
        command line's ``stats`` builds from too, so a backend switch here gives the very tree
        ``stats`` reports (wall segments and mesh triangles included). ``background`` None
        chooses by size (see :data:`ASYNC_REBUILD_OBJECTS`).
        """
        from editor.warmup import needs_warm_up

        settings = self.scene.settings
        cls = self.sync.registry.backend(settings.backend)
        params = parse_params(cls.Params, dict(settings.params))
        old = self.index
        # a backend used for the first time with a cold kernel cache compiles for seconds:
        # on a worker thread, before its real build (whose time then excludes the compiler)
        self.preparing_backend = cls.name if needs_warm_up(cls.name) else None
        if background is None:
            background = old.objects.count > ASYNC_REBUILD_OBJECTS or self.preparing_backend is not None
        self.cancel_rebuild()
        if not background and type(old) is cls:
            self.rebuild_started.emit()
            # new parameters for the same backend: it rebuilds from the objects, planes,
            # segments and triangles it already holds (kept in step by the sync), without a
            # walk over the scene
            start = time.perf_counter()
            previous = old.params
            try:
                old.set_params(params)
                old.nodes()
            except BaseException as exc:  # noqa: B036 - plugin code: sys.exit() included
                _quietly(lambda: old.set_params(previous))
                self._build_failed(cls.name, exc)
                return
            self.index_version += 1
            self.index_changed.emit()
            self._finish_rebuild((time.perf_counter() - start) * 1e3)
            return
        record = index_input(self.scene)
        if not background:
            self.rebuild_started.emit()
            start = time.perf_counter()
            try:
                built = _build_index(cls, params, record)
            except BaseException as exc:  # noqa: B036 - plugin code: sys.exit() included
                self._build_failed(cls.name, exc)
                return
            self.sync.index = built
            self.sync.split_planes_stale = False
            self.index_version += 1
            self.index_changed.emit()
            self._finish_rebuild((time.perf_counter() - start) * 1e3)
            return
        from .workers import RebuildWorker
        version = self._edit_version
        prepare = None
        if self.preparing_backend:
            # the first frame's kernels before the build, compiled by a child process and
            # loaded here from the disk cache; the rest (queries, edits) the same way on a
            # thread of its own, while the new tree is already on screen
            from editor.warmup import BackendPreparation
            preparation = BackendPreparation(cls.name, current=old.name,
                                             note=self._status_relay.text.emit,
                                             progress=self._status_relay.fraction.emit)
            self._preparation = preparation

            def prepare():
                preparation.first_frame()
                self._warm_rest = _start_warm_rest(preparation)
        worker = RebuildWorker(lambda: _build_index(cls, params, record), prepare=prepare)
        worker.finished_index.connect(lambda index, ms: self._adopt(index, ms, version))
        worker.failed.connect(lambda exc: self._build_failed(cls.name, exc))
        self._worker = worker
        worker.start()
        self.rebuild_started.emit()  # rebuilding (and preparing_backend) tell what runs

    def _on_preparing_progress(self, fraction: float) -> None:
        if self.preparing_backend is not None:  # not a late one from a cancelled preparation
            self.preparing_progress.emit(fraction)

    def _adopt(self, index, ms: float, version: int) -> None:
        self._worker = None
        self._preparation = None
        if version != self._edit_version:
            self.rebuild_index(background=True)  # the scene moved on while we built: again
            return
        self.sync.index = index
        self.index_version += 1
        self.index_changed.emit()
        self._finish_rebuild(ms)

    def _build_failed(self, backend: str, exc: BaseException) -> None:
        """Keep the working index, take the choice back and say so in one line."""
        from .switch_failure import describe_build_failure, take_back_choice

        self._worker = None
        self._preparation = None
        self.preparing_backend = None
        message = describe_build_failure(self.sync.registry, backend, exc, self.index.name)
        take_back_choice(self)
        self.rebuild_failed.emit(message)

    def _finish_rebuild(self, ms: float) -> None:
        self.preparing_backend = None
        self.last_rebuild_ms = ms
        self.rebuild_finished.emit(ms)

    def cancel_rebuild(self) -> None:
        """Forget a rebuild in progress (its result is dropped when it arrives)."""
        if self._worker is not None:
            self._worker.cancel()
            self._worker = None
        if self._preparation is not None:
            self._preparation.cancel()  # ends its compile process
            self._preparation = None

    @property
    def rebuilding(self) -> bool:
        return self._worker is not None


class _StatusRelay(QObject):
    """Carries a status line and progress from worker threads to the GUI thread (queued
    signals)."""

    text = Signal(str)
    fraction = Signal(float)


def _start_warm_rest(preparation):
    """Load (or compile) the remaining kernels of a first-used backend on a thread of their
    own (:meth:`editor.warmup.BackendPreparation.rest`)."""
    import threading

    thread = threading.Thread(target=preparation.rest, name=f"warm-{preparation.backend}",
                              daemon=True)
    thread.start()
    return thread


def _quietly(call) -> None:
    try:
        call()
    except Exception:  # the index keeps whatever state it could; the message is already out
        pass


def _build_index(cls, params, record):
    """A new ``cls(params)`` index built from an :class:`~editor.model.index_input.IndexInput`."""
    index = cls(params)
    record.build(index)
    index.nodes()  # flush lazy work now (on the worker thread when there is one)
    return index
