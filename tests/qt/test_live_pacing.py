"""While a game streams in, the window composites at a paced rate and its status line changes a
few times a second: each composite costs the whole window's software-OpenGL pass, so an update
that comes alone (a status figure, a panel's line) waits and joins the next one."""
from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QLabel

from tests.qt.test_live_link_gui import start_game


class _PaintTimes(QObject):
    """When ``widget`` painted (perf_counter), the text it showed then, and when the window's
    composite that painted it started (``sync.last_composite_at``, None without a sync)."""

    def __init__(self, widget, sync=None) -> None:
        super().__init__()
        self.widget, self.sync = widget, sync
        self.times: list[float] = []
        self.texts: list[str] = []
        self.composites: list[float | None] = []
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.widget and event.type() == QEvent.Type.Paint:
            self.times.append(time.perf_counter())
            self.texts.append(self.widget.text())
            self.composites.append(self.sync.last_composite_at if self.sync else None)
        return False


def test_paced_composites_keep_apart_and_lose_no_update(window, qtbot):
    label = QLabel("0")
    window.statusBar().addPermanentWidget(label)
    qtbot.waitUntil(label.isVisible)
    sync = window.frame_sync
    painted = _PaintTimes(label, sync)
    sync.min_interval = 0.1
    try:
        held = sync.held
        for k in range(1, 21):  # a new figure every 10 ms for 0.2 s
            label.setText(str(k))
            qtbot.wait(10)
        qtbot.wait(300)
    finally:
        sync.min_interval = None
    assert painted.texts and painted.texts[-1] == "20", "the last figure was painted"
    assert len(painted.times) <= 5, painted.texts  # about 0.3 s / 0.1 s, not 20 paints
    # composites start 0.1 s apart; where the label falls inside each one's paint pass varies
    # with what else the window paints, so its own paint times are not the measure
    starts = sorted(set(painted.composites))
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert len(starts) == len(painted.times), "one paint of the label per composite"
    assert all(gap >= 0.0985 for gap in gaps), gaps
    assert sync.held > held
    # unpaced again: every change is painted at the next turn
    before = len(painted.times)
    label.setText("unpaced")
    qtbot.waitUntil(lambda: painted.texts[-1:] == ["unpaced"], timeout=2_000)
    assert len(painted.times) == before + 1


def test_a_streaming_game_paces_the_window_and_the_status_line(window, qtbot):
    window.live_link_ask = lambda parent, default: "127.0.0.1:0"
    window.act_connect_game.trigger()
    link, controller, sync = window.live_link, window.timeline, window.frame_sync
    lines: list[tuple[float, str]] = []
    link.status_changed.connect(lambda text: lines.append((time.perf_counter(), text)))
    port = int(link.address.rsplit(":", 1)[1])
    game = start_game(port, frames=240, movers=150)
    try:
        qtbot.waitUntil(lambda: controller.frame >= 30, timeout=60_000)
        assert controller.play_state == "playing" and sync.min_interval is not None
        began, written = time.perf_counter(), len(lines)
        qtbot.waitUntil(lambda: controller.frame >= 120, timeout=60_000)
        span = time.perf_counter() - began
        # the 16 ms tick wrote it up to 60 times a second before
        assert len(lines) - written <= span / 0.25 + 2, (len(lines) - written, span)
        # the figures still change while the game plays (a loaded machine may show frame 120
        # sooner than one status interval after frame 30, so wait for the next line)
        qtbot.waitUntil(lambda: len(lines) > written, timeout=5_000)
        assert "disconnected" not in lines[written][1], lines[written][1]
        window.act_play.trigger()  # pause: the user looks around at full speed
        qtbot.waitUntil(lambda: sync.min_interval is None, timeout=5_000)
        window.act_go_live.trigger()
        qtbot.waitUntil(lambda: sync.min_interval is not None, timeout=5_000)
        assert game.wait(timeout=60) == 0
        qtbot.waitUntil(lambda: "disconnected" in link.connection, timeout=30_000)
        # the end of the game is written at once, with its last figures
        qtbot.waitUntil(lambda: "disconnected" in lines[-1][1], timeout=5_000)
        qtbot.waitUntil(lambda: sync.min_interval is None, timeout=5_000)
        status = link.status_text()
        assert "240 frames received (" in status and ", 240 processed (" in status
    finally:
        game.kill()
        link.stop()
    assert sync.min_interval is None
