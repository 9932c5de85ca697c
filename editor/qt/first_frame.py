"""The editor's first frame: work that waits for it, and a report of when it came.

:class:`FirstPaint` tells when the central views have painted for the first time (the window
holds back work the first frame does not need until then).

Set ``PARTITION_STUDIO_REPORT_FIRST_FRAME=PATH`` and ``python app.py`` runs as usual until the
main window's central views (the 3D view, or its placeholder, and the three 2D views) have all
received their first paint event; on the next event-loop turn, once that frame is drawn, it
writes a JSON document to ``PATH`` and quits. Without the variable no report is written.

The document holds ``first_frame_s``, seconds from the start of ``app.py`` to that frame, and
``marks``: readings of :func:`time.perf_counter` at each start-up phase (``launched``,
``gui_entered``, ``qt_application``, ``modules_imported``, ``window_built``,
``document_loaded``, ``shown``, ``first_frame`` and, when the window came before its level
(a first start loads it on a worker thread), ``level_shown``). On Linux that clock is the system-wide
monotonic clock, so a parent process that read it just before spawning the editor can place
every phase relative to the spawn (``benchmarks/startup.py`` does).
"""
from __future__ import annotations

import json
import os
import time

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication

from spatial.atomic import atomic_write_text

#: the environment variable naming the file to write
ENV_VARIABLE = "PARTITION_STUDIO_REPORT_FIRST_FRAME"


def report_path() -> str | None:
    """The file to write the first-frame report to, or ``None`` when not asked for one."""
    return os.environ.get(ENV_VARIABLE) or None


class StartupMarks:
    """Named :func:`time.perf_counter` readings of the start-up phases, in order."""

    def __init__(self, launched: float | None = None) -> None:
        self.marks: dict[str, float] = {}
        if launched is not None:
            self.marks["launched"] = launched

    def mark(self, name: str, at: float | None = None) -> None:
        """Record phase ``name`` as reached now (or at the earlier reading ``at``)."""
        self.marks[name] = time.perf_counter() if at is None else at


class FirstPaint(QObject):
    """Emits ``painted`` once, after every widget in ``widgets`` has painted for the first time.

    The event filter sees a paint event before the widget handles it, so ``painted`` is
    emitted on the next event-loop turn, when that paint pass (and so the frame) is done.
    Work the first frame does not need waits for it (see :class:`~.main_window.MainWindow`).
    """

    painted = Signal()

    def __init__(self, widgets, parent=None) -> None:
        super().__init__(parent)
        self.done = False
        self._waiting = set(widgets)
        for widget in self._waiting:
            widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Paint and watched in self._waiting:
            self._waiting.discard(watched)
            watched.removeEventFilter(self)
            # a view the user collapsed (a splitter at zero size) never paints: do not wait for it
            for widget in [w for w in self._waiting if not w.isVisible() or w.rect().isEmpty()]:
                self._waiting.discard(widget)
                widget.removeEventFilter(self)
            if not self._waiting:
                QTimer.singleShot(0, self._finish)
        return False

    def _finish(self) -> None:
        self.done = True
        self.painted.emit()


class FirstFrameReporter(QObject):
    """Writes the start-up report and quits once the window's first frame is on screen.

    Parameters
    ----------
    window : MainWindow
        The editor window (its ``first_paint`` watcher says when the frame is done).
    path : str
        Where to write the JSON report (replaced atomically, so a reader never sees half).
    marks : StartupMarks
        The phases recorded so far; ``first_frame`` is added here.
    """

    def __init__(self, window, path: str, marks: StartupMarks) -> None:
        super().__init__(window)
        self.window = window
        self.path = path
        self.marks = marks
        window.first_paint.painted.connect(self._report)

    def _report(self) -> None:
        self.marks.mark("first_frame")
        if self.window.document is None:
            # a first start shows the window before its level (loading on a worker while the
            # kernels compile): the report waits for the level's own first frame too
            self.window.state.document_replaced.connect(self._on_level)
            return
        self._write()

    def _on_level(self, doc) -> None:
        self.window.state.document_replaced.disconnect(self._on_level)
        self._level_paint = FirstPaint(self.window.central_views(), self)
        self._level_paint.painted.connect(self._on_level_painted)
        for view in self.window.central_views():
            view.update()

    def _on_level_painted(self) -> None:
        self.marks.mark("level_shown")
        self._write()

    def _write(self) -> None:
        marks = self.marks.marks
        start = marks["launched"] if "launched" in marks else marks["gui_entered"]
        report = {"first_frame_s": marks["first_frame"] - start, "clock": "time.perf_counter",
                  "pid": os.getpid(), "marks": marks}
        atomic_write_text(self.path, json.dumps(report, indent=1))
        self.window.ask_save = lambda: "discard"  # quitting must never wait on a dialog
        self.window.close()
        QApplication.quit()  # a static slot: no instance needed
