"""The editor's live link: a game's frames shown as they arrive (Qt glue).

:class:`LiveLink` owns a :class:`~.receiver.Receiver` (the socket thread) and a processor,
which steps a :class:`~editor.model.live.session.LiveSession` per connected game through every
frame: a :class:`~editor.model.live.processor_process.ProcessLiveProcessor` (a process of its
own), or a :class:`~editor.model.live.processor.LiveProcessor` (a thread) for a backend a
child process cannot import. The GUI thread never processes a frame nor reads the session's
index: it takes what the processing handed over — every frame's record and stats into a
:class:`~editor.model.live.source.LiveSource` (the display's own recording and the timeline's
plots), and the newest frame (node table, pairs; its index and hotspot window read when
needed) for display. On a
game's first frame the source goes to the timeline, which then shows the newest frame whenever
it plays: overlay, heatmaps, plots, statistics and hotspots follow it, and pause, scrubbing
back and saving the recording work as for a simulation. Frames keep arriving and being
processed while paused. Live frames are not edits: nothing is pushed on the undo stack and the
document stays clean. A disconnect (or a broken stream, reported in one line) keeps the last
state; the next game to connect starts a new session.
"""
from __future__ import annotations

import functools
import time
from collections import deque
from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, QTimer, Signal

from editor.model.live.processor import LiveHeader, LiveProcessor, SessionSummary
from editor.model.live.processor_process import ProcessLiveProcessor, runs_in_child
from editor.model.live.source import LiveSource
from editor.model.stats_history import StatsHistory
from spatial.contract import SpatialIndex

from .receiver import Receiver
from .static_view import StaticBoxes

TICK_MS = 16
#: share of the window's time the 3D view may paint while a game is linked (a quarter left a
#: game of 10,000 movers 17-18 frames a second in the 2D views; 0.15 left 19-20)
VIEW3D_PAINT_SHARE = 0.15
#: the same while the processing thread is behind the game (software OpenGL's threads take the
#: cores the game's frames need)
VIEW3D_BEHIND_SHARE = 0.1
#: display frames a second at most while the processing thread is behind the game: every
#: paint above it would be time taken from the game's frames. Above the 20 a second a window
#: following a game should show, as a frame is taken at the processing thread's next frame
#: boundary after this interval, not at it (at 20, 14-16 were shown)
BEHIND_DISPLAY_FPS = 25
#: composites of the window a second at most while a game streams in and plays
#: (``FrameSync.min_interval``): every update asked for between two composites joins the next
#: one instead of paying for one of its own. Above :data:`BEHIND_DISPLAY_FPS`, so the pacing
#: never holds a new frame back by more than a composite
LIVE_COMPOSITES_PER_S = 30
#: the status line's figures are rewritten at most this often while frames arrive, and then in
#: the same event-loop turn as a frame shown: a change of that line alone costs the window a
#: paint pass of its own (with an OpenGL-composited window, 15-40 ms of software OpenGL), which
#: the 16 ms tick paid up to 60 times a second. A change of connection state is shown at once
STATUS_INTERVAL_S = 0.25


class LiveLink(QObject):
    """See the module docstring. ``status_changed(str)`` carries the status line."""

    status_changed = Signal(str)
    #: emitted on the processing (or collecting) thread when a frame is handed over (queued)
    _frame_offered = Signal()

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.controller = window.timeline
        self.receiver: Receiver | None = None
        self.processor: LiveProcessor | ProcessLiveProcessor | None = None
        self.source: LiveSource | None = None
        self.connection = "not listening"
        self.connected = False  # a game is connected now
        self.peer = ""
        self.refused = 0  # games refused while another was connected
        self.static_view = StaticBoxes(window)
        self._held: deque[tuple] = deque()  # frames newer than the newest handed over
        self._taken_at = 0.0  # when the display last took a frame (perf_counter)
        self._status_at = 0.0  # when the status line was last written (perf_counter)
        self._status_connection = ""  # the connection state it showed then
        #: the forms of the status line last written (:meth:`status_forms`)
        self.shown_status: list[str] = [f"Live link: {self.connection}"]
        self.timer = QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        # a frame handed over while the display may not take one yet is taken once it may:
        # a processing process hands the next frame over only after this one is taken
        self._retry = QTimer(self)
        self._retry.setSingleShot(True)
        self._retry.timeout.connect(self._take_offered)
        self._frame_offered.connect(self._take_offered)

    @property
    def session(self) -> SessionSummary | None:
        """The counts of the current game's session, as the processing last reported them
        (the display reads the frames from :attr:`source`)."""
        return self.processor.summary() if self.processor is not None else None

    # ------------------------------------------------------------------ listening
    def listen(self, host: str, port: int) -> bool:
        """Listen on ``host:port``; a port in use is reported in one line (False)."""
        self.stop()
        try:
            self.receiver = Receiver(host, port)
        except OSError as exc:
            self.window.report_error(f"{host}:{port}: cannot listen: {exc.strerror or exc}")
            return False
        live_view = getattr(self.window, "live_view", None)
        factory = self._index_factory()
        processor_class = ProcessLiveProcessor if runs_in_child(factory) else LiveProcessor
        self.processor = processor_class(self.receiver.take, self.receiver.arrived, factory,
                                         live_view.prepare_bodies() if live_view is not None else None,
                                         offered=self._notify_offered)
        if self.window.view3d is not None:  # a big static set must not paint at the game's rate
            self.window.view3d.paint_share = VIEW3D_PAINT_SHARE
        self.connection = f"listening on {self.receiver.address}"
        self.timer.start()
        self._emit_status()
        return True

    @property
    def address(self) -> str:
        return self.receiver.address if self.receiver is not None else ""

    def stop(self) -> None:
        """Stop listening and drop the connection; the last frame stays shown (what already
        arrived is processed first, within a second)."""
        if self.receiver is not None:
            self.receiver.stop()
            self.receiver = None
        if self.processor is not None:
            if not self.processor.stop(timeout=1.0):
                self.processor.abort()
            self._collect()
        self.timer.stop()
        if self.window.view3d is not None:
            self.window.view3d.paint_share = None
        self.connected = False
        self._pace_composites()
        self.connection = "not listening"
        self._emit_status()

    def go_live(self) -> None:
        """Back to the newest frame after scrubbing, and play."""
        if self.source is not None and self.controller.simulation is self.source:
            self.controller.seek(self.source.frame)
            self.controller.play()

    # ------------------------------------------------------------------ taking over frames
    def _index_factory(self) -> Callable[[], SpatialIndex]:
        """A fresh index of the backend and parameters the Partition panel shows now."""
        index: SpatialIndex = self.window.state.document.index
        backend: type[SpatialIndex] = type(index)
        return functools.partial(backend, index.params)

    def _tick(self) -> None:
        if self.processor is not None:  # a game connecting next gets the backend shown then
            self.processor.make_index = self._index_factory()
        self._collect()
        self._emit_status(with_frame=False)

    def _notify_offered(self) -> None:
        """Called on the processing (or collecting) thread: queue :meth:`_take_offered` on the
        window's."""
        try:
            self._frame_offered.emit()
        except RuntimeError:  # the window is gone; the thread ends with it
            pass

    def _take_offered(self) -> None:
        """A frame was handed over: take it and show it now, not a poll and a tick later."""
        if self._collect():
            source, controller = self.source, self.controller
            if source is not None and controller.simulation is source:
                controller.show_arrived()
            self._emit_status(with_frame=True)

    def _collect(self) -> bool:
        """Take what the processing handed over: events in order, and the newest frame
        (frames after it wait for a newer one, so the source's recording never runs ahead of
        the frame it shows). True if a new frame was taken."""
        processor = self.processor
        if processor is None:
            return False
        newest = None
        now = time.perf_counter()
        source, controller = self.source, self.controller
        # a frame taken but not shown yet (the window paints slower than the game) would make
        # the processor copy frames that are never shown: take the next once it was shown
        waiting = source is not None and not source.newest_shown and \
            controller.simulation is source and controller.play_state == controller.PLAYING
        behind = self.behind()
        view3d = self.window.view3d
        if view3d is not None and self.receiver is not None:
            view3d.paint_share = VIEW3D_BEHIND_SHARE if behind else VIEW3D_PAINT_SHARE
        self._pace_composites()
        too_soon = 1.0 / BEHIND_DISPLAY_FPS - (now - self._taken_at) if behind else 0.0
        if not waiting and too_soon <= 0:
            newest = processor.take_newest()
            if newest is not None:
                self._taken_at = now
        elif too_soon > 0 and not self._retry.isActive():
            self._retry.start(max(1, round(too_soon * 1000)))
        self._held.extend(processor.take_events())
        upto = (newest.serial, newest.record.frame) if newest is not None else None
        while self._held:
            event = self._held[0]
            if event[0] == "frame" and (upto is None or (event[1], event[2].frame) > upto):
                break
            self._held.popleft()
            self._handle(event)
        source = self.source
        if newest is None or source is None:
            return False
        first = source.newest is None
        source.adopt(newest)
        controller = self.controller
        if first:
            self._install_source(source)
        elif controller.simulation is source and controller.live and \
                controller.play_state != controller.PLAYING and controller.last_stats is not None \
                and controller.last_stats.frame != source.frame:
            # paused at the live edge: keep showing that frame (replayed) while the game goes on
            controller.seek(controller.last_stats.frame)
        return True

    def _pace_composites(self) -> None:
        """Pace the window's composites while the game streams in and plays (see
        :data:`LIVE_COMPOSITES_PER_S`); a paused or ended game leaves them unpaced."""
        sync = getattr(self.window, "frame_sync", None)
        if sync is None:
            return
        controller = self.controller
        playing = self.connected and controller.simulation is self.source and \
            controller.play_state == controller.PLAYING
        sync.min_interval = 1.0 / LIVE_COMPOSITES_PER_S if playing else None

    def _ask_queries(self, ask) -> None:
        """The display asks a new ray or frustum: the processing answers it on each frame it
        hands over from now on (where the frame's index is, instead of bringing it here)."""
        if self.processor is not None:
            self.processor.queries = ask

    def behind(self) -> bool:
        """More than two frames' bytes wait to be processed: the display then takes a frame
        at most :data:`BEHIND_DISPLAY_FPS` times a second, leaving the processor the time."""
        session = self.session
        if session is None or not session.received:
            return False
        frame_bytes = session.received_bytes / session.received
        return self.counts()["lag_bytes"] > 2 * frame_bytes

    def _handle(self, event: tuple) -> None:
        kind = event[0]
        if kind == "connected":
            self.source = LiveSource(f"tcp://{event[1]}")
            self.source.ask_queries = self._ask_queries
            self.peer = event[1]
            self.connection = f"connected to {event[1]}"
            self.connected = True
        elif kind == "header":
            header: LiveHeader = event[1]
            if self.source is not None:
                self.source.add_header(header)
            self.static_view.show_in_background(header.static_lo, header.static_hi)
        elif kind == "frame":
            self._on_frame(event[2], event[3])
        elif kind == "fault":
            self.connection = f"disconnected: {event[1].detail}"
            self.connected = False
            if self.receiver is not None:
                self.receiver.drop_connection()
            self.window.report_error(str(event[1]))
        elif kind == "refused":
            self.refused += 1
            self.window.statusBar().showMessage(
                f"Live link: refused a second game from {event[1]} (one game at a time)", 5000)
        elif kind == "closed":
            self._finish(event[1])

    def _on_frame(self, record, stats) -> None:
        source = self.source
        assert source is not None  # frames come after their game's "connected"
        source.add_frame(record)
        history = self.controller.history
        history[stats.frame] = stats
        if len(source.recording):  # plot only the frames the recording still holds
            history.drop_before(source.recording.first_frame)

    def _install_source(self, source: LiveSource) -> None:
        controller = self.controller
        controller.stop()
        controller.simulation = source
        controller.history = StatsHistory(r.stats for r in source.recording if r.stats is not None)
        controller.source_changed.emit()
        controller.play()
        self._frame_game(source)

    def _frame_game(self, source: LiveSource) -> None:
        """A new game's first frame: frame every view on the level and the game when the
        Top view does not show all of the game's boxes (a game reconnecting where the user
        looks stays as it is)."""
        bounds = source.game_bounds()
        top = getattr(self.window, "views2d", {}).get("Top")
        if bounds is None or (top is not None and top.shows(*bounds)):
            return
        self.window.frame_all()

    def _finish(self, reason: str) -> None:
        session = self.session
        if session is not None and session.broken:
            reason = f"stream broken at frame {session.last_frame + 1}"
        where = f"listening on {self.address}" if self.receiver is not None else "not listening"
        self.connection = f"disconnected ({reason}); last state kept, {where}"
        self.connected = False

    # ------------------------------------------------------------------ status
    def counts(self) -> dict:
        """The figures of the status line (see ``docs/live-link.md``)."""
        session, processor, source = self.session, self.processor, self.source
        received = session.received if session is not None else 0
        processed = session.frames if session is not None else 0
        return {"received": received, "processed": processed,
                "shown": source.frames_shown if source is not None else 0,
                # frames processed after the one on display (it waits for the next paint)
                "lag_frames": processed - source.added_when_shown if source is not None else processed,
                "dropped_by_game": session.dropped_by_game if session is not None else 0,
                "display_skipped": source.display_skipped if source is not None else 0,
                "lag_bytes": (processor.pending_bytes if processor is not None else 0) +
                             (self.receiver.queued_bytes if self.receiver is not None else 0),
                "received_fps": _rate(processor.received_at) if processor is not None else 0.0,
                "processed_fps": _rate(processor.processed_at) if processor is not None else 0.0,
                "shown_fps": _rate(source.shown_at) if source is not None else 0.0}

    def status_text(self) -> str:
        """The status line in full (its first form: :meth:`status_forms`)."""
        return self.status_forms()[0]

    def status_forms(self) -> list[str]:
        """The status line, longest first: the full sentence, then shorter forms with the same
        figures for a narrow window (the status bar shows the longest that fits)."""
        if self.session is None:
            return [f"Live link: {self.connection}", f"Live: {self.connection}"]
        c = self.counts()
        kb = c["lag_bytes"] / 1024
        return [
            (f"Live link: {self.connection} · {c['received']:,} frames received "
             f"({c['received_fps']:.0f}/s), {c['processed']:,} processed ({c['processed_fps']:.0f}/s), "
             f"{c['shown']:,} shown ({c['shown_fps']:.0f}/s) · lag {c['lag_frames']:,} frames, "
             f"{kb:,.0f} kB · {c['dropped_by_game']:,} dropped by the game · "
             f"{c['display_skipped']:,} display frames skipped"),
            (f"Live: {self.connection} · {c['received']:,} in ({c['received_fps']:.0f}/s) · "
             f"{c['processed']:,} processed ({c['processed_fps']:.0f}/s) · {c['shown']:,} shown "
             f"({c['shown_fps']:.0f}/s) · lag {c['lag_frames']:,}, {kb:,.0f} kB · "
             f"game dropped {c['dropped_by_game']:,} · display skipped {c['display_skipped']:,}"),
            (f"Live: {self.connection} · in {c['received_fps']:.0f}/s · processed "
             f"{c['processed_fps']:.0f}/s · shown {c['shown_fps']:.0f}/s · lag {c['lag_frames']:,} · "
             f"game dropped {c['dropped_by_game']:,}"),
        ]

    def _emit_status(self, with_frame: bool | None = None) -> None:
        """Write the status line: at once when the connection state changed or (``None``)
        always; else at most every :data:`STATUS_INTERVAL_S`, with a frame being shown
        (``with_frame``) or, when none was shown for that long, from the tick."""
        now = time.perf_counter()
        if with_frame is not None and self.connection == self._status_connection:
            if now - self._status_at < STATUS_INTERVAL_S:
                return
            if not with_frame and now - self._taken_at < STATUS_INTERVAL_S:
                return  # a frame comes soon: the line changes with it, in its composite
        self._status_at, self._status_connection = now, self.connection
        self.shown_status = self.status_forms()
        self.status_changed.emit(self.shown_status[0])


def _rate(times: Sequence[float]) -> float:
    """Events a second over the recent window (0 with fewer than two, or none for 2 s)."""
    if len(times) < 2 or time.perf_counter() - times[-1] > 2.0:
        return 0.0
    span = times[-1] - times[0]
    return (len(times) - 1) / span if span > 0 else 0.0
