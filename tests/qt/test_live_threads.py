"""A game streaming into the window: its frames are processed in a process of their own, every
one of them, and the static boxes are not drawn again for each frame shown."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from editor.model.live.processor_process import ProcessLiveProcessor

REPO = Path(__file__).resolve().parents[2]


def _example_game(port: int, frames: int, movers: int, static: int) -> subprocess.Popen:
    """The Python example game streaming to ``127.0.0.1:port`` at 60 frames a second."""
    return subprocess.Popen([sys.executable, str(REPO / "clients" / "python" / "example_game.py"),
                             "--port", str(port), "--frames", str(frames), "--movers", str(movers),
                             "--static", str(static), "--fps", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _threads_calling(monkeypatch, owner, name: str) -> list[str]:
    """Replace ``owner.name`` by a wrapper noting the thread of each call: the list it fills."""
    threads: list[str] = []
    real = getattr(owner, name)

    def noting(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, noting)
    return threads


def test_every_game_frame_is_processed_in_a_process_of_its_own_and_the_static_tiles_stay_cached(
        window, qtbot, monkeypatch):
    import editor.model.hotspot_pairs as hotspot_pairs
    import editor.qt.live.static_view as static_view

    prepared_on = _threads_calling(monkeypatch, static_view, "prepare_static")
    cells_found_on = _threads_calling(monkeypatch, hotspot_pairs, "cell_objects")
    window.live_link_ask = lambda parent, default: "127.0.0.1:0"
    window.act_connect_game.trigger()
    link, controller = window.live_link, window.timeline
    port = int(link.address.rsplit(":", 1)[1])
    frames = 360
    game = _example_game(port, frames, movers=200, static=3000)
    try:
        qtbot.waitUntil(lambda: controller.frame >= 20, timeout=60_000)
        static = link.static_view
        qtbot.waitUntil(lambda: static.count == 3000, timeout=10_000)
        assert len(static.chunks["Top"]) > 1  # tiles, not one path
        # the header's outlines were made on a worker, not on the window's thread
        assert len(prepared_on) == 1 and prepared_on[0] != threading.main_thread().name
        movers = window.live_view.items2d["Top"]
        qtbot.waitUntil(lambda: static.paints() > 0, timeout=10_000)  # each tile drawn once
        # the views were framed on the game as it connected, and the window's docks settle
        # around the timeline: once the range is still, the tiles are drawn for good
        settled = []

        def range_still() -> bool:
            settled.append((tuple(map(tuple, window.views2d["Top"].vb.viewRange())), static.paints()))
            return len(settled) > 15 and len(set(settled[-15:])) == 1

        qtbot.waitUntil(range_still, timeout=10_000)
        static_paints, mover_paints, shown = static.paints(), movers.paints, controller.frame
        qtbot.waitUntil(lambda: controller.frame >= shown + 20, timeout=60_000)
        qtbot.wait(100)
        assert movers.paints > mover_paints  # the window kept painting the movers
        # the Hotspots list is filled while the game plays, its cells searched on a worker
        qtbot.waitUntil(lambda: window.hotspot_panel.tree.topLevelItemCount() > 0, timeout=10_000)
        assert cells_found_on and threading.main_thread().name not in cells_found_on
        assert static.paints() == static_paints  # from the tiles' pixmaps, not drawn again
        assert game.wait(timeout=60) == 0
        qtbot.waitUntil(lambda: "disconnected" in link.connection, timeout=60_000)
    finally:
        game.kill()
        link.stop()
    # every game frame was processed, in a process of its own, on its processing thread
    assert link.source is not None and link.source.frames_added == frames
    processor = link.processor
    assert isinstance(processor, ProcessLiveProcessor)
    assert processor.pid is not None and processor.pid != os.getpid()
    assert processor.step_threads == {"live-processor"}
    status = link.status_text()
    assert f"{frames} frames received (" in status and f", {frames} processed (" in status
    assert "shown" in status


def test_a_frame_is_shown_as_it_is_handed_over_not_at_a_timer_tick(window, qtbot):
    """The window takes and shows each frame the processing thread hands over when it is
    announced: with both polling timers held back, the game's frames still reach the display."""
    window.live_link_ask = lambda parent, default: "127.0.0.1:0"
    window.act_connect_game.trigger()
    link, controller = window.live_link, window.timeline
    port = int(link.address.rsplit(":", 1)[1])
    far = 10 ** 7  # ms: neither timer fires during the test
    link.timer.start(far)
    controller.timer.setInterval(far)  # Play starts it with this interval
    frames = 240  # 4 s: the window shows frames for a while after its start-up work
    game = _example_game(port, frames, movers=50, static=200)
    try:
        qtbot.waitUntil(lambda: controller.frame >= 10, timeout=60_000)
        shown = link.source.frames_shown
        qtbot.waitUntil(lambda: link.source.frames_shown >= shown + 5, timeout=60_000)
        assert controller.timer.interval() == far and link.timer.interval() == far
        assert game.wait(timeout=60) == 0
    finally:
        game.kill()
        link.stop()
