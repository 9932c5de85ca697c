"""A live game seen as the timeline's running source (Qt-free).

The editor's timeline drives a *source* that has a frame, an index, a recording, hotspots and
a ``step()`` (:class:`~editor.model.simulation.Simulation` is the other one). A game's frames
are processed on a thread of their own (:class:`~.processor.LiveProcessor`), not when the
timeline asks; :class:`LiveSource` is what the display keeps of them, and only the display
thread touches it: its own copy of the recording (every processed frame's record, added by
:meth:`LiveSource.add_frame`) and the newest :class:`~.processor.LiveFrame` handed over
(:meth:`LiveSource.adopt`), whose index, node table, pairs and hotspot window the views and
panels read. :meth:`LiveSource.step` hands the newest adopted frame to the display, once: when
the display falls behind the game, it skips display frames, never game frames.
"""
from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

import numpy as np

from editor.model.frame_step import FrameStats
from editor.model.simulation import SimulationConfig

from ..query_answers import QueryAnswers, QueryAsk
from ..recording import DEFAULT_MAX_BYTES, FrameRecord, Recording
from .processor import LiveFrame, LiveHeader
from .session import DEFAULT_LIVE_CAPACITY


class LiveSource:
    """The display's side of a live game (see the module docstring).

    Parameters
    ----------
    name : str
        Names the stream (the recording's meta ``source``).
    """

    def __init__(self, name: str, capacity: int = DEFAULT_LIVE_CAPACITY,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.name = name
        self.recording = Recording(capacity=capacity, meta={"source": name}, max_bytes=max_bytes)
        self.names: dict[int, str] = {}
        self.newest: LiveFrame | None = None
        self.config = SimulationConfig()
        self.frames_added = 0    # processed frames the display was told about
        self.frames_shown = 0    # frames handed to the display
        self.display_skipped = 0
        self.shown_at: deque[float] = deque(maxlen=120)
        self._shown = -1         # the last frame handed to the display
        self.added_when_shown = 0  # frames_added when the frame on display was handed over
        #: called with a new :class:`~editor.model.query_answers.QueryAsk` when the display asks other
        #: queries (the link passes it on to the processing, which answers each frame)
        self.ask_queries: Callable[[QueryAsk], None] | None = None
        self.asked: QueryAsk | None = None

    # ------------------------------------------------------------------ fed by the link
    def add_header(self, header: LiveHeader) -> None:
        """The game's static boxes, meta and names so far."""
        rec = self.recording
        rec.static_ids, rec.static_lo, rec.static_hi = header.static_ids, header.static_lo, header.static_hi
        rec.meta = dict(header.meta)
        rec.meta["source"] = self.name
        self.names = dict(header.names)
        dt = rec.meta.get("dt")
        # the game's own frame time paces playback when it sends one
        if isinstance(dt, (int, float)) and not isinstance(dt, bool) and 0 < dt < 10:
            self.config = SimulationConfig(dt=float(dt))

    def add_frame(self, record: FrameRecord) -> None:
        """A processed frame, in order (every one of them)."""
        self.recording.append(record)
        self.frames_added += 1

    def adopt(self, frame: LiveFrame) -> None:
        """The newest processed frame, for display."""
        self.newest = frame

    # ------------------------------------------------------------------ the reading side
    @property
    def index(self):
        """The newest frame's copy of the index (brought over on first read when the frame
        was processed in another process: see :class:`~.processor.FrameCopies`)."""
        return self.newest.index if self.newest is not None else None

    @property
    def has_index(self) -> bool:
        """:attr:`index` is not None, told without reading it."""
        return self.newest is not None

    def index_reader(self):
        """A callable giving the index of the newest frame now, read only when called."""
        frame = self.newest
        return lambda: frame.index if frame is not None else None

    def query_answers(self, ask: QueryAsk) -> QueryAnswers | None:
        """The newest frame's answers to ``ask``, if it was handed over with them; else None
        (the caller asks the frame's index). Passes a changed ``ask`` on to the processing
        first, so the frames handed over next carry its answers."""
        if not ask.same_as(self.asked):
            self.asked = ask
            if self.ask_queries is not None:
                self.ask_queries(ask)
        frame = self.newest
        answers = frame.answers if frame is not None else None
        return answers if answers is not None and ask.same_as(answers.ask) else None

    @property
    def hotspots(self):
        return self.newest.hotspots if self.newest is not None else None

    @property
    def last_pairs(self):
        return self.newest.pairs if self.newest is not None else None

    @property
    def last_nodes(self):
        return self.newest.nodes if self.newest is not None else None

    @property
    def last_record(self) -> FrameRecord | None:
        return self.newest.record if self.newest is not None else None

    @property
    def frame(self) -> int:
        return self.newest.record.frame if self.newest is not None else -1

    @property
    def last_stats(self) -> FrameStats | None:
        return self.newest.stats if self.newest is not None else None

    @property
    def newest_shown(self) -> bool:
        """The newest adopted frame was handed to the display (or there is none)."""
        return self.newest is None or self.newest.stats.frame == self._shown

    def game_bounds(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(lo, hi)`` around the game's static boxes and the newest frame's movers (finite
        coordinates only); None before any box arrived."""
        rec, record = self.recording, self.last_record
        los = [rec.static_lo, rec.static_hi] + ([record.lo, record.hi] if record is not None else [])
        points = [np.asarray(a, dtype=np.float64).reshape(-1, 3) for a in los]
        points = [a[np.isfinite(a).all(axis=1)] for a in points]
        points = [a for a in points if len(a)]
        if not points:
            return None
        return (np.min([a.min(axis=0) for a in points], axis=0),
                np.max([a.max(axis=0) for a in points], axis=0))

    def bodies_bounds(self):
        """``(ids, lo, hi, awake)`` of the newest frame's movers."""
        record = self.last_record
        if record is None:
            return None
        return record.ids, record.lo, record.hi, record.awake

    def step(self) -> FrameStats | None:
        """The newest adopted frame if the display has not had it yet, else ``None``."""
        stats = self.last_stats
        if stats is None or stats.frame == self._shown:
            return None
        # frames processed since the last one shown (or before the first) were never displayed
        self.display_skipped += max(0, self.frames_added - self.added_when_shown - 1)
        self._shown, self.added_when_shown = stats.frame, self.frames_added
        self.frames_shown += 1
        self.shown_at.append(time.perf_counter())
        return stats
