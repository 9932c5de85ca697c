"""What every dock panel shares: an object name, a box layout with margins, deferred refreshes.

Panels follow either the editor state (most docks) or the timeline controller; the base class
keeps the construction in one place so margins and names stay consistent across the docks.
"""
from __future__ import annotations

import time
from typing import Any, TypeVar

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtWidgets import QBoxLayout, QFormLayout, QPushButton, QWidget

W = TypeVar("W", bound=QWidget)

#: margins of a dock panel's layout (px): docks sit edge to edge, so a little air between them
PANEL_MARGINS = (6, 6, 6, 6)


class Panel(QWidget):
    """A dock panel: a named widget with a box layout, :attr:`body`, filled by the subclass.

    Parameters
    ----------
    object_name : str
        The Qt object name (tests and style sheets find the panel by it).
    parent : QWidget, optional
    margins : tuple of int, optional
        Left, top, right, bottom margins of :attr:`body`.
    direction : QBoxLayout.Direction, optional
        Top to bottom (default) or left to right.
    """

    def __init__(self, object_name: str, parent=None, margins=PANEL_MARGINS,
                 direction=QBoxLayout.Direction.TopToBottom) -> None:
        super().__init__(parent)
        self.setObjectName(object_name)
        self.body = QBoxLayout(direction, self)
        self.body.setContentsMargins(*margins)

    def add(self, widget: W, object_name: str | None = None, stretch: int = 0) -> W:
        """Append ``widget`` to :attr:`body`, naming it when ``object_name`` is given."""
        if object_name is not None:
            widget.setObjectName(object_name)
        self.body.addWidget(widget, stretch)
        return widget


class StatePanel(Panel):
    """A panel that follows the editor state (:class:`~editor.qt.editor_state.EditorState`)."""

    def __init__(self, state, object_name: str, parent=None, **layout) -> None:
        super().__init__(object_name, parent, **layout)
        self.state = state


def push_button(text: str, on_click, tooltip: str | None = None,
                object_name: str | None = None) -> QPushButton:
    """A push button calling ``on_click`` when clicked, with an optional tooltip and object name."""
    button = QPushButton(text)
    if object_name is not None:
        button.setObjectName(object_name)
    if tooltip is not None:
        button.setToolTip(tooltip)
    button.clicked.connect(on_click)
    return button


def form_host() -> tuple[QWidget, QFormLayout]:
    """A widget holding a margin-less form, for rows rebuilt whenever their subject changes."""
    host = QWidget()
    form = QFormLayout(host)
    form.setContentsMargins(0, 0, 0, 0)
    return host, form


def single_shot_timer(owner: QObject, interval_ms: int, slot) -> QTimer:
    """A single-shot timer owned by ``owner`` that calls ``slot`` ``interval_ms`` after a start.

    Panels use it to coalesce bursts of changes (edits, played frames) into one refresh.
    """
    timer = QTimer(owner)
    timer.setSingleShot(True)
    timer.setInterval(interval_ms)
    timer.timeout.connect(slot)
    return timer


class _OneRefreshPerPass(QObject):
    """Refreshes the panels waiting for a still frame one per event-loop pass, not all in the
    one that paused: each timeline dock's list (the hotspots' objects, the frame's pairs) costs
    tens of milliseconds on a real level, and together with the paint after a pause they held
    the window over 200 ms.

    Each refresh is an event posted to this object: an event posted while Qt delivers posted
    events waits for the next pass. (A zero-interval timer restarted from its own timeout did
    not always wait: when another timer had fired first in the pass and the refresh took
    longer than the interval, Qt fired it again in the same pass.)"""

    _EVENT = QEvent.Type(QEvent.registerEventType())

    def __init__(self) -> None:
        super().__init__()
        self._waiting: list = []
        self._posted = False

    def add(self, panel) -> None:
        if panel not in self._waiting:
            self._waiting.append(panel)
        self._post()

    def _post(self) -> None:
        if not self._posted:
            self._posted = True
            QCoreApplication.postEvent(self, QEvent(self._EVENT))

    def event(self, event: QEvent) -> bool:
        if event.type() != self._EVENT:
            return super().event(event)
        self._posted = False
        if self._waiting:
            panel = self._waiting.pop(0)
            if self._waiting:
                self._post()  # delivered in a later pass than this one
            try:
                panel.refresh()
            except RuntimeError:  # the panel's widget is gone (its window closed meanwhile)
                pass
        return True


#: the panels waiting to refresh for a paused or stopped timeline (made on first use, on the
#: window's thread, whose event loop delivers its events)
_STILL_FRAME_REFRESHES: _OneRefreshPerPass | None = None


def _refresh_for_still_frame(panel) -> None:
    global _STILL_FRAME_REFRESHES
    if _STILL_FRAME_REFRESHES is None:
        _STILL_FRAME_REFRESHES = _OneRefreshPerPass()
    _STILL_FRAME_REFRESHES.add(panel)


class PlaybackRefresh:
    """Mixin for widgets that follow the timeline: refresh at once on a step, seek or stop, and
    at most every ``interval_ms`` while playing (a trend, not every frame).

    The widget calls :meth:`follow_playback` from its constructor and implements ``refresh()``,
    which should stop ``self._timer`` first.
    """

    #: the timeline controller the widget follows (set by the widget before following it)
    controller: Any

    def refresh(self) -> None:
        """Redraw from the controller's current frame (the widget implements it)."""
        raise NotImplementedError

    #: while playing, a refresh waits at least this many times the last one's cost, so a
    #: slow list (a live game's hotspots over tens of thousands of cells) keeps at most about
    #: a tenth of the window's time
    COST_FACTOR = 10.0

    def follow_playback(self, controller, interval_ms: int) -> None:
        """Connect to ``controller``'s frame and play-state signals."""
        assert isinstance(self, QObject), "PlaybackRefresh is a mixin for widgets"
        self._interval_ms = interval_ms
        self._refresh_ms = 0.0
        self._timer = single_shot_timer(self, interval_ms, self._timed_refresh)
        controller.frame_changed.connect(self._on_frame_changed)
        controller.state_changed.connect(self._on_play_state_changed)

    def _on_play_state_changed(self, state: str) -> None:
        if state != "playing":
            # the still frame's refresh replaces a timed one still pending: two panels' timers
            # firing in one pass would hold the window as long as refreshing all at once
            self._timer.stop()
            _refresh_for_still_frame(self)

    def _timed_refresh(self) -> None:
        start = time.perf_counter()
        self.refresh()
        self._refresh_ms = (time.perf_counter() - start) * 1e3

    def _on_frame_changed(self, stats) -> None:
        if stats is None or self.controller.play_state != self.controller.PLAYING:
            self.refresh()  # a step, a seek or a stop: answer at once
        elif not self._timer.isActive():
            self._timer.start(max(self._interval_ms, int(self._refresh_ms * self.COST_FACTOR)))
