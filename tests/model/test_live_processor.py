"""The live link's processing thread: every game frame processed, the newest handed over."""
from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest

from editor.model.live.frame_stream import encode_binary_frame
from editor.model.live.processor import LiveProcessor
from editor.model.live.source import LiveSource
from spatial.backend_lookup import backend_class


@pytest.mark.parametrize("take_late", [False, True])
def test_a_display_slower_than_the_game_skips_display_frames_never_game_frames(take_late):
    """The processing thread hands over the newest frame: a display that takes it late finds
    the newest one, and its copy of the recording still gets every frame in order."""
    rng = np.random.default_rng(1)
    static = [[1000 + k, *(rng.uniform(0, 500, 3)), *(rng.uniform(500, 520, 3))] for k in range(50)]
    chunks = [(json.dumps({"static": static}) + "\n").encode()]
    ids = np.arange(40)
    for frame in range(1, 31):
        lo = rng.uniform(0, 500, (40, 3))
        chunks.append(encode_binary_frame(frame, ids, lo, lo + 8, np.ones(40, dtype=bool)))
    queued = [("connected", "game:1")] + [("data", c) for c in chunks] + [("closed", "done")]
    wake = threading.Event()

    def take():
        out = list(queued)
        queued.clear()
        return out

    processor = LiveProcessor(take, wake, lambda: backend_class("grid")())
    wake.set()
    source = LiveSource("game")
    taken = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if take_late:
            time.sleep(0.05)
        newest = processor.take_newest()
        for event in processor.take_events():
            if event[0] == "frame":
                source.add_frame(event[2])
        if newest is not None:
            taken.append(newest.record.frame)
            source.adopt(newest)
            source.step()
        if taken and taken[-1] == 30:
            break
    assert processor.stop(timeout=5)
    assert [r.frame for r in source.recording] == list(range(1, 31))  # every game frame, in order
    assert taken == sorted(taken) and taken[-1] == 30  # the newest, never an older one again
    assert source.frames_shown + source.display_skipped == 30
    # the display's copy of the tree is not the processing thread's index
    assert source.index is not processor.session.index
