"""A live session seen as the timeline's running source (Qt-free).

The editor's timeline drives a *source* that has a frame, an index, a recording, hotspots and
a ``step()`` (:class:`~editor.model.simulation.Simulation` is the other one). A game's frames
are processed as they arrive (:meth:`LiveSession.feed`), not when the timeline asks, so
:meth:`LiveSource.step` only hands the newest processed frame to the display, once: when the
display falls behind the game, it skips display frames, never game frames.
"""
from __future__ import annotations

from editor.model.frame_step import FrameStats
from editor.model.simulation import SimulationConfig

from .session import LiveSession


class LiveSource:
    """Adapter of a :class:`LiveSession` to the timeline (see the module docstring)."""

    def __init__(self, session: LiveSession) -> None:
        self.session = session
        dt = session.recording.meta.get("dt")
        # the game's own frame time paces playback when it sends one
        if isinstance(dt, (int, float)) and not isinstance(dt, bool) and 0 < dt < 10:
            self.config = SimulationConfig(dt=float(dt))
        else:
            self.config = SimulationConfig()
        self._shown = -1  # the last frame handed to the display
        self._processed = 0  # frames the session had processed then
        self.display_skipped = 0

    # the reading side of a source
    @property
    def index(self):
        return self.session.index

    @property
    def recording(self):
        return self.session.recording

    @property
    def hotspots(self):
        return self.session.hotspots

    @property
    def last_pairs(self):
        return self.session.last_pairs

    @property
    def last_nodes(self):
        return self.session.last_nodes

    @property
    def names(self) -> dict[int, str]:
        return self.session.names

    @property
    def frame(self) -> int:
        record = self.session.last_record
        return record.frame if record is not None else -1

    @property
    def last_stats(self) -> FrameStats | None:
        return self.session.stats[-1] if self.session.stats else None

    def bodies_bounds(self):
        """``(ids, lo, hi, awake)`` of the newest frame's movers."""
        record = self.session.last_record
        if record is None:
            return None
        return record.ids, record.lo, record.hi, record.awake

    def step(self) -> FrameStats | None:
        """The newest processed frame if the display has not had it yet, else ``None``."""
        stats = self.last_stats
        if stats is None or stats.frame == self._shown:
            return None
        if self._shown >= 0:  # frames processed in between were never displayed
            self.display_skipped += self.session.frames - self._processed - 1
        self._shown, self._processed = stats.frame, self.session.frames
        return stats
