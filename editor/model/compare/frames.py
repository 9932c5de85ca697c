"""Compare mode over the timeline: each side replays the frame the timeline shows (Qt-free).

A :class:`SideReplay` drives one side's own index through the timeline's recording (a
simulation run, a loaded recording or a live game's ring) with
:class:`~editor.model.recording.Replay`, the same frame step the timeline itself uses: a frame
a few recorded frames ahead is reached step by step (incremental edits, lifespans and active
pairs through :mod:`editor.model.frame_step`), any other frame is rebuilt from the static
objects plus that frame's movers (:meth:`Replay.seek`). :class:`FrameFigures` sets the two
sides' stats of one frame side by side with their ratio, and :class:`FrameHistory` keeps them
for every frame shown, for the plot over the frames.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from spatial.contract import SpatialIndex

from ..frame_step import FrameStats
from ..recording import Recording, Replay
from .report import ratio

#: recorded frames a side steps through to reach the wanted one; further, it rebuilds at once
MAX_STEPS = 4

#: the per-frame figures compared, in table order, with the label shown
FRAME_FIGURES = (
    ("candidates", "pair tests (active)"),
    ("overlapping", "overlapping pairs"),
    ("update_ms", "update (ms)"),
)


class SideReplay:
    """One side's index following the frames of a recording.

    Parameters
    ----------
    make_index : callable
        Returns a new, unbuilt index of the side's backend and parameters (a replay rebuilds
        it from the recording).
    """

    def __init__(self, make_index: Callable[[], SpatialIndex]) -> None:
        self.make_index = make_index
        self.replay: Replay | None = None
        self.frame = -1
        self.stats: FrameStats | None = None

    @property
    def index(self) -> SpatialIndex | None:
        """The index showing :attr:`frame` (None before the first frame)."""
        return self.replay.index if self.replay is not None and self.frame >= 0 else None

    def show(self, recording: Recording, frame: int, max_steps: int = MAX_STEPS) -> FrameStats:
        """Bring the index to recorded ``frame`` and return that frame's stats.

        Raises ``KeyError`` (naming the recorded range) when ``frame`` is not recorded.
        """
        target = recording.index_of(frame)
        if target < 0:
            recording.get(frame)  # raises, naming what is held
        if self.replay is None or self.replay.recording is not recording:
            self.replay = Replay(recording, self.make_index())
            self.frame, self.stats = -1, None
        replay = self.replay
        here = recording.index_of(self.frame) if self.frame >= 0 else -1
        if here == target and self.stats is not None:
            return self.stats
        if here >= 0 and 0 < target - here <= max_steps:
            # found again by frame number: a ring that dropped frames from its front since the
            # last step has moved every position
            replay.position = here
            stats = replay.step()
            while replay.position < target:
                stats = replay.step()
        else:
            stats = replay.seek(frame)
        self.frame, self.stats = frame, stats
        return stats

    def forget(self) -> None:
        """Drop the replay (the side shows the document again; the next frame rebuilds)."""
        self.replay, self.frame, self.stats = None, -1, None


@dataclass(frozen=True)
class FrameFigures:
    """Both sides' stats of one timeline frame."""

    frame: int
    a: FrameStats
    b: FrameStats

    def rows(self) -> list[tuple[str, str, float, float, float | None]]:
        """``(key, label, A, B, B/A)`` for each figure of :data:`FRAME_FIGURES` (the ratio is
        None when A's value is 0)."""
        out = []
        for key, label in FRAME_FIGURES:
            a, b = getattr(self.a, key), getattr(self.b, key)
            out.append((key, label, a, b, ratio(a, b)))
        return out


class FrameHistory:
    """The figures of every frame shown since the timeline's source last changed."""

    def __init__(self) -> None:
        self.by_frame: dict[int, FrameFigures] = {}

    def __len__(self) -> int:
        return len(self.by_frame)

    def add(self, figures: FrameFigures) -> None:
        self.by_frame[figures.frame] = figures

    def clear(self) -> None:
        self.by_frame.clear()

    def columns(self, key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(frames, A, B)`` of figure ``key``, frames ascending."""
        frames = sorted(self.by_frame)
        a = [getattr(self.by_frame[f].a, key) for f in frames]
        b = [getattr(self.by_frame[f].b, key) for f in frames]
        return (np.array(frames, dtype=np.int64), np.array(a, dtype=np.float64),
                np.array(b, dtype=np.float64))
