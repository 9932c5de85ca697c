"""Compare mode follows the editor's timeline: both sides show the frame on the timeline.

Whenever the timeline shows a frame (a simulation run, a loaded recording, a live game), each
side replays that frame of the timeline's recording into a tree of its own backend
(:meth:`.side_state.SideState.show_frame`): the static objects plus the frame's movers, reached
through the same frame step the timeline uses. The views draw the frame's moving bodies, and the
overlays (pair tests, awake, lifespan...) read the frame's tree, on the shared colour scale.
When the timeline stops, the sides show the edited level again.

The sides update at most once per displayed frame: a frame change only arms a single-shot
timer, and when it fires the sides go straight to the newest frame (a frame a few recorded
frames ahead is stepped to, anything else rebuilt at once), so frames the display skipped are
never worked through one by one and the window's event loop runs between updates.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal

from editor.model.compare.frames import FrameFigures, FrameHistory
from spatial.errors import PartitionStudioError

from ..timeline.live_view import ASLEEP_RGB, AWAKE_RGB
from ..views.line_layers import add_box_outlines

#: milliseconds between side updates at most: one displayed frame at 60 Hz
TICK_MS = 16


class TimelineFollower(QObject):
    """Keeps the sides of compare mode on the timeline's frame (see the module docstring).

    Signals: ``figures_changed(FrameFigures or None)`` after the sides reached a frame (None:
    they show the document), ``problem(str)`` when a frame cannot be shown (one line).
    """

    figures_changed = Signal(object)
    problem = Signal(str)

    def __init__(self, controller, sides, views, parent=None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.sides = list(sides)
        self.views = list(views)
        self.history = FrameHistory()
        self.figures: FrameFigures | None = None
        self.bodies = [add_box_outlines(view, AWAKE_RGB, ASLEEP_RGB, z=7) for view in self.views]
        self.bodies_drawn = 0
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self.catch_up)
        controller.frame_changed.connect(self._on_frame_changed)
        controller.source_changed.connect(self._on_source_changed)

    def close(self) -> None:
        self.timer.stop()
        self.controller.frame_changed.disconnect(self._on_frame_changed)
        self.controller.source_changed.disconnect(self._on_source_changed)

    def _on_frame_changed(self, _stats) -> None:
        self.request()

    def _on_source_changed(self) -> None:
        self.history.clear()  # another run, recording or game: its own frames
        self.request()

    def request(self) -> None:
        """Bring the sides to the timeline's frame within a displayed frame (coalesced)."""
        if not self.timer.isActive():
            self.timer.start()

    def restart(self) -> None:
        """The sides were rebuilt (another backend or level): forget the figures of the old
        ones and show the timeline's frame again."""
        self.history.clear()
        self.request()

    def wanted(self):
        """``(recording, frame)`` the timeline shows, or ``(None, -1)`` for the document."""
        c = self.controller
        recording = c.recording
        if not c.active or c.frame < 0 or recording is None:
            return None, -1
        return recording, c.frame

    def ready(self) -> bool:
        """Every side shows a tree (none is waiting for its first build)."""
        return all(side.document is not None for side in self.sides)

    def catch_up(self) -> None:
        """Show the timeline's frame in every side now (what the timer runs)."""
        if not self.ready():
            return  # a side is being built; it asks again once it shows its tree
        recording, frame = self.wanted()
        if frame >= 0 and recording.index_of(frame) < 0:
            self.problem.emit(f"frame {frame} is not recorded (Record is off): "
                              "the sides show the edited level")
            frame = -1
        if frame < 0:
            self._show_document()
            return
        try:
            a, b = (side.show_frame(recording, frame) for side in self.sides)
        except (KeyError, PartitionStudioError) as exc:  # e.g. over the work budget: one line
            self.problem.emit(f"frame {frame}: {exc}")
            self._show_document()
            return
        self.figures = FrameFigures(frame, a, b)
        self.history.add(self.figures)
        self._draw_bodies(recording.get(frame))
        self.figures_changed.emit(self.figures)

    def _show_document(self) -> None:
        for side in self.sides:
            side.show_document()
        self._draw_bodies(None)
        if self.figures is not None:
            self.figures = None
            self.figures_changed.emit(None)

    def _draw_bodies(self, record) -> None:
        if record is None:
            lo = hi = np.empty((0, 3))
            awake = np.empty(0, dtype=bool)
        else:
            lo, hi, awake = record.lo, record.hi, record.awake
        self.bodies_drawn = len(lo)
        for item in self.bodies:
            item.set_boxes(lo, hi, awake)
