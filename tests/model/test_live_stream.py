"""The live-link stream: frame lines and binary frames, parsed incrementally, replayed alike."""
from __future__ import annotations

import json

import numpy as np
import pytest

from editor.model.frame_format import load_frame_lines
from editor.model.live.frame_stream import (
    BINARY_MAGIC,
    FrameStreamParser,
    StreamError,
    StreamHeader,
    encode_binary_frame,
    read_stream,
)
from editor.model.live.session import LiveSession
from editor.model.recording import FrameRecord, Replay
from spatial.registry import default_registry


def _game(frames=12, movers=30, seed=3):
    """Header bytes, then frames alternating text and binary; boxes exact in float32."""
    rng = np.random.default_rng(seed)
    static = [[1000 + k, k * 8.0, 0.0, 0.0, k * 8.0 + 6, 6.0, 4.0] for k in range(20)]
    header = json.dumps({"static": static[:10]}) + "\n" + json.dumps(
        {"static": static[10:], "meta": {"names": {"1003": "door", "5": "ogre"}}}) + "\n"
    parts = [header.encode()]
    pos = rng.uniform(0, 40, (movers, 3)).astype(np.float32)
    ids = np.arange(movers)
    for f in range(1, frames + 1):
        pos += rng.uniform(-4, 4, pos.shape).astype(np.float32)
        alive = ids[: movers - (f % 3)]  # some despawn and come back
        lo, hi = pos[alive], pos[alive] + np.float32(5)
        awake = (alive + f) % 4 != 0
        if f % 2:
            parts.append(encode_binary_frame(f, alive, lo, hi, awake))
        else:
            objects = [[int(i), *map(float, lo[k]), *map(float, hi[k]), bool(awake[k])]
                       for k, i in enumerate(alive)]
            parts.append((json.dumps({"frame": f, "objects": objects}) + "\n").encode())
    return b"".join(parts)


def _feed_in_chunks(parser, data, size):
    out = []
    for at in range(0, len(data), size):
        out += parser.feed(data[at:at + size])
    out += parser.finish()
    return out


def test_a_mixed_stream_parses_the_same_in_any_chunking():
    data = _game()
    whole = _feed_in_chunks(FrameStreamParser("game"), data, len(data))
    for size in (1, 7, 1000):
        parts = _feed_in_chunks(FrameStreamParser("game"), data, size)
        assert len(parts) == len(whole)
        for a, b in zip(parts, whole):
            assert type(a) is type(b)
            if isinstance(a, FrameRecord):
                assert a.frame == b.frame and np.array_equal(a.ids, b.ids)
                assert np.array_equal(a.lo, b.lo) and np.array_equal(a.awake, b.awake)
                assert np.array_equal(a.despawned, b.despawned)
    headers = [x for x in whole if isinstance(x, StreamHeader)]
    frames = [x for x in whole if isinstance(x, FrameRecord)]
    assert len(headers) == 2 and headers[1].meta["names"]["1003"] == "door"
    assert [f.frame for f in frames] == list(range(1, 13))
    assert len(frames[0].ids) == 29 and len(frames[1].spawned) == 0 and len(frames[2].spawned) == 2


def test_the_saved_bytes_replay_with_simulate_to_the_same_pairs(tmp_path):
    data = _game()
    path = tmp_path / "game.psl"
    path.write_bytes(data)
    recording = load_frame_lines(path)  # the file reader `simulate --recording` uses
    assert len(recording.static_ids) == 20 and len(recording) == 12
    backend = default_registry().backend("brute")
    replay = Replay(recording, backend())
    replayed = []
    for _ in replay.frames():
        replayed.append(replay.last_pairs.pairs.tolist())
    live = LiveSession(backend(), "test")
    live_pairs = []
    for at in range(0, len(data), 333):
        for _ in live.feed(data[at:at + 333]):
            live_pairs.append(live.last_pairs.pairs.tolist())
    live.finish()
    assert live_pairs == replayed and any(replayed)
    assert live.names == {1003: "door", 5: "ogre"}
    assert [s.overlapping for s in live.stats] == [len(p) for p in replayed]
    # a session that keeps no stats list (a window following a game for hours) counts the
    # same frames and keeps each frame's stats with its record
    lean = LiveSession(backend(), "test")
    lean.keep_last_stats(0)
    lean.feed(data)
    lean.finish()
    assert lean.frames == live.frames == 12 and len(lean.stats) == 0
    assert [r.stats.overlapping for r in lean.recording] == [len(p) for p in replayed]


@pytest.mark.parametrize("mutate, message", [
    (lambda b: b[:8] + (3).to_bytes(4, "little") + b[12:], "frame 3 does not follow frame 4"),
    (lambda b: b[:20] + (2 ** 28).to_bytes(4, "little") + b[24:], "objects[0]: id must be"),
    (lambda b: b[:28] + b"\x00\x00\xc0\x7f" + b[32:], "objects[0]: expected finite numbers"),
    (lambda b: b[:-1] + b"\x07", "awake must be 0 or 1"),
    (lambda b: b[:4] + (len(b)).to_bytes(4, "little") + b[8:] + b"\x00" * 20, "needs a payload"),
    (lambda b: b[:16] + (1).to_bytes(4, "little") + b[20:], "flags must be 0"),
])
def test_a_broken_binary_frame_names_offset_line_and_frame_and_keeps_what_came_before(mutate, message):
    good = encode_binary_frame(4, [1, 2], [[0, 0, 0], [1, 1, 1]], [[1, 1, 1], [2, 2, 2]], [1, 0])
    bad = mutate(encode_binary_frame(6, [1, 2], [[0, 0, 0], [1, 1, 1]], [[1, 1, 1], [2, 2, 2]], [1, 0]))
    parser = FrameStreamParser("127.0.0.1:9")
    text = b'{"frame": 2, "objects": []}\n'
    assert len(parser.feed(text + good)) == 2
    with pytest.raises(StreamError) as err:
        parser.feed(bad)
    text_error = str(err.value)
    assert text_error.startswith(f"127.0.0.1:9: byte {len(text) + len(good)}, line 3") and message in text_error
    assert "\n" not in text_error and parser.frames == 2
    with pytest.raises(StreamError):  # the parser refuses more input once broken
        parser.feed(text)


def test_broken_lines_and_garbage_are_one_line_each():
    cases = [
        (b'{"frame": 1, "objects": [[1, 0, 0, 0, 1, 1]]}\n', "line 1, frame 1: column 26: objects[0]: expected"),
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "byte 0, line 1: column 1: invalid JSON"),
        (b"\x00\x01\x02\x03rest", "expected a frame line or a binary frame"),
        (b'{"frame": 1, "objects": []}\n{"static": []}\n', "line 2: column 2: 'static' may only come before"),
    ]
    for data, message in cases:
        with pytest.raises(StreamError) as err:
            _feed_in_chunks(FrameStreamParser("s"), data, 5)
        assert message in str(err.value), str(err.value)


def test_the_buffer_is_bounded():
    parser = FrameStreamParser("s", max_frame_bytes=1000)
    with pytest.raises(StreamError, match="a line longer than 1000 bytes"):
        for _ in range(20):
            parser.feed(b"x" * 100)
    assert parser.pending_bytes <= 1100
    parser = FrameStreamParser("s", max_frame_bytes=1000)
    with pytest.raises(StreamError, match="binary frame of 5000 bytes exceeds the limit"):
        parser.feed(BINARY_MAGIC + (5000).to_bytes(4, "little"))


def test_a_stream_cut_inside_a_frame_is_reported_at_the_end():
    parser = FrameStreamParser("s")
    frame = encode_binary_frame(1, [1], [[0, 0, 0]], [[1, 1, 1]], [1])
    parser.feed(frame + frame[:10])
    with pytest.raises(StreamError, match="ended inside a binary frame"):
        parser.finish()
    with pytest.raises(StreamError, match="no frames found"):
        read_stream(b'{"static": []}\n', "s")


def test_line_numbers_and_the_last_line_do_not_depend_on_chunking():
    binary = encode_binary_frame(1, [1], [[0, 0, 0]], [[1, 1, 1]], [1])
    data = binary + b"\n" + b'{"frame": 2, "objects": []}\n{"frame": 3, "objects": [[1, 0, 0, 0, 1, 1]]}'
    messages = set()
    for size in (1, 3, len(binary), len(binary) + 1, len(data)):
        parser = FrameStreamParser("s")
        with pytest.raises(StreamError) as err:
            _feed_in_chunks(parser, data, size)
        messages.add(str(err.value))
        assert parser.frames == 2
    assert len(messages) == 1 and "line 3, frame 3: column 26" in messages.pop()
    parser = FrameStreamParser("s")
    frames = _feed_in_chunks(parser, binary + b'{"frame": 2, "objects": []}', 7)
    assert [f.frame for f in frames] == [1, 2]  # a last line without a newline still counts


def test_frames_the_game_dropped_are_counted_after_the_recording_let_old_frames_go():
    from editor.model.live.processor import summarize

    ids = np.arange(4)
    lo = np.zeros((4, 3))
    numbers = [5, 6, 8, 9, 10, 14, 15]  # the game dropped 7, 11, 12 and 13
    session = LiveSession(default_registry().backend("brute")(), "game", capacity=3)
    for n in numbers:
        session.feed(encode_binary_frame(n, ids, lo + n, lo + n + 1, np.ones(4, dtype=bool)))
    assert session.recording.first_frame == 10  # the ring holds the last three
    summary = summarize(session)
    assert (summary.first_frame, summary.last_frame, summary.received) == (5, 15, 7)
    assert summary.dropped_by_game == 4
