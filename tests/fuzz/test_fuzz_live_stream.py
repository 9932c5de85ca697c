"""Hostile live-link streams: any bytes, in any chunks, give frames or one StreamError line."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from editor.model.live.frame_stream import FrameStreamParser, StreamError, encode_binary_frame
from editor.model.recording import FrameRecord

GOOD = (json.dumps({"static": [[100, 0, 0, 0, 4, 4, 4]]}) + "\n").encode() + \
    encode_binary_frame(1, [1, 2], [[0, 0, 0], [1, 1, 1]], [[2, 2, 2], [3, 3, 3]], [1, 0]) + \
    b'{"frame": 2, "objects": [[1, 0, 0, 0, 2, 2, 2, true]]}\n' + \
    encode_binary_frame(3, [2], [[1, 1, 1]], [[3, 3, 3]], [1])


def _run(data: bytes, cuts: list[int]) -> None:
    parser = FrameStreamParser("fuzz", max_frame_bytes=4096)
    frames = 0
    at = 0
    try:
        for cut in sorted(set(cuts)) + [len(data)]:
            frames += sum(isinstance(x, FrameRecord) for x in parser.feed(data[at:cut]))
            at = cut
        parser.finish()
    except StreamError as exc:
        text = str(exc)
        assert text.startswith("fuzz: byte ") and "\n" not in text
        frames += sum(isinstance(x, FrameRecord) for x in exc.items)
    assert frames == parser.frames


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_a_mutated_stream_never_raises_anything_else(data):
    stream = bytearray(GOOD)
    for _ in range(data.draw(st.integers(0, 4))):
        pos = data.draw(st.integers(0, len(stream) - 1))
        stream[pos] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(stream)))
    stream = stream[:cut] if data.draw(st.booleans()) else stream
    _run(bytes(stream), data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=600), st.lists(st.integers(0, 600), max_size=4))
def test_random_bytes_never_raise_anything_else(blob, cuts):
    _run(blob, [c for c in cuts if c <= len(blob)])
