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
"""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject
from PySide6.QtWidgets import QGraphicsView


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
            self.frames += 1
            self.before_composite()
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

    def before_composite(self) -> None:
        state = getattr(self.window, "state", None)
        if state is not None and state.flush_pending():
            state.flush()
        for view in self.window.findChildren(QGraphicsView):
            scene = view.scene()
            if scene is not None and view.isVisible():
                QCoreApplication.sendPostedEvents(scene, QEvent.Type.MetaCall)
