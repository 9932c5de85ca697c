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


def test_each_frame_handed_over_is_announced_on_the_processing_thread():
    """A display waiting for frames is told when one is handed over (so it need not poll);
    the announcement comes from the processing thread, once per frame handed over."""
    rng = np.random.default_rng(2)
    chunks = [(json.dumps({"static": [[1000, 0, 0, 0, 10, 10, 10]]}) + "\n").encode()]
    ids = np.arange(20)
    for frame in range(1, 11):
        lo = rng.uniform(0, 200, (20, 3))
        chunks.append(encode_binary_frame(frame, ids, lo, lo + 4, np.ones(20, dtype=bool)))
    queued = [("connected", "game:1")]
    wake = threading.Event()
    announced: list[str] = []
    handed = threading.Event()

    def take():
        out = list(queued)
        queued.clear()
        return out

    def offered():
        announced.append(threading.current_thread().name)
        handed.set()

    processor = LiveProcessor(take, wake, lambda: backend_class("grid")(), offered=offered)
    taken = []
    for chunk in chunks[1:]:  # one frame at a time, each taken before the next is sent
        handed.clear()
        queued.extend([("data", chunks[0])] if not taken else [])
        queued.append(("data", chunk))
        wake.set()
        assert handed.wait(30), "the frame was not handed over"
        newest = processor.take_newest()
        assert newest is not None
        taken.append(newest.record.frame)
        time.sleep(0.04)  # past the shortest interval between two frames handed over
    assert processor.stop(timeout=5)
    assert taken == list(range(1, 11))
    assert len(announced) == len(taken) and set(announced) == {"live-processor"}


def test_a_frame_left_untaken_is_replaced_by_a_fresher_one_while_processing_goes_on():
    """A busy processing thread (a burst of frames, never idle) whose display has not taken the
    frame handed over replaces it with the newest one once it is stale: the display, when free,
    finds a recent frame instead of waiting for the next one processed after it takes."""
    rng = np.random.default_rng(3)
    chunks = [(json.dumps({"static": [[100_000, 0, 0, 0, 10, 10, 10]]}) + "\n").encode()]
    movers = 5000
    ids = np.arange(movers)
    for frame in range(1, 81):
        lo = rng.uniform(0, 2000, (movers, 3))
        chunks.append(encode_binary_frame(frame, ids, lo, lo + 8, np.ones(movers, dtype=bool)))
    queued = [("connected", "game:1"), ("data", b"".join(chunks))]

    class MoreBytesWaiting(threading.Event):
        """The socket thread's flag as a game faster than the processing sees it: set."""

        def is_set(self) -> bool:
            return True

    wake = MoreBytesWaiting()
    offers: list[int] = []  # frames processed when each frame was handed over

    def take():
        out = list(queued)
        queued.clear()
        return out

    processor = LiveProcessor(take, wake, lambda: backend_class("grid")(),
                              offered=lambda: offers.append(processor.session.frames))
    wake.set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (processor.session is None or processor.session.frames < 80):
        time.sleep(0.01)
    assert processor.stop(timeout=5)
    assert processor.session.frames == 80
    # handed over again while untaken and busy (the first frame, then fresher ones), not only
    # once and then when idle after the last
    busy = [frames for frames in offers if frames < 80]
    assert len(busy) >= 2 and busy == sorted(set(busy)), offers
