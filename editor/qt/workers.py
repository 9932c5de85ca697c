"""Work that must not freeze the window: opening files and rebuilding big indexes.

Each worker is a ``QThread`` running one job and reporting back through queued signals, so
results always arrive on the GUI thread. Cancelling cannot interrupt compiled code; it marks
the job so its result is dropped when it arrives, and the GUI moves on at once.
"""
from __future__ import annotations

import time
import warnings

from PySide6.QtCore import QThread, QTimer, Signal

#: workers whose thread may still run: a QThread destroyed while running aborts the process,
#: so each one is kept alive here until its thread has really finished
_RUNNING: set = set()


def wait_for_workers(timeout_ms: int = 10000) -> list:
    """Cancel every worker and wait up to ``timeout_ms`` for their threads to end (before the
    window goes away); returns those still running (compiled code cannot be interrupted).
    They stay referenced here: destroying a running ``QThread`` aborts the process, so the
    editor ends those with :func:`editor.qt.shutdown.exit_code` instead."""
    deadline = time.monotonic() + timeout_ms / 1000
    for worker in list(_RUNNING):
        worker.cancel()
        worker.wait(max(0, int((deadline - time.monotonic()) * 1000)))
    running = [w for w in list(_RUNNING) if w.isRunning()]
    _RUNNING.intersection_update(running)
    return running


class _Cancellable(QThread):
    """A worker thread that lets go of its job and its receivers once it finished.

    Whoever starts a worker usually connects its signals to a closure that names the worker
    (to tell a superseded answer), and the job is a closure over what it reads: a frame with
    its trees, an index snapshot. A connection is held on Qt's side, out of reach of Python's
    collector, so that cycle kept every worker and everything its job read alive (a live
    game's Hotspots search leaked a frame a second). When the thread has finished and its
    answer was delivered, :meth:`_release` drops the job and disconnects the signals.
    """

    #: the worker's own signals, disconnected once it finished (see :meth:`_release`)
    RELEASED_SIGNALS: tuple[str, ...] = ()

    def __init__(self) -> None:
        super().__init__()
        self._cancelled = False
        self.finished.connect(self._on_finished)

    def start(self, priority: QThread.Priority = QThread.Priority.InheritPriority) -> None:
        _RUNNING.add(self)  # kept alive until finished (see _RUNNING)
        super().start(priority)

    def _on_finished(self) -> None:
        # queued after the answer's signals, so those were delivered; released on the next
        # turn, not while Qt still delivers this signal of the object
        QTimer.singleShot(0, self._release)

    def _release(self) -> None:
        self.wait()  # the thread has ended its last instructions too
        _RUNNING.discard(self)
        self._drop_job()
        for name in (*self.RELEASED_SIGNALS, "finished"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # nothing was connected
                try:
                    getattr(self, name).disconnect()
                except (RuntimeError, TypeError):
                    pass

    def _drop_job(self) -> None:
        """Forget the job's callables (and what their closures read)."""

    def cancel(self) -> None:
        self._cancelled = True

    @property
    def cancelled(self) -> bool:
        return self._cancelled


class LoadWorker(_Cancellable):
    """Read a level file into a document on a worker thread (:func:`editor.model.loading.open_level`).

    Signals: ``progress(fraction, text)``, ``loaded(LoadResult)``, ``failed(message)``.
    With ``prepare`` given, ``prepare(scene)`` runs on the worker too once the file is read
    (the draw arrays, so the GUI thread only swaps them in); its value is :attr:`prepared`.
    With ``before_reading`` given, it runs on the worker before the file is read: on a first
    start it waits (without the interpreter lock) until the warm-up process has cached the
    kernels of reading a level, so this thread loads them instead of compiling them.
    """

    progress = Signal(float, str)
    loaded = Signal(object)
    failed = Signal(str)
    RELEASED_SIGNALS = ("progress", "loaded", "failed")

    def __init__(self, path: str | None, prepare=None, before_reading=None) -> None:
        super().__init__()
        self.path = path
        self._prepare = prepare
        self._before_reading = before_reading
        self.prepared = None

    def run(self) -> None:
        from editor.model.loading import open_level
        from spatial.errors import PartitionStudioError
        if self._before_reading is not None:
            self._before_reading()
        if self._cancelled:
            return
        try:
            result = open_level(self.path, progress=lambda f, t: self.progress.emit(f, t),
                                cancel=lambda: self._cancelled)
        except PartitionStudioError as exc:
            if not self._cancelled:
                self.failed.emit(str(exc))
            return
        except Exception as exc:  # an importer bug must not take the editor down
            if not self._cancelled:
                self.failed.emit(f"{self.path}: {type(exc).__name__}: {exc}")
            return
        if self._prepare is not None and not self._cancelled:
            self.progress.emit(1.0, "Preparing the views…")
            try:
                self.prepared = self._prepare(result.document)
            except Exception:
                self.prepared = None  # the GUI thread builds them itself, as without a worker
        if not self._cancelled:
            self.loaded.emit(result)

    def _drop_job(self) -> None:
        self._prepare = self._before_reading = None


class RebuildWorker(_Cancellable):
    """Run ``build()`` (which returns a ready index) on a worker thread.

    Signal ``finished_index(index, build_ms)`` unless cancelled. ``prepare()``, when given,
    runs first (compiling a backend's kernels on its first use) and is not part of
    ``build_ms``.
    """

    finished_index = Signal(object, float)
    failed = Signal(object)  # the exception the build raised (plugin code: even SystemExit)
    RELEASED_SIGNALS = ("finished_index", "failed")

    def __init__(self, build, prepare=None) -> None:
        super().__init__()
        self._build = build
        self._prepare = prepare

    def run(self) -> None:
        if self._prepare is not None:
            try:
                self._prepare()
            except Exception:  # the build below compiles what it needs itself
                pass
            if self._cancelled:
                return
        start = time.perf_counter()
        try:
            index = self._build()
        except BaseException as exc:  # noqa: B036 - a plugin's sys.exit() must not end us
            if not self._cancelled:
                self.failed.emit(exc)
            return
        if not self._cancelled:
            self.finished_index.emit(index, (time.perf_counter() - start) * 1e3)

    def _drop_job(self) -> None:
        self._build = self._prepare = None


class CallWorker(_Cancellable):
    """Run ``job()`` on a worker thread and hand its value back.

    Signals ``result(value, ms)`` or ``failed(message)``, unless cancelled. The job must own
    what it reads (a snapshot), since the GUI thread goes on editing meanwhile.
    """

    result = Signal(object, float)
    failed = Signal(str)
    RELEASED_SIGNALS = ("result", "failed")

    def __init__(self, job) -> None:
        super().__init__()
        self._job = job

    def run(self) -> None:
        start = time.perf_counter()
        try:
            value = self._job()
        except Exception as exc:  # reported as one line by the receiver, never a traceback
            if not self._cancelled:
                self.failed.emit(f"{type(exc).__name__}: {exc}")
            return
        if not self._cancelled:
            self.result.emit(value, (time.perf_counter() - start) * 1e3)

    def _drop_job(self) -> None:
        self._job = None
