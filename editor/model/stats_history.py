"""The stats of every frame shown, by frame, with their plot columns kept as arrays (Qt-free).

The timeline plots a run's per-frame figures a few times a second. Read from a dict of
:class:`~editor.model.frame_step.FrameStats` (sorted, then an attribute read per frame and
figure), ten minutes of a game streaming at 60 frames a second (36,000 frames) cost the window
50 ms a refresh. :class:`StatsHistory` is that dict and keeps the columns beside it: a frame
added after the last one (the usual case: playback, a live game) is appended in place; a frame
added out of order (a seek back) marks them to be rebuilt once, when next read.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from .frame_step import FrameStats

#: the figures kept as columns (all floats; ``frame`` is kept apart, as integers)
COLUMNS = ("candidates", "overlapping", "nodes", "update_ms", "awake")


class StatsHistory:
    """``{frame: FrameStats}`` with the :data:`COLUMNS` of its frames, ascending, as arrays
    (see the module docstring)."""

    def __init__(self, stats: Iterable[FrameStats] = ()) -> None:
        self._by_frame: dict[int, FrameStats] = {}
        self._frames = np.empty(0, dtype=np.int64)
        self._values = np.empty((len(COLUMNS), 0), dtype=np.float64)
        self._start = self._end = 0  # the columns hold rows start..end of the buffers
        self._stale = False          # a frame came out of order: rebuild before reading
        for item in stats:
            self[item.frame] = item

    # ------------------------------------------------------------------ the dict
    def __len__(self) -> int:
        return len(self._by_frame)

    def __contains__(self, frame: object) -> bool:
        return frame in self._by_frame

    def __getitem__(self, frame: int) -> FrameStats:
        return self._by_frame[frame]

    def __iter__(self) -> Iterator[int]:
        return iter(self._by_frame)

    def get(self, frame: int, default: FrameStats | None = None) -> FrameStats | None:
        return self._by_frame.get(frame, default)

    def values(self):
        return self._by_frame.values()

    def items(self):
        return self._by_frame.items()

    def __setitem__(self, frame: int, stats: FrameStats) -> None:
        frame = int(frame)
        known = frame in self._by_frame
        self._by_frame[frame] = stats
        if self._stale:
            return
        if known:
            row = self._start + int(np.searchsorted(self._frames[self._start:self._end], frame))
            self._values[:, row] = _figures(stats)
        elif self._end == self._start or frame > self._frames[self._end - 1]:
            self._append(frame, stats)
        else:
            self._stale = True

    def setdefault(self, frame: int, stats: FrameStats) -> FrameStats:
        """The stats held for ``frame``, else ``stats``, kept."""
        held = self._by_frame.get(frame)
        if held is not None:
            return held
        self[frame] = stats
        return stats

    def clear(self) -> None:
        self._by_frame.clear()
        # new buffers: the columns read before keep theirs unchanged
        self._frames = np.empty(0, dtype=np.int64)
        self._values = np.empty((len(COLUMNS), 0), dtype=np.float64)
        self._start = self._end = 0
        self._stale = False

    def drop_before(self, frame: int) -> None:
        """Forget the frames before ``frame`` (a live recording that no longer holds them)."""
        if self._stale:
            self._rebuild()
        frames = self._frames[self._start:self._end]  # the dict's frames, ascending
        cut = int(np.searchsorted(frames, frame))
        for old in frames[:cut].tolist():
            del self._by_frame[old]
        self._start += cut

    # ------------------------------------------------------------------ the columns
    def columns(self, after: int = -1) -> dict[str, np.ndarray]:
        """``{"frame": ..., figure: ...}`` of the frames after ``after``, ascending. The arrays
        are views the history never writes again, except a frame's own figures when its stats
        are replaced."""
        if self._stale:
            self._rebuild()
        frames = self._frames[self._start:self._end]
        first = self._start + int(np.searchsorted(frames, after, side="right"))
        out: dict[str, np.ndarray] = {"frame": self._frames[first:self._end]}
        for k, name in enumerate(COLUMNS):
            out[name] = self._values[k, first:self._end]
        return out

    def _append(self, frame: int, stats: FrameStats) -> None:
        if self._end == len(self._frames):
            self._reserve(max(64, 2 * (self._end - self._start)))
        self._frames[self._end] = frame
        self._values[:, self._end] = _figures(stats)
        self._end += 1

    def _reserve(self, rows: int) -> None:
        """New buffers of ``rows`` rows holding the current columns from row 0 (earlier views
        keep the old buffers)."""
        held = self._end - self._start
        frames = np.empty(rows, dtype=np.int64)
        values = np.empty((len(COLUMNS), rows), dtype=np.float64)
        frames[:held] = self._frames[self._start:self._end]
        values[:, :held] = self._values[:, self._start:self._end]
        self._frames, self._values, self._start, self._end = frames, values, 0, held

    def _rebuild(self) -> None:
        order = sorted(self._by_frame)
        self._frames = np.array(order, dtype=np.int64)
        self._values = np.array([_figures(self._by_frame[f]) for f in order],
                                dtype=np.float64).reshape(len(order), len(COLUMNS)).T.copy()
        self._start, self._end, self._stale = 0, len(order), False


def _figures(stats: FrameStats) -> list[float]:
    return [float(getattr(stats, name)) for name in COLUMNS]
