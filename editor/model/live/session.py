"""A live session: a game's frames, as they arrive, through one index (Qt-free).

:class:`LiveSession` keeps the stream's parser, the recording (a bounded ring) and an index.
:meth:`LiveSession.feed` parses received bytes and steps the index through every completed
frame with the same functions a replay uses (:func:`~editor.model.frame_step.apply_delta`,
:func:`~editor.model.frame_step.settle_frame`): the first frame builds the index from the static
objects and that frame's movers, as :meth:`~editor.model.recording.Replay.seek` does, so a live
session and ``simulate --recording`` of the same bytes report the same pairs. Per frame it keeps
the stats (:class:`~editor.model.frame_step.FrameStats`), the pairs and the hotspot window.
A stream fault stops the parser, never the session: everything before it stays.
"""
from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

import numpy as np

from spatial.contract import NodeTable, PairResult, SpatialIndex

from ..frame_step import FrameDelta, FrameStats, apply_delta, settle_frame
from ..hotspots import HotspotWindow
from ..recording import DEFAULT_MAX_BYTES, FrameRecord, Recording
from .frame_stream import DEFAULT_MAX_FRAME_BYTES, FrameStreamParser, StreamError, StreamHeader

#: frames a live session keeps for scrubbing and saving (also bounded by bytes)
DEFAULT_LIVE_CAPACITY = 36_000


class LiveSession:
    """Parse a stream and keep an index in step with it (see the module docstring).

    Parameters
    ----------
    index : SpatialIndex
        Any backend; it is built on the first frame.
    source : str
        Names the stream in messages and in the recording's meta.
    capacity : int
        Frames the recording keeps.
    hotspot_window : int
        Frames the hotspot sums cover.
    on_frame : callable, optional
        ``on_frame(record, stats)`` after each frame is processed.
    limit : int, optional
        Frames processed at most; later frames are parsed (checked) but not processed.
    """

    def __init__(self, index: SpatialIndex, source: str = "stream",
                 capacity: int = DEFAULT_LIVE_CAPACITY, hotspot_window: int = 60,
                 on_frame: Callable[[FrameRecord, FrameStats], None] | None = None,
                 max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
                 max_bytes: int = DEFAULT_MAX_BYTES, limit: int | None = None) -> None:
        self.index = index
        self.limit = limit
        self.source = source
        self.parser = FrameStreamParser(source, max_frame_bytes)
        self.recording = Recording(capacity=capacity, meta={"source": source}, max_bytes=max_bytes)
        self.hotspots = HotspotWindow(hotspot_window)
        self.on_frame = on_frame
        #: the stats of every frame processed (the last few: :meth:`keep_last_stats`)
        self.stats: list[FrameStats] | deque[FrameStats] = []
        self._frames = 0
        self.last_pairs: PairResult | None = None
        self.last_record: FrameRecord | None = None
        self.last_nodes: NodeTable | None = None
        self.names: dict[int, str] = {}
        self.received_bytes = 0
        self.error: StreamError | None = None
        self._built = False

    # ------------------------------------------------------------------ input
    def feed(self, data: bytes) -> list[FrameStats]:
        """Parse ``data`` and process every frame it completes; returns their stats.

        Raises :class:`StreamError` on a broken stream; frames before it were processed.
        """
        self.received_bytes += len(data)
        try:
            items = self.parser.feed(data)
        except StreamError as exc:
            self.error = exc
            self._process(exc.items)  # every frame before the fault is kept
            raise
        return self._process(items)

    def finish(self) -> list[FrameStats]:
        """The game disconnected: a last frame line without a newline is processed; a frame
        cut short raises :class:`StreamError`."""
        try:
            items = self.parser.finish()
        except StreamError as exc:
            self.error = exc
            raise
        return self._process(items)

    def _process(self, items) -> list[FrameStats]:
        out = []
        for item in items:
            if isinstance(item, StreamHeader):
                self._add_header(item)
            elif self.limit is None or self.frames < self.limit:
                out.append(self.step(item))
        return out

    def _add_header(self, part: StreamHeader) -> None:
        rec = self.recording
        rec.static_ids = np.concatenate([rec.static_ids, part.static_ids])
        rec.static_lo = np.concatenate([rec.static_lo, part.static_lo])
        rec.static_hi = np.concatenate([rec.static_hi, part.static_hi])
        rec.meta.update(part.meta)
        rec.meta["source"] = self.source
        self.names.update(parse_names(part.meta.get("names")))

    # ------------------------------------------------------------------ frames
    def step(self, record: FrameRecord) -> FrameStats:
        """Process one frame: build on the first, apply the delta from the previous after."""
        if not self._built:
            stats = self._build(record)
        else:
            delta = self.recording.delta(self.last_record, record)
            edit_ms = apply_delta(self.index, delta)
            settle_ms, result, pairs_ms = settle_frame(self.index, delta.awake_ids, delta.awake_flags)
            stats = _stats(record, delta, result, edit_ms + settle_ms, pairs_ms)
            self.last_pairs = result
        nodes = self.index.nodes()
        self.last_nodes = nodes
        stats.nodes = len(nodes)
        pairs = self.last_pairs
        self.hotspots.push(record.frame, nodes, pairs.node_tests if pairs else None,
                           pairs.pairs if pairs else None)
        record.stats = stats
        self.recording.append(record)
        self.last_record = record
        self.stats.append(stats)
        self._frames += 1
        if self.on_frame is not None:
            self.on_frame(record, stats)
        return stats

    def _build(self, record: FrameRecord) -> FrameStats:
        ids, lo, hi, dynamic, awake = self.recording.boxes(record)
        start = time.perf_counter()
        self.index.build(ids, lo, hi, dynamic=dynamic, awake=awake)
        build_ms = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        result = self.index.pairs("active")
        pairs_ms = (time.perf_counter() - start) * 1e3
        self._built = True
        self.last_pairs = result
        return _stats(record, FrameDelta(), result, build_ms, pairs_ms)

    def keep_last_stats(self, count: int) -> None:
        """Keep the stats of the last ``count`` frames in :attr:`stats` from now on, not every
        frame's (``listen --json`` prints them all). A window following a game for hours keeps
        none here: it has each frame's stats with its record."""
        self.stats = deque(self.stats, maxlen=max(0, int(count)))

    @property
    def frames(self) -> int:
        """Frames processed."""
        return self._frames

    @property
    def done(self) -> bool:
        """True once ``limit`` frames were processed."""
        return self.limit is not None and self.frames >= self.limit


def _stats(record: FrameRecord, delta: FrameDelta, result: PairResult, update_ms: float,
           pairs_ms: float) -> FrameStats:
    return FrameStats(record.frame, moved=len(delta.moved), spawned=len(delta.spawned),
                      despawned=len(delta.despawned), awake=int(record.awake.sum()),
                      dynamic=len(record.ids), candidates=result.tests,
                      overlapping=len(result.pairs), update_ms=update_ms, pairs_ms=pairs_ms,
                      frame_ms=update_ms + pairs_ms)


def parse_names(value) -> dict[int, str]:
    """The ``names`` map of a header's meta (``{"id": "name"}``) as ``{id: name}``; entries
    that are not an integer id and a string are skipped (names only label, never fail a stream)."""
    if not isinstance(value, dict):
        return {}
    out = {}
    for key, name in value.items():
        try:
            oid = int(key)
        except (TypeError, ValueError):
            continue
        if isinstance(name, str):
            out[oid] = name[:200]
    return out
