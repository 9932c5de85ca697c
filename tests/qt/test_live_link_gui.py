"""The live link in the window: a game streams in, the views follow, pause, scrub, resume."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def start_game(port: int, frames: int, movers: int = 150, fps: float = 60):
    return subprocess.Popen([sys.executable, str(REPO / "clients" / "python" / "example_game.py"),
                             "--port", str(port), "--frames", str(frames), "--movers", str(movers),
                             "--static", "100", "--fps", str(fps)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def live_window(window):
    window.live_link_ask = lambda parent, default: "127.0.0.1:0"
    window.act_connect_game.trigger()
    assert window.live_link.receiver is not None
    yield window
    window.live_link.stop()


@pytest.mark.slow
def test_a_game_streams_into_the_window_pause_scrub_resume_and_disconnect(live_window, qtbot, tmp_path):
    w = live_window
    link, c = w.live_link, w.timeline
    port = int(link.address.rsplit(":", 1)[1])
    game = start_game(port, frames=400)
    try:
        qtbot.waitUntil(lambda: c.frame >= 15, timeout=30_000)
        assert c.live and c.play_state == "playing" and not w.document.is_dirty()
        qtbot.waitUntil(lambda: link.static_view.count == 100, timeout=10_000)  # the game's static boxes
        first, at = c.shown_bodies()[1].copy(), c.frame
        qtbot.waitUntil(lambda: c.frame >= at + 5, timeout=30_000)
        assert not np.array_equal(first, c.shown_bodies()[1])  # the movers moved, frame to frame
        qtbot.waitUntil(lambda: w.live_view.bodies_drawn == 150, timeout=10_000)
        assert c.shown_nodes() is link.source.last_nodes  # the overlay reads the newest frame handed over
        w.act_play.trigger()  # pause: frames keep arriving into the recording
        assert c.play_state == "paused"
        processed = link.source.frames_added  # frames the processing thread handed over
        qtbot.waitUntil(lambda: link.source.frames_added >= processed + 5, timeout=30_000)
        held, processed = c.frame, link.source.frames_added
        assert not c.live and held < link.source.frame  # the display holds a frame, the game goes on
        qtbot.waitUntil(lambda: link.source.frames_added >= processed + 10, timeout=30_000)
        assert c.frame == held
        w.timeline_panel.slider.setValue(w.timeline_panel.slider.value() - 10)
        assert c.frame == held - 10 and not c.live  # scrubbed back into the recording
        np.testing.assert_array_equal(c.shown_bodies()[0], link.source.recording.get(held - 10).ids)
        w.act_go_live.trigger()
        assert c.live and c.frame > held and c.play_state == "playing"
        w.hotspot_panel.refresh()
        tree = w.hotspot_panel.tree
        assert tree.topLevelItemCount() > 0
        rows = [tree.topLevelItem(r).child(k).text(0) for r in range(tree.topLevelItemCount())
                for k in range(tree.topLevelItem(r).childCount())]
        assert any(text.startswith("mover ") and "tests a frame" in text for text in rows)  # the game's names
        assert any(text.startswith("pair ") for text in rows)  # the pairs found in a hot cell
        from PySide6.QtWidgets import QLabel

        status = w.findChild(QLabel, "live_link_status")
        assert status is not None and status.isVisible()
        # the longest form that fits the status bar is shown, the full sentence in the tooltip
        assert "frames" in status.toolTip() and "dropped by the game" in status.toolTip()
        assert status.text() in status.forms and "game dropped" in status.text()
        assert status.fontMetrics().horizontalAdvance(status.text()) <= status.contentsRect().width()
        assert status.geometry().right() <= w.statusBar().width()
        game.wait(timeout=60)
        qtbot.waitUntil(lambda: "disconnected" in link.connection, timeout=30_000)
        assert link.session.frames == 400 and c.simulation is link.source  # the last state stays
        saved = tmp_path / "live.npz"
        assert c.save_recording(str(saved)) and saved.exists()
        # a second game connects without a restart and starts a new session
        again = start_game(port, frames=30, fps=0)
        again.wait(timeout=60)
        qtbot.waitUntil(lambda: link.session is not None and link.session.frames == 30, timeout=30_000)
    finally:
        game.kill()


def test_a_ray_on_a_live_game_is_answered_by_each_frame_shown(
        live_window, qtbot):
    """The Ray tool drawn over a streaming game: every frame shown after it comes with the
    ray's answer from its own tree, made by the processing (while the drag changed the ray,
    the frames shown had no answer to it yet and their trees were asked here)."""
    from .conftest import drag

    w = live_window
    link, c, st = w.live_link, w.timeline, w.state
    port = int(link.address.rsplit(":", 1)[1])
    game = start_game(port, frames=600, movers=300)
    try:
        qtbot.waitUntil(lambda: c.frame >= 15, timeout=30_000)
        top = w.views2d["Top"]
        (u0, u1), (v0, v1) = top.vb.viewRange()
        w.tool_actions["ray"].trigger()
        drag(top, (u0 + 0.1 * (u1 - u0), (v0 + v1) / 2), (u1 - 0.1 * (u1 - u0), (v0 + v1) / 2))
        assert st.ray is not None and st.ray.result is not None
        seen: dict[int, tuple] = {}

        def record() -> bool:
            frame = link.source.newest
            if frame is not None and frame.answers is not None and c.frame == frame.record.frame:
                st.flush()
                seen[c.frame] = (st.ray.result, frame)
            return len(seen) >= 10

        qtbot.waitUntil(record, timeout=60_000)
        for result, frame in seen.values():
            assert result is frame.answers.ray  # the frame's own answer, not asked here
            assert len(result.visited) > 0 and result.visited.max() < len(frame.nodes)
        # the answer is the frame's own tree's: asked of it here, once
        result, frame = seen[max(seen)]
        ray = st.ray
        expect = frame.index.query_ray(ray.origin, ray.direction, ray.max_t, trace=True)
        np.testing.assert_array_equal(result.ids, expect.ids)
        np.testing.assert_array_equal(result.visited, expect.visited)
        assert st.ray.brute_tested == frame.index.objects.count
    finally:
        game.kill()


def test_a_long_game_holds_a_few_frames_however_often_the_hotspots_are_searched(live_window, qtbot):
    """The Hotspots list searches the newest frame on a worker every few refreshes; each
    search's frame (its trees brought over from the processing) is let go once it answered."""
    import gc

    from editor.model.live.processor import LiveFrame

    w = live_window
    link, c = w.live_link, w.timeline
    w.docks["hotspots"].raise_()
    port = int(link.address.rsplit(":", 1)[1])
    gc.collect()
    before = {id(o) for o in gc.get_objects() if type(o) is LiveFrame}  # other tests' leftovers
    game = start_game(port, frames=900, movers=300, fps=240)
    try:
        qtbot.waitUntil(lambda: c.frame >= 20, timeout=30_000)
        # the game's boxes lie beyond the open level: every view was framed on both
        rec = link.source.recording
        game_lo, game_hi = rec.static_lo.min(axis=0), rec.static_hi.max(axis=0)
        level_lo, level_hi = w.document.scene.bounds()
        assert not (level_lo <= game_lo).all() or not (game_hi <= level_hi).all()
        for view in w.views2d.values():
            assert view.shows(game_lo, game_hi) and view.shows(level_lo, level_hi), view.vb.viewRange()
        searches: set[str] = set()

        def game_over() -> bool:  # meanwhile, note every list the Hotspots panel showed
            searches.add(w.hotspot_panel.summary.text().partition(":")[0])
            return game.poll() is not None

        qtbot.waitUntil(game_over, timeout=60_000)
        assert game.returncode == 0
        qtbot.waitUntil(lambda: "disconnected" in link.connection, timeout=30_000)
        gc.collect()
        held = [o for o in gc.get_objects() if type(o) is LiveFrame and id(o) not in before]
    finally:
        game.kill()
    assert link.session.frames == 900
    assert len(searches) >= 3, "the list was searched again and again while the game played"
    assert len(held) <= 4, sorted(f.record.frame for f in held)


def test_other_games_connecting_meanwhile_are_refused_and_the_first_goes_on(live_window, qtbot):
    import socket

    link = live_window.live_link
    port = int(link.address.rsplit(":", 1)[1])
    first = socket.create_connection(("127.0.0.1", port))
    first.sendall(b'{"frame": 1, "objects": [[1, 0, 0, 0, 1, 1, 1]]}\n')
    qtbot.waitUntil(lambda: link.session is not None and link.session.frames == 1, timeout=10_000)
    others = [socket.create_connection(("127.0.0.1", port)) for _ in range(50)]
    qtbot.waitUntil(lambda: link.refused == 50, timeout=20_000)
    for other in others:
        other.settimeout(5)
        assert other.recv(1) == b""  # closed by the editor
        other.close()
    first.sendall(b'{"frame": 2, "objects": [[1, 0, 0, 0, 1, 1, 1]]}\n')
    qtbot.waitUntil(lambda: link.session.frames == 2, timeout=10_000)
    first.close()


def test_a_game_cut_off_mid_frame_keeps_what_came_before_in_one_line(live_window, qtbot):
    import socket

    from editor.model.live.frame_stream import encode_binary_frame

    w = live_window
    link = w.live_link
    port = int(link.address.rsplit(":", 1)[1])
    frames = b"".join(encode_binary_frame(f, [1, 2], [[0, 0, 0], [f, 0, 0]], [[2, 2, 2], [f + 2, 2, 2]], [1, 1])
                      for f in range(1, 4))
    with socket.create_connection(("127.0.0.1", port)) as game:
        game.sendall(frames + frames[:30])  # frame 4 cut off
    qtbot.waitUntil(lambda: "disconnected" in link.connection, timeout=10_000)
    assert link.session.frames == 3 and w.timeline.simulation is link.source
    message = w.errors[-1]
    assert "ended inside a binary frame" in message and "\n" not in message
    assert w.live_link.receiver is not None  # still listening for the next game


def test_a_port_in_use_and_a_bad_address_are_one_line_each(window):
    import socket

    from editor.qt.live import listen_at

    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        assert not listen_at(window, f"127.0.0.1:{port}")
    assert not listen_at(window, "localhost:http")
    assert any(f"127.0.0.1:{port}: cannot listen" in e for e in window.errors)
    assert any("expected [HOST:]PORT" in e for e in window.errors)
