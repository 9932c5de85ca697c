"""The open document as the GUI sees it: scene, undo stack and index sync behind Qt signals.

The model is Qt-free and notifies through plain callbacks; :class:`Document` re-emits them as
Qt signals so widgets connect the usual way. Widgets never edit the scene: they call
:meth:`Document.push` with a command of :mod:`editor.model.commands`.

Backend changes are recorded in the document with the undoable ``SetSettings`` command, and
the model's :class:`~editor.model.IndexSync` follows them with its own rebuild policy: the
document only gives it a thread to build on (:mod:`.thread_runner`) and a kernel warm-up
(:mod:`.backend_warmup`), and relays what it reports as signals, so a big rebuild never
freezes the window.
"""
from __future__ import annotations

import warnings

from PySide6.QtCore import QObject, Signal

from editor.model import ChangeKind, IndexSync, SetSettings, UndoStack
from editor.model.loading import stores_settings
from editor.model.scene import Edit

from .backend_warmup import KernelWarmUpHook
from .thread_runner import run_on_thread


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

    def __init__(self, scene, path: str | None = None, warnings=(), selection=None, parent=None,
                 index=None):
        super().__init__(parent)
        if selection:
            keep = frozenset(i for i in selection if i in scene)
            if keep:
                scene.apply(Edit(selection=keep))  # before any history: not an undo step
        self.scene = scene
        self.path = path
        self.warnings = list(warnings)
        self.stack = UndoStack(scene)
        # status lines come from worker threads: re-emitted on the GUI thread
        self._status_relay = _StatusRelay(self)
        self._status_relay.text.connect(self.preparing_status)
        self._status_relay.fraction.connect(self._on_preparing_progress)
        # the model owns the rebuild policy; the editor gives it a thread and a warm-up
        warm_up = KernelWarmUpHook(self._status_relay.text.emit, self._status_relay.fraction.emit)
        # ``index``: built with the level on the loading thread for the document's own settings
        self.sync = IndexSync.following(scene, index, runner=run_on_thread, warm_up=warm_up) \
            if index is not None else IndexSync(scene, runner=run_on_thread, warm_up=warm_up)
        self.index_version = 0
        scene.did_change.connect(self._on_scene_did_change)
        self.sync.changed.connect(self._on_index_did_change)
        self.sync.rebuild_started.connect(self.rebuild_started.emit)
        self.sync.rebuild_finished.connect(self.rebuild_finished.emit)
        self.sync.rebuild_failed.connect(self._build_failed)
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
        """Detach from the model and from the window (the document is being replaced)."""
        self.cancel_rebuild()
        self.sync.close()
        try:
            self.scene.did_change.disconnect(self._on_scene_did_change)
        except ValueError:
            pass
        # the window's slots on this document's signals are often closures holding it; Qt
        # keeps them where Python's collector cannot see, so a replaced level (its scene,
        # index and undo history) stayed in memory until the editor quit
        for name in _SIGNALS:
            signal = getattr(self, name)
            with warnings.catch_warnings():  # PySide warns when a signal had no slot
                warnings.simplefilter("ignore", RuntimeWarning)
                signal.disconnect()

    # ------------------------------------------------------------------ relays
    def _on_scene_did_change(self, ids, kind) -> None:
        self.scene_changed.emit(ids, kind)

    def _on_index_did_change(self, ids, kind) -> None:
        if kind == ChangeKind.SELECTION:
            return
        self.index_version += 1
        self.index_changed.emit()

    def _on_preparing_progress(self, fraction: float) -> None:
        if self.sync.preparing_backend is not None:  # not a late one from a cancelled preparation
            self.preparing_progress.emit(fraction)

    def _build_failed(self, backend: str, exc: BaseException) -> None:
        """Keep the working index, take the choice back and say so in one line."""
        from .switch_failure import describe_build_failure, take_back_choice

        message = describe_build_failure(self.sync.registry, backend, exc, self.index.name)
        take_back_choice(self)
        self.rebuild_failed.emit(message)

    def cancel_rebuild(self) -> None:
        """Forget a rebuild in progress (its result is dropped when it arrives)."""
        self.sync.cancel()

    @property
    def rebuilding(self) -> bool:
        """A rebuild runs on a worker thread (see :attr:`IndexSync.rebuilding`)."""
        return self.sync.rebuilding

    @property
    def preparing_backend(self) -> str | None:
        """The backend whose kernels the rebuild in flight prepares first (None: none)."""
        return self.sync.preparing_backend

    @property
    def last_rebuild_ms(self) -> float:
        return self.sync.last_rebuild_ms


class _StatusRelay(QObject):
    """Carries a status line and progress from worker threads to the GUI thread (queued
    signals)."""

    text = Signal(str)
    fraction = Signal(float)


#: the names of :class:`Document`'s signals (disconnected by :meth:`Document.close`)
_SIGNALS = tuple(name for name, value in vars(Document).items() if isinstance(value, Signal))
