"""The editor's live link: a game's frames shown as they arrive (Qt glue).

:class:`LiveLink` owns a :class:`~.receiver.Receiver` (the socket thread) and, per connected
game, a :class:`~editor.model.live.session.LiveSession` processing the bytes on the GUI thread
within a time budget a tick. On a game's first frame it hands a
:class:`~editor.model.live.source.LiveSource` to the timeline, which then shows the newest
frame whenever it plays: overlay, heatmaps, plots, statistics and hotspots follow it, and
pause, scrubbing back and saving the recording work as for a simulation. Frames keep arriving
while paused. Live frames are not edits: nothing is pushed on the undo stack and the document
stays clean. A disconnect (or a broken stream, reported in one line) keeps the last state;
the next game to connect starts a new session.
"""
from __future__ import annotations

import time
from collections import deque

from PySide6.QtCore import QObject, QTimer, Signal

from editor.model.live.frame_stream import StreamError
from editor.model.live.session import LiveSession
from editor.model.live.source import LiveSource

from .receiver import LinkEvent, Receiver
from .static_view import StaticBoxes

#: GUI-thread milliseconds a tick may spend processing frames
BUDGET_MS = 40
TICK_MS = 16
#: bytes fed to the session at a time (a parse never holds the GUI longer than one piece)
PIECE_BYTES = 256 * 1024


class LiveLink(QObject):
    """See the module docstring. ``status_changed(str)`` carries the status line."""

    status_changed = Signal(str)

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.controller = window.timeline
        self.receiver: Receiver | None = None
        self.session: LiveSession | None = None
        self.source: LiveSource | None = None
        self.connection = "not listening"
        self.peer = ""
        self.refused = 0  # games refused while another was connected
        self.static_view = StaticBoxes(window)
        self._pending: deque[LinkEvent] = deque()  # taken from the receiver, not processed yet
        self._arrivals: deque[float] = deque(maxlen=120)
        self._processed_at: deque[float] = deque(maxlen=120)
        self.timer = QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)

    # ------------------------------------------------------------------ listening
    def listen(self, host: str, port: int) -> bool:
        """Listen on ``host:port``; a port in use is reported in one line (False)."""
        self.stop()
        try:
            self.receiver = Receiver(host, port)
        except OSError as exc:
            self.window.report_error(f"{host}:{port}: cannot listen: {exc.strerror or exc}")
            return False
        self.connection = f"listening on {self.receiver.address}"
        self.timer.start()
        self._emit_status()
        return True

    @property
    def address(self) -> str:
        return self.receiver.address if self.receiver is not None else ""

    def stop(self) -> None:
        """Stop listening and drop the connection; the last frame stays shown."""
        self.timer.stop()
        if self.receiver is not None:
            self._drain(time.perf_counter() + 1.0)  # what already arrived is kept
            self.receiver.stop()
            self.receiver = None
        self.connection = "not listening"
        self._emit_status()

    def go_live(self) -> None:
        """Back to the newest frame after scrubbing, and play."""
        if self.source is not None and self.controller.simulation is self.source:
            self.controller.seek(self.source.frame)
            self.controller.play()

    # ------------------------------------------------------------------ processing
    def _tick(self) -> None:
        if self.receiver is None:
            return
        self._pending.extend(self.receiver.take())
        self._drain(time.perf_counter() + BUDGET_MS / 1e3)
        self._emit_status()

    def _drain(self, deadline: float) -> None:
        if self.receiver is not None:
            self._pending.extend(self.receiver.take())
        while self._pending and time.perf_counter() < deadline:
            event = self._pending.popleft()
            if event[0] == "connected":
                self._start_session(event[1])
            elif event[0] == "closed":
                self._finish(event[1])
            elif event[0] == "refused":
                self.refused += 1
                self.window.statusBar().showMessage(
                    f"Live link: refused a second game from {event[1]} (one game at a time)", 5000)
            elif self.session is not None and self.session.error is None:  # "data"
                data = event[1]
                if len(data) > PIECE_BYTES:  # leave the rest for the next turn of the budget
                    self._pending.appendleft(("data", data[PIECE_BYTES:]))
                    data = data[:PIECE_BYTES]
                self._arrivals.append(time.perf_counter())
                self._feed(data)

    def _start_session(self, peer: str) -> None:
        doc = self.window.state.document
        index = type(doc.index)(doc.index.params)
        self.session = LiveSession(index, f"tcp://{peer}", on_frame=self._on_frame)
        self.source = None
        self.peer = peer
        self.connection = f"connected to {peer}"
        self._processed_at.clear()

    def _feed(self, data: bytes) -> None:
        session = self.session
        assert session is not None  # _drain feeds only while a session is open
        had_static = len(session.recording.static_ids)
        try:
            session.feed(data)
        except StreamError as exc:
            if self.receiver is not None:
                self.receiver.drop_connection()
            self.connection = f"disconnected: {exc.detail}"
            self.window.report_error(str(exc))
        if len(session.recording.static_ids) != had_static:
            rec = session.recording
            self.static_view.show(rec.static_lo, rec.static_hi)

    def _on_frame(self, record, stats) -> None:
        self._processed_at.append(time.perf_counter())
        controller = self.controller
        if self.source is None:
            self._install_source()
        elif controller.simulation is self.source and controller.live and \
                controller.play_state != controller.PLAYING and controller.last_stats is not None:
            # paused at the live edge: keep showing that frame (replayed) while the game goes on
            controller.seek(controller.last_stats.frame)
        controller.history[stats.frame] = stats

    def _install_source(self) -> None:
        controller = self.controller
        assert self.session is not None  # called back by the session's first frame
        controller.stop()
        self.source = LiveSource(self.session)
        controller.simulation = self.source
        controller.history = {}
        controller.source_changed.emit()
        controller.play()

    def _finish(self, reason: str) -> None:
        if self.session is not None and self.session.error is None:
            try:
                self.session.finish()
            except StreamError as exc:
                self.window.report_error(str(exc))
        if self.session is not None and self.session.error is not None:
            reason = f"stream broken at frame {self.session.parser.last_frame + 1}"
        self.connection = f"disconnected ({reason}); last state kept, listening on {self.address}"

    # ------------------------------------------------------------------ status
    def counts(self) -> dict:
        """The figures of the status line (see ``docs/live-link.md``)."""
        session = self.session
        parser = session.parser if session is not None else None
        received = parser.frames if parser is not None else 0
        processed = session.frames if session is not None else 0
        first = session.recording.first_frame if session is not None and len(session.recording) else 0
        last = parser.last_frame if parser is not None else -1
        return {"received": received, "processed": processed,
                "dropped_by_game": max(0, last - first + 1 - received) if received else 0,
                "display_skipped": self.source.display_skipped if self.source is not None else 0,
                "lag_bytes": sum(len(e[1]) for e in self._pending if e[0] == "data") +
                             (self.receiver.queued_bytes if self.receiver is not None else 0),
                "received_fps": _rate(self._arrivals), "processed_fps": _rate(self._processed_at)}

    def status_text(self) -> str:
        if self.session is None:
            return f"Live link: {self.connection}"
        c = self.counts()
        return (f"Live link: {self.connection} · {c['processed']:,} frames "
                f"({c['processed_fps']:.0f}/s processed, {c['received_fps']:.0f}/s received) · "
                f"lag {c['lag_bytes'] / 1024:,.0f} kB · {c['dropped_by_game']:,} dropped by the game · "
                f"{c['display_skipped']:,} display frames skipped")

    def _emit_status(self) -> None:
        self.status_changed.emit(self.status_text())


def _rate(times: deque[float]) -> float:
    """Events a second over the recent window (0 with fewer than two, or none for 2 s)."""
    if len(times) < 2 or time.perf_counter() - times[-1] > 2.0:
        return 0.0
    span = times[-1] - times[0]
    return (len(times) - 1) / span if span > 0 else 0.0
