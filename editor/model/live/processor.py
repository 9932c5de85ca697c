"""A game's frames processed on a thread of their own, handed to the display as copies (Qt-free).

:class:`LiveProcessor` runs one thread that takes what the socket thread received (events
``("connected", peer)``, ``("data", bytes)``, ``("refused", peer)``, ``("closed", reason)``
from a ``take()`` callable, woken by a :class:`threading.Event`), and steps a
:class:`~.session.LiveSession` per connected game through **every** frame: parse, frame delta,
index update, pairs, node table, hotspot sums. The display never reads the session: it reads
what the thread hands over, which the thread never writes again:

* :meth:`LiveProcessor.take_events`: in order, every frame's record and stats (for the
  display's own copy of the recording and the timeline's plots), headers (static boxes, meta,
  names), stream faults and connection changes;
* :meth:`LiveProcessor.take_newest`: the newest :class:`LiveFrame` — the frame's record, stats,
  pairs and node table with a *copy* of the index and of the hotspot window, so the pair
  browser, the hotspot list and the queries read a tree no thread changes. A copy is made at
  most every :data:`OFFER_INTERVAL_S`, when the display took the previous one or the thread
  has caught up with the game (the game's last frame at once); so a display slower than the
  game skips display frames (and copies), never game frames.
"""
from __future__ import annotations

import copy
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from spatial.contract import NodeTable, PairResult, SpatialIndex

from ..frame_step import FrameStats
from ..hotspots import HotspotWindow
from ..query_answers import QueryAnswers, QueryAsk, answer
from ..recording import FrameRecord
from .frame_stream import StreamError
from .session import LiveSession
from .warm_session import warm_live_session

#: frames the processing's own session keeps (the next frame's delta needs the last one)
SESSION_FRAMES_KEPT = 2
#: bytes fed to the session at a time (the display's copies are offered between pieces)
PIECE_BYTES = 256 * 1024
#: the newest frame is handed over (copied) at most this often: a window paints 20-30 times a
#: second, and every copy is work taken from the game's frames
OFFER_INTERVAL_S = 1 / 30
#: a frame handed over but not taken for this many offer intervals is replaced by the newest
#: one: the display then finds a fresh frame whenever it is free, where it waited for the next
#: frame processed after taking one (the window showed 14-18 frames a second of a game of
#: 10,000 movers)
STALE_OFFERS = 2


class FrameCopies:
    """A frame's copies of the index and of the hotspot window: held, or brought over once, on
    first use, by ``fetch()`` (a frame processed in another process: each pair is 10-30 MB at
    30,000 objects, which most frames shown never need). Safe to read from any thread."""

    def __init__(self, index: SpatialIndex | None = None, hotspots: HotspotWindow | None = None,
                 fetch: Callable[[], tuple[SpatialIndex, HotspotWindow]] | None = None) -> None:
        self._pair = (index, hotspots) if fetch is None else None
        self._fetch = fetch
        self._lock = threading.Lock()

    @property
    def held(self) -> bool:
        """The copies are here (no fetch needed)."""
        return self._pair is not None

    def hold(self, index: SpatialIndex, hotspots: HotspotWindow) -> None:
        """Keep the copies brought over beforehand (the fetch is then never made)."""
        with self._lock:
            if self._pair is None:
                self._pair, self._fetch = (index, hotspots), None

    def get(self) -> tuple[SpatialIndex, HotspotWindow]:
        with self._lock:
            if self._pair is None:
                assert self._fetch is not None
                self._pair, self._fetch = self._fetch(), None
            index, hotspots = self._pair
            assert index is not None and hotspots is not None
            return index, hotspots


@dataclass(frozen=True)
class LiveFrame:
    """One processed game frame as the display reads it: nothing here is written again."""

    record: FrameRecord
    stats: FrameStats
    pairs: PairResult | None
    nodes: NodeTable | None
    copies: FrameCopies          # the index and hotspot window after this frame (copies)
    processed: int               # frames the session had processed with this one
    serial: int                  # the game's connection, counted from 1
    display: object = None       # what the display's ``prepare`` hook made of the frame
    #: the display's ray and frustum answered on this frame's index (None: not asked then)
    answers: QueryAnswers | None = None

    @property
    def index(self) -> SpatialIndex:
        """A copy of the session's index after this frame."""
        return self.copies.get()[0]

    @property
    def hotspots(self) -> HotspotWindow:
        """A copy of the session's hotspot window after this frame."""
        return self.copies.get()[1]


@dataclass(frozen=True)
class LiveHeader:
    """The static boxes, meta and names a game sent so far (copies)."""

    static_ids: np.ndarray
    static_lo: np.ndarray
    static_hi: np.ndarray
    meta: dict
    names: dict[int, str]


@dataclass(frozen=True)
class SessionSummary:
    """The counts of a game's session the display shows (read by the display, written by
    no one: a new one each time)."""

    source: str           # the game's address, ``tcp://HOST:PORT``
    frames: int           # frames processed
    received: int         # frames parsed (processed or not yet)
    last_frame: int       # the game's number of the last frame parsed (-1: none yet)
    first_frame: int      # the game's number of the first frame parsed (-1: none yet)
    received_bytes: int   # bytes of the stream parsed
    broken: bool          # the stream broke (a fault was posted); nothing after it is parsed

    @property
    def dropped_by_game(self) -> int:
        """Frames the game dropped: the gaps in its frame numbers since its first frame (its
        send buffer was full), however many frames the recording still holds."""
        if not self.received:
            return 0
        return max(0, self.last_frame - self.first_frame + 1 - self.received)


class Handover:
    """What processing hands the display, taken on the display's thread: events in order and
    the newest frame (only the last one put stays). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: deque[tuple] = deque()
        self._newest: LiveFrame | None = None
        self.summary: SessionSummary | None = None
        #: the newest frame put was taken (or none was put)
        self.taken = True

    def post(self, *events: tuple, newest: LiveFrame | None = None,
             summary: SessionSummary | None = None) -> None:
        """Add ``events``; make ``newest`` the newest frame and ``summary`` the counts, if given."""
        with self._lock:
            self._events.extend(events)
            if newest is not None:
                self._newest, self.taken = newest, False
            if summary is not None:
                self.summary = summary

    def take_events(self) -> list[tuple]:
        with self._lock:
            events = list(self._events)
            self._events.clear()
        return events

    def take_newest(self) -> LiveFrame | None:
        with self._lock:
            frame, self._newest = self._newest, None
            self.taken = True
        return frame


def summarize(session: LiveSession | None) -> SessionSummary | None:
    """``session``'s counts now (``None``: no game connected yet)."""
    if session is None:
        return None
    parser = session.parser
    return SessionSummary(session.source, session.frames, parser.frames, parser.last_frame,
                          parser.first_frame, session.received_bytes, session.error is not None)


class LiveProcessor:
    """Process a game's frames on a thread of its own (see the module docstring).

    Parameters
    ----------
    take : callable
        ``take()`` returns the socket thread's events queued since the last call.
    wake : threading.Event
        Set by the socket thread when it queued something.
    make_index : callable
        A fresh index for a new game's session (called on this thread).
    prepare : callable, optional
        ``prepare(record)``, called on this thread for each frame handed over: what the
        display would otherwise make of it on its own thread (e.g. the movers' outlines);
        kept as :attr:`LiveFrame.display`.
    offered : callable, optional
        ``offered()``, called on this thread each time a new frame is handed over, so a
        display waiting for one can take it at once instead of at its next poll.
    offer_interval : float
        Seconds at least between two frames handed over (see :data:`OFFER_INTERVAL_S`).
    on_request : bool
        Hand a frame over only when asked (:meth:`request`; the first is asked for): the
        newest frame processed, at once if the thread waits for bytes, else at the end of the
        frame in hand. No copy is made that the display did not ask for.
    warm : bool
        Before anything else, load the backend's kernels on a tiny game
        (:func:`~.warm_session.warm_live_session`): a fresh process then has them in place
        when a game connects (what arrives meanwhile waits).
    """

    def __init__(self, take: Callable[[], list], wake: threading.Event,
                 make_index: Callable[[], SpatialIndex],
                 prepare: Callable[[FrameRecord], object] | None = None,
                 offered: Callable[[], None] | None = None,
                 offer_interval: float = OFFER_INTERVAL_S, on_request: bool = False,
                 warm: bool = False) -> None:
        self._take = take
        self.warm = warm
        self.offer_interval = offer_interval
        self.on_request = on_request
        self._requested = True
        self.prepare = prepare
        self.offered = offered
        self._wake = wake
        self.make_index = make_index
        self.session: LiveSession | None = None
        self.serial = 0                 # connections served (a frame's LiveFrame.serial)
        self.pending_bytes = 0          # taken from the socket thread, not parsed yet
        self.parsed_bytes = 0           # bytes fed to a session (or dropped), all games
        self.processed_at: deque[float] = deque(maxlen=120)
        self.received_at: deque[float] = deque(maxlen=120)
        #: thread names of every frame step (a test proves the display thread steps none)
        self.step_threads: set[str] = set()
        self._handover = Handover()
        #: the ray and frustum the display shows, answered on each frame handed over (set
        #: from any thread; None or empty: nothing asked)
        self.queries: QueryAsk | None = None
        self._offered = True  # the session's newest frame was handed over (or there is none)
        self._offered_at = 0.0  # when (perf_counter)
        self._stop = threading.Event()
        self._draining = threading.Event()
        self._thread = threading.Thread(target=self._run, name="live-processor", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ the display's side
    def take_events(self) -> list[tuple]:
        """Every event since the last call, in order: ``("connected", peer)``,
        ``("header", LiveHeader)``, ``("frame", serial, record, stats)``, ``("fault", StreamError)``,
        ``("refused", peer)``, ``("closed", reason)``."""
        return self._handover.take_events()

    def take_newest(self) -> LiveFrame | None:
        """The newest frame handed over since the last call (``None``: none since)."""
        return self._handover.take_newest()

    def summary(self) -> SessionSummary | None:
        """The counts of the current game's session (``None``: no game connected yet)."""
        return summarize(self.session)

    def request(self) -> None:
        """Ask for the next frame to be handed over (with ``on_request``)."""
        self._requested = True
        self._wake.set()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = 1.0) -> bool:
        """Process what was already received, then end the thread; True if it ended within
        ``timeout`` seconds (else it ends on its own once done)."""
        self._draining.set()
        self._wake.set()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def abort(self) -> None:
        """End the thread after the frame in hand, dropping what was not processed."""
        self._stop.set()
        self._wake.set()

    # ------------------------------------------------------------------ the thread
    def _run(self) -> None:
        if self.warm:
            try:
                warm_live_session(self.make_index)
            except Exception:  # noqa: BLE001 (a backend failing here fails its game's session, reported then)
                pass
        while not self._stop.is_set():
            # a frame not handed over yet (too soon after the last) is offered once due
            self._wake.wait(0.05 if self._offered else self.offer_interval / 2)
            self._wake.clear()
            events = self._take()
            for event in events:
                if self._stop.is_set():
                    return
                self._handle(event)
            if not events:
                self._offer_newest(idle=True)
                if self._draining.is_set():
                    return

    def _handle(self, event) -> None:
        kind = event[0]
        if kind == "connected":
            self._start_session(event[1])
        elif kind == "data":
            data = event[1]
            self.pending_bytes += len(data)
            self.received_at.append(time.perf_counter())
            for start in range(0, len(data), PIECE_BYTES):
                if self._stop.is_set():
                    return
                piece = data[start:start + PIECE_BYTES]
                self._feed(piece)
                self.pending_bytes -= len(piece)
                self.parsed_bytes += len(piece)
        elif kind == "closed":
            self._finish()
            self._post(("closed", event[1]))
        else:  # "refused"
            self._post(event)

    def _start_session(self, peer: str) -> None:
        # the display keeps its own copy of the recording, each frame's stats with its record:
        # the session here keeps the last frames only (at 10,000 movers its ring held up to
        # 512 MB beside the display's), and no stats list, for hours of play
        self.session = LiveSession(self.make_index(), f"tcp://{peer}", on_frame=self._on_frame,
                                   capacity=SESSION_FRAMES_KEPT)
        self.session.keep_last_stats(0)
        self.serial += 1
        self._offered = True
        self._offered_at = 0.0
        self._post(("connected", peer))

    def _feed(self, piece: bytes) -> None:
        session = self.session
        if session is None or session.error is not None:
            return  # no game connected, or its stream broke: the rest is dropped
        had_static = len(session.recording.static_ids)
        had_meta = dict(session.recording.meta)
        try:
            session.feed(piece)
        except StreamError as exc:
            self._post(("fault", exc))
        rec = session.recording
        if len(rec.static_ids) != had_static or rec.meta != had_meta:
            self._post(("header", LiveHeader(rec.static_ids, rec.static_lo, rec.static_hi,
                                             dict(rec.meta), dict(session.names))))
        self._offer_newest(idle=not self._wake.is_set())  # set: more bytes are waiting

    def _finish(self) -> None:
        session = self.session
        if session is None or session.error is not None:
            return
        try:
            session.finish()
        except StreamError as exc:
            self._post(("fault", exc))
        self._offer_newest(idle=True, due=True)  # the game's last frame is shown at once

    def _on_frame(self, record: FrameRecord, stats: FrameStats) -> None:
        self.step_threads.add(threading.current_thread().name)
        self.processed_at.append(time.perf_counter())
        self._post(("frame", self.serial, record, stats))
        self._offered = False
        self._offer_newest(idle=False)

    def _offer_newest(self, idle: bool, due: bool = False) -> None:
        """Hand the newest frame over, at most every ``offer_interval`` (``due``: now), when
        the display took the last one, left it untaken for two intervals, or
        (``idle``) the thread is about to wait for bytes, so this frame may stay the newest a
        while."""
        session = self.session
        if session is None or session.last_record is None or self._offered:
            return
        if self.on_request:
            if not self._requested:
                return
        elif not (idle or self._handover.taken or
                  time.perf_counter() - self._offered_at >= STALE_OFFERS * self.offer_interval):
            return
        elif not due and time.perf_counter() - self._offered_at < self.offer_interval:
            return
        self._requested = False
        record = session.last_record
        assert record.stats is not None  # set by the session's step
        copies = FrameCopies(copy.deepcopy(session.index), session.hotspots.copy())
        frame = LiveFrame(record, record.stats, session.last_pairs, session.last_nodes, copies,
                          session.frames, self.serial,
                          self.prepare(record) if self.prepare is not None else None,
                          self._answers(session.index))
        self._handover.post(newest=frame)
        self._offered, self._offered_at = True, time.perf_counter()
        if self.offered is not None:  # the display takes it now, not at its next poll
            self.offered()

    def _answers(self, index: SpatialIndex) -> QueryAnswers | None:
        """The display's queries answered on ``index`` (None if none is asked, or the
        backend failed on one: the display then asks the frame's index itself and reports it)."""
        ask = self.queries
        if ask is None or ask.empty:
            return None
        try:
            return answer(index, ask)
        except Exception:  # noqa: BLE001 (a plugin's query: the display's own path reports it)
            return None

    def _post(self, event: tuple) -> None:
        self._handover.post(event)
