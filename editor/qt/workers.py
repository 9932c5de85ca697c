"""Work that must not freeze the window: opening files and rebuilding big indexes.

Each worker is a ``QThread`` running one job and reporting back through queued signals, so
results always arrive on the GUI thread. Cancelling cannot interrupt compiled code; it marks
the job so its result is dropped when it arrives, and the GUI moves on at once.
"""
from __future__ import annotations

import time

from PySide6.QtCore import QThread, Signal


class _Cancellable(QThread):
    def __init__(self) -> None:
        super().__init__()
        self._cancelled = False
        self.finished.connect(self.deleteLater)

    def cancel(self) -> None:
        self._cancelled = True

    @property
    def cancelled(self) -> bool:
        return self._cancelled


class LoadWorker(_Cancellable):
    """Read a level file into a scene on a worker thread.

    Signals: ``progress(fraction, text)``, ``loaded(LoadedScene)``, ``failed(message)``.
    """

    progress = Signal(float, str)
    loaded = Signal(object)
    failed = Signal(str)

    def __init__(self, path: str | None) -> None:
        super().__init__()
        self.path = path

    def run(self) -> None:
        from .loading import OpenError, load_scene_file
        try:
            result = load_scene_file(self.path, progress=lambda f, t: self.progress.emit(f, t))
        except OpenError as exc:
            if not self._cancelled:
                self.failed.emit(str(exc))
            return
        except Exception as exc:  # an importer bug must not take the editor down
            if not self._cancelled:
                self.failed.emit(f"{self.path}: {type(exc).__name__}: {exc}")
            return
        if not self._cancelled:
            self.loaded.emit(result)


class RebuildWorker(_Cancellable):
    """Build a fresh index of ``cls(params)`` over a snapshot of the scene's objects.

    Signal ``finished_index(index, build_ms)`` unless cancelled.
    """

    finished_index = Signal(object, float)

    def __init__(self, cls, params, ids, lo, hi, dynamic, planes) -> None:
        super().__init__()
        self._args = (cls, params, ids, lo, hi, dynamic, planes)

    def run(self) -> None:
        cls, params, ids, lo, hi, dynamic, planes = self._args
        start = time.perf_counter()
        index = cls(params)
        index.build(ids, lo, hi, dynamic=dynamic, awake=True)
        index.set_split_planes(planes)
        index.nodes()  # flush lazy work here, not on the GUI thread
        if not self._cancelled:
            self.finished_index.emit(index, (time.perf_counter() - start) * 1e3)
