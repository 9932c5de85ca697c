"""Redraws throttled to the frame rate, and never more than half of the GUI thread's time.

A burst of results (tuner trials, index changes during a drag) asks for a redraw each; a
:class:`Throttle` runs the redraw once for the burst, at most once a frame, and after a slow
redraw waits as long again before the next, so a redraw that grows with the data (a table of
every trial) cannot starve input handling.
"""
from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer

#: one frame at 60 Hz
FRAME_MS = 16


class Throttle(QObject):
    """Call ``redraw`` soon after :meth:`request`, coalescing requests.

    Parameters
    ----------
    redraw : callable
        The work to run on the GUI thread.
    min_interval_ms : int
        Shortest gap between two runs (default one frame).
    """

    def __init__(self, redraw, min_interval_ms: int = FRAME_MS, parent=None) -> None:
        super().__init__(parent)
        self._redraw = redraw
        self.min_interval_ms = min_interval_ms
        self._last_end = 0.0
        self._last_ms = 0.0
        self.runs = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.run_now)

    def request(self) -> None:
        """Ask for a redraw; requests before it runs collapse into one."""
        if self._timer.isActive():
            return
        gap = max(self.min_interval_ms, self._last_ms)  # the GUI thread gets at least as long back
        since = (time.perf_counter() - self._last_end) * 1e3
        self._timer.start(int(max(0.0, gap - since)))

    def run_now(self) -> None:
        """Redraw at once (a pending request is served by it)."""
        self._timer.stop()
        start = time.perf_counter()
        try:
            self._redraw()
        finally:
            self._last_end = time.perf_counter()
            self._last_ms = (self._last_end - start) * 1e3
            self.runs += 1

    def pending(self) -> bool:
        return self._timer.isActive()
