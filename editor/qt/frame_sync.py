"""One composite of the window per frame, with every view that changed in it.

A ``QGraphicsScene`` (each 2D view, every pyqtgraph plot) reports its item changes to its
viewport through a queued call, one event-loop turn after the change. With several scenes in
one window each queued call lands in a turn of its own, and each turn ends with the window
repainting and compositing its whole 1600×1000 surface: during simulation playback the three
2D views and the three timeline plots gave up to six composites per shown frame, each 15–45 ms
under a software OpenGL, so playback stalled at 6–10 frames per second.

:class:`FrameSync` watches the top-level window's ``UpdateRequest`` (the event that paints and
composites it) and, just before the window handles it, delivers the scenes' pending queued
calls: their viewports join the frame that is about to be painted instead of asking for one
more.

It first lets the editor state recompute what an edit left dirty (its posted flush): an edit
that also repaints a panel (the undo history, the status bar) posts that repaint before the
flush, and the window would otherwise paint and composite a frame without the edit and then a
second one with it — on e3m4 under a software OpenGL, 20–40 ms of an arrow-key nudge.

While a game streams in, :attr:`FrameSync.min_interval` paces the composites: an update asked
for sooner after the last composite waits (the window's update request is held and posted
again when due) and joins the next one. With 10,000 moving objects half of the composites had
shown only a status figure or a panel's line, never a new frame of the game, and each paid the
window's paint pass.
"""
from __future__ import annotations

import time

import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QGraphicsView

#: the window's graphics views are looked up again after this long (seconds): a lookup wraps
#: every widget of the window for Python (about 1.5 ms, a twentieth of a live frame's window
#: time), and a view added meanwhile (compare mode) only misses a composite or two
VIEWS_LOOKUP_S = 1.0


class CompositeCounter(QObject):
    """Count the composites of ``window``: its ``UpdateRequest`` events, in :attr:`frames`.

    Parameters
    ----------
    window : QWidget
        A top-level window; the filter is installed on it.
    parent : QObject, optional
        The counter's owner (``None``: whoever keeps a reference).
    """

    def __init__(self, window, parent=None) -> None:
        super().__init__(parent)
        self.window = window
        self.frames = 0
        window.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.window and event.type() == QEvent.Type.UpdateRequest:
            if self.hold_composite():
                return True
            self.frames += 1
            self.before_composite()
        return False

    def hold_composite(self) -> bool:
        """Whether the window's update request now is held back (it is then posted again)."""
        return False

    def before_composite(self) -> None:
        """Called just before the window paints and composites a frame."""


class FrameSync(CompositeCounter):
    """Fold the pending updates of every graphics scene in ``window`` into its next frame.

    Parameters
    ----------
    window : QWidget
        A top-level window; the filter is installed on it and lives as long as it.
    """

    def __init__(self, window) -> None:
        super().__init__(window, parent=window)
        #: seconds at least between two composites (None: no pacing; see the module docstring)
        self.min_interval: float | None = None
        self.held = 0  # update requests held back to join a later composite
        #: when the last composite started (perf_counter; composites are paced from it)
        self.last_composite_at = 0.0
        self._due = QTimer(self)
        self._due.setSingleShot(True)
        self._due.timeout.connect(self._post_update_request)
        self._views: list[QGraphicsView] = []
        self._views_at = float("-inf")  # when they were looked up (perf_counter)

    def hold_composite(self) -> bool:
        now = time.perf_counter()
        wait = (self.last_composite_at + self.min_interval - now) if self.min_interval else 0.0
        if wait > 0.001:
            # Qt posts one update request at a time and waits for it: held here, it is posted
            # again when due, and every update asked for meanwhile joins that composite
            if not self._due.isActive():
                self.held += 1
                self._due.start(max(1, round(wait * 1000)))
            return True
        self.last_composite_at = now
        return False

    def _post_update_request(self) -> None:
        QCoreApplication.postEvent(self.window, QEvent(QEvent.Type.UpdateRequest),
                                   Qt.EventPriority.LowEventPriority.value)

    def before_composite(self) -> None:
        state = getattr(self.window, "state", None)
        if state is not None and state.flush_pending():
            state.flush()
        for view in self._graphics_views():
            scene = view.scene()
            if scene is not None and view.isVisible():
                QCoreApplication.sendPostedEvents(scene, QEvent.Type.MetaCall)

    def _graphics_views(self) -> list[QGraphicsView]:
        now = time.perf_counter()
        if now - self._views_at > VIEWS_LOOKUP_S:
            self._views, self._views_at = self.window.findChildren(QGraphicsView), now
        return [view for view in self._views if shiboken6.isValid(view)]
