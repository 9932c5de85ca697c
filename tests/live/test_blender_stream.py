"""The Blender add-on's stream logic without Blender: `scene_stream.SceneStream` over the real
client (`ps_link`) to the editor's own receiver, parsed by the editor's own stream parser."""
from __future__ import annotations

import importlib.util
import socket
import sys
import time
from pathlib import Path

import pytest

from editor.model.live.frame_stream import FrameStreamParser, StreamHeader
from editor.model.live.session import parse_names
from editor.qt.live.receiver import Receiver

REPO = Path(__file__).resolve().parents[2]


def load(name: str, path: Path):
    """A module from its file, as Blender loads the add-on's (registered: dataclasses look it up)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


ps_link = load("blender_addon_ps_link", REPO / "clients" / "python" / "ps_link.py")
scene_stream = load("blender_addon_scene_stream",
                    REPO / "clients" / "blender" / "partition_studio" / "scene_stream.py")
Snapshot, SceneStream = scene_stream.Snapshot, scene_stream.SceneStream

FLOOR = ("floor", (-10.0, -10.0, -0.2, 10.0, 10.0, 0.0))
WALL = ("wall", (-10.0, 9.0, 0.0, 10.0, 10.0, 3.0))


def cube(name: str, x: float) -> tuple[str, tuple]:
    return name, (x, 0.0, 0.0, x + 1.0, 1.0, 1.0)


class Editor:
    """The editor's receiver thread; each game's bytes parsed as the editor parses them."""

    def __init__(self) -> None:
        self.receiver = Receiver("127.0.0.1", 0)
        self.port = int(self.receiver.address.rsplit(":", 1)[1])
        self.games: list[dict] = []
        self.refused = 0

    def take(self, until, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while not until() and time.monotonic() < deadline:
            for kind, value in self.receiver.take():
                if kind == "connected":
                    self.games.append({"parser": FrameStreamParser(f"tcp://{value}"), "header": StreamHeader(),
                                       "frames": [], "closed": False})
                elif kind == "refused":
                    self.refused += 1
                elif kind == "closed":
                    self.games[-1]["closed"] = True
                else:
                    self._feed(self.games[-1], value)
            time.sleep(0.005)
        assert until(), f"the editor got {self.games}"

    @staticmethod
    def _feed(game: dict, data: bytes) -> None:
        for item in game["parser"].feed(data):
            if isinstance(item, StreamHeader):
                game["header"].static_ids = item.static_ids
                game["header"].static_lo, game["header"].static_hi = item.static_lo, item.static_hi
                game["header"].meta.update(item.meta)
            else:
                game["frames"].append(item)


@pytest.fixture
def editor():
    editor = Editor()
    yield editor
    editor.receiver.stop()


def test_connect_sends_the_header_and_frame_then_only_changed_frames(editor):
    stream = SceneStream(ps_link)
    first = Snapshot(1, [cube("ogre", 0.0), cube("crate", 3.0)], [FLOOR, WALL])
    assert stream.connect("127.0.0.1", editor.port, first, scale=32.0, meta={"game": "blender", "file": "a.blend"})
    assert stream.state == f"connected to 127.0.0.1:{editor.port}"
    assert not stream.send(Snapshot(1, [cube("ogre", 0.0), cube("crate", 3.0)]))  # unchanged: skipped
    assert stream.send(Snapshot(2, [cube("ogre", 0.5), cube("crate", 3.0)]))
    assert stream.send(Snapshot(1, [cube("ogre", 0.0), cube("crate", 3.0)]))  # scrubbed back: a new frame
    editor.take(lambda: editor.games and len(editor.games[0]["frames"]) == 3)
    game = editor.games[0]
    header, frames = game["header"], game["frames"]
    names = parse_names(header.meta["names"])
    assert header.meta["game"] == "blender" and header.meta["units_per_metre"] == 32.0
    assert sorted(names.values()) == ["crate", "floor", "ogre", "wall"]
    static = {names[int(i)]: (lo.tolist(), hi.tolist()) for i, lo, hi in
              zip(header.static_ids, header.static_lo, header.static_hi)}
    assert static["floor"] == ([-320.0, -320.0, -6.4], [320.0, 320.0, 0.0])  # metres x the scale
    assert [f.frame for f in frames] == [1, 2, 3]  # the stream's numbers increase, Blender's need not
    ogre = next(k for k, n in names.items() if n == "ogre")
    assert frames[1].lo[list(frames[1].ids).index(ogre)].tolist() == [16.0, 0.0, 0.0]
    # ids: static and moving ranges apart, all below 2**27, stable
    static_ids = {int(i) for i in header.static_ids}
    moving_ids = {int(i) for i in frames[0].ids}
    assert min(static_ids) >= scene_stream.STATIC_ID_BASE > max(moving_ids)
    assert max(static_ids) < 2 ** 27 and stream.ids.moving_id("ogre") == ogre
    assert stream.frames_sent == 3 and stream.dropped == 0
    stream.disconnect()
    assert stream.state == "disconnected" and not stream.connected


def test_send_scene_reconnects_with_a_new_header_when_the_static_objects_changed(editor):
    stream = SceneStream(ps_link)
    assert stream.connect("127.0.0.1", editor.port, Snapshot(1, [cube("ogre", 0.0)], [FLOOR]))
    ogre = stream.ids.moving_id("ogre")
    # the header still holds: Send scene is one more frame on the same connection, even unchanged
    assert stream.send_scene("127.0.0.1", editor.port, Snapshot(1, [cube("ogre", 0.0)], [FLOOR]))
    # a frame naming a static object the header lacks: the header is stale, frames go on
    assert stream.send(Snapshot(2, [cube("ogre", 1.0)], static_names=frozenset({"floor", "wall"})))
    assert stream.stale and "Send scene to update" in stream.state
    # then Send scene connects anew: the editor takes it as its next game, none refused
    assert stream.send_scene("127.0.0.1", editor.port, Snapshot(2, [cube("ogre", 1.0)], [FLOOR, WALL]))
    assert not stream.stale and stream.state == f"connected to 127.0.0.1:{editor.port}"
    editor.take(lambda: len(editor.games) == 2 and len(editor.games[1]["frames"]) == 1)
    assert editor.refused == 0 and editor.games[0]["closed"]
    first, second = editor.games
    assert [f.frame for f in first["frames"]] == [1, 2, 3]
    assert len(first["header"].static_ids) == 1 and len(second["header"].static_ids) == 2
    assert [int(i) for i in second["frames"][0].ids] == [ogre]  # the same id after the reconnect
    stream.disconnect()


def test_no_editor_and_a_closed_editor_are_state_lines_not_errors():
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    stream = SceneStream(ps_link)
    assert not stream.connect("127.0.0.1", port, Snapshot(1, [], []))
    assert stream.state == f"not connected: cannot connect to 127.0.0.1:{port}: Connection refused"
    assert not stream.send(Snapshot(2, [cube("ogre", 0.0)]))  # nothing to send to: no error either
    assert not stream.connect("no such host.invalid", 7878, Snapshot(1, [], []))
    assert stream.state.startswith("not connected:")

    with socket.create_server(("127.0.0.1", 0)) as server:
        assert stream.connect("127.0.0.1", server.getsockname()[1], Snapshot(1, [cube("ogre", 0.0)], []))
        conn, _ = server.accept()
        conn.close()  # the editor quits
    deadline = time.monotonic() + 20
    x = 0.0
    while stream.link is not None and time.monotonic() < deadline:
        x += 1.0
        stream.send(Snapshot(1, [cube("ogre", x)]))
        stream.poll()
        time.sleep(0.01)
    assert stream.link is None and stream.state.startswith("disconnected: the editor closed the connection")


def test_ids_are_stable_per_name_and_the_ranges_never_meet():
    ids = scene_stream.IdTable()
    assert [ids.moving_id(n) for n in ("a", "b", "a")] == [1, 2, 1]
    assert ids.static_id("a") == scene_stream.STATIC_ID_BASE  # a name may be static and moving apart
    assert ids.static_id("b") == scene_stream.STATIC_ID_BASE + 1 and ids.moving_id("b") == 2
