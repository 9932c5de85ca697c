"""A game's frames processed in a child process: the same frames, pairs, trees and hotspots as
on a thread, faults and a dying child reported, frames left on display still readable."""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

from editor.model.live.frame_stream import StreamError, encode_binary_frame
from editor.model.live.processor import LiveProcessor
from editor.model.live.processor_process import ProcessLiveProcessor, runs_in_child
from spatial.backend_lookup import backend_class

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the child is forked from a fork server here")


def _stream(frames: int, movers: int = 300, seed: int = 0) -> list[bytes]:
    rng = np.random.default_rng(seed)
    static = [[10_000 + k, *(rng.uniform(0, 900, 3)), *(rng.uniform(900, 960, 3))] for k in range(80)]
    chunks = [(json.dumps({"static": static}) + "\n").encode()]
    ids = np.arange(movers)
    lo = rng.uniform(0, 900, (movers, 3))
    for frame in range(1, frames + 1):
        lo = lo + rng.normal(0, 4, lo.shape)
        chunks.append(encode_binary_frame(frame, ids, lo, lo + 12, rng.random(movers) < 0.8))
    return chunks


class _Feed:
    """The socket thread's side: events queued for ``take()``, ``wake`` set."""

    def __init__(self) -> None:
        self.queued: list[tuple] = []
        self.lock = threading.Lock()
        self.wake = threading.Event()

    def take(self) -> list[tuple]:
        with self.lock:
            out, self.queued = self.queued, []
        return out

    def put(self, *events: tuple) -> None:
        with self.lock:
            self.queued.extend(events)
        self.wake.set()


def _grid():
    return functools.partial(backend_class("grid"))


def _drain(processor, until, timeout: float = 60.0) -> tuple[list[tuple], list]:
    """Events and newest frames taken until ``until(events)`` holds."""
    events, newest = [], []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        frame = processor.take_newest()
        if frame is not None:
            newest.append(frame)
        events.extend(processor.take_events())
        if until(events):
            return events, newest
        time.sleep(0.01)
    raise AssertionError(f"gave up waiting; events: {[e[0] for e in events][-10:]}")


def _frames(events) -> list[int]:
    return [e[2].frame for e in events if e[0] == "frame"]


def test_a_child_processes_every_frame_as_the_thread_does():
    chunks = _stream(40)
    results = {}
    for kind in (LiveProcessor, ProcessLiveProcessor):
        feed = _Feed()
        processor = kind(feed.take, feed.wake, _grid())
        feed.put(("connected", "game:1"), *[("data", c) for c in chunks])
        events, newest = _drain(processor, lambda ev: _frames(ev)[-1:] == [40])
        last = newest[-1] if newest else None
        while last is None or last.record.frame != 40:
            last = processor.take_newest() or last
            time.sleep(0.01)
        summary = processor.summary()
        assert processor.stop(timeout=10)
        results[kind] = (events, last, summary, processor)
    (t_events, t_last, t_summary, _), (p_events, p_last, p_summary, child) = results.values()
    assert _frames(p_events) == _frames(t_events) == list(range(1, 41))  # every frame, in order
    assert [e[3].overlapping for e in p_events if e[0] == "frame"] == \
        [e[3].overlapping for e in t_events if e[0] == "frame"]
    assert p_summary.frames == t_summary.frames == 40 and p_summary.received == 40
    assert p_summary.source == "tcp://game:1" and not p_summary.broken
    assert child.pid != os.getpid() and child.step_threads == {"live-processor"}
    # the newest frame's pairs, node table, tree and hotspot window: the same as the thread's
    assert np.array_equal(p_last.pairs.pairs, t_last.pairs.pairs)
    assert np.array_equal(p_last.nodes.lo, t_last.nodes.lo)
    assert np.array_equal(p_last.nodes.pair_tests, t_last.nodes.pair_tests)
    assert sorted(p_last.index.objects.ids.tolist()) == sorted(t_last.index.objects.ids.tolist())
    assert [h.as_dict() for h in p_last.hotspots.ranking(5)] == \
        [h.as_dict() for h in t_last.hotspots.ranking(5)]


def test_the_copies_of_a_frame_are_fetched_once_and_kept_after_the_child_ended():
    feed = _Feed()
    processor = ProcessLiveProcessor(feed.take, feed.wake, _grid())
    feed.put(("connected", "game:1"), *[("data", c) for c in _stream(12)])
    _, newest = _drain(processor, lambda ev: _frames(ev)[-1:] == [12])
    shown = newest[-1]
    assert not shown.copies.held  # light: its tree stays in the child until read
    index = shown.index
    assert shown.copies.held and shown.index is index and processor.fetches == 1
    assert index.objects.count == 80 + 300
    held = processor.take_newest() or shown  # the frame left on display when the link stops
    assert processor.stop(timeout=10) and not processor.running
    assert held.index.objects.count == 80 + 300  # sent by the child before it ended
    assert held.hotspots.window == 60


def test_a_broken_stream_is_one_fault_naming_its_frame_and_the_frames_before_stay():
    feed = _Feed()
    processor = ProcessLiveProcessor(feed.take, feed.wake, _grid())
    chunks = _stream(3)
    broken = bytearray(encode_binary_frame(4, np.arange(3), np.zeros((3, 3)), np.ones((3, 3)),
                                           np.ones(3, bool)))
    broken[-3:] = b"\x07" * 3  # the awake flags of the fourth frame are not 0 or 1
    feed.put(("connected", "game:1"), *[("data", c) for c in chunks], ("data", bytes(broken)))
    events, _ = _drain(processor, lambda ev: any(e[0] == "fault" for e in ev))
    fault = next(e[1] for e in events if e[0] == "fault")
    assert isinstance(fault, StreamError) and fault.frame == 4 and "frame 4" in str(fault)
    assert _frames(events) == [1, 2, 3]
    _drain(processor, lambda ev: processor.summary() is not None and processor.summary().broken)
    assert processor.stop(timeout=10)


def test_a_child_that_dies_is_reported_and_its_frames_stay_readable():
    feed = _Feed()
    processor = ProcessLiveProcessor(feed.take, feed.wake, _grid())
    feed.put(("connected", "game:1"), *[("data", c) for c in _stream(5)])
    _, newest = _drain(processor, lambda ev: _frames(ev)[-1:] == [5])
    shown = newest[-1]
    os.kill(processor.pid, signal.SIGKILL)
    events, _ = _drain(processor, lambda ev: any(e[0] == "closed" for e in ev))
    assert "processing process ended" in next(e[1] for e in events if e[0] == "closed")
    assert not processor.running
    # its tree cannot come from the child any more: built here from the frame's own boxes
    assert sorted(shown.index.objects.ids.tolist()) == sorted(
        [10_000 + k for k in range(80)] + shown.record.ids.tolist())
    processor.stop(timeout=1)


def test_the_backend_chosen_for_the_next_game_is_the_one_it_gets():
    feed = _Feed()
    processor = ProcessLiveProcessor(feed.take, feed.wake, _grid())
    processor.make_index = functools.partial(backend_class("octree"))
    time.sleep(0.2)
    feed.put(("connected", "game:1"), *[("data", c) for c in _stream(3)])
    _, newest = _drain(processor, lambda ev: _frames(ev)[-1:] == [3])
    frame = (newest or [processor.take_newest()])[-1]
    assert type(frame.index).__name__ == type(backend_class("octree")()).__name__
    assert processor.stop(timeout=10)


def test_only_a_backend_a_child_can_import_is_processed_there(tmp_path):
    assert runs_in_child(_grid())
    assert not runs_in_child(lambda: backend_class("grid")())  # not picklable
    path = tmp_path / "loose_plugin.py"
    path.write_text("from spatial.backend_lookup import backend_class\n"
                    "class Loose(backend_class('grid')):\n    pass\n")
    spec = importlib.util.spec_from_file_location("a_plugin_loaded_from_a_file", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        assert not runs_in_child(functools.partial(module.Loose))  # no child could import it
    finally:
        del sys.modules[spec.name]


def test_bytes_the_child_has_not_parsed_stay_bounded_and_the_rest_wait_in_the_queue(monkeypatch):
    """A game faster than the processing: what the child has not parsed stays under the bound,
    the rest waits in the socket thread's queue (which lets TCP push back), and every frame is
    still processed, in order."""
    import editor.model.live.processor_process as processor_process

    limit = 512 * 1024
    monkeypatch.setattr(processor_process, "FORWARD_AHEAD_BYTES", limit)
    chunks = _stream(80, movers=6000)  # about 170 kB a frame
    feed = _Feed()
    processor = ProcessLiveProcessor(feed.take, feed.wake, _grid())
    feed.put(("connected", "game:1"), ("data", chunks[0]))

    def game():
        for chunk in chunks[1:]:
            feed.put(("data", chunk))
            time.sleep(0.002)  # faster than the processing

    threading.Thread(target=game, daemon=True).start()
    most_ahead, queued_meanwhile, events = 0, 0, []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _frames(events)[-1:] != [80]:
        most_ahead = max(most_ahead, processor.ahead_bytes)
        with feed.lock:
            queued_meanwhile = max(queued_meanwhile, sum(len(e[1]) for e in feed.queued))
        events.extend(processor.take_events())
        processor.take_newest()
        time.sleep(0.005)
    assert _frames(events) == list(range(1, 81))
    assert queued_meanwhile > 2 * limit  # held back in the queue, not sent on
    # at most the bound and one frame's bytes (sent while under it)
    assert most_ahead <= limit + len(chunks[1])
    assert processor.stop(timeout=10)


@pytest.mark.parametrize("kind", [LiveProcessor, ProcessLiveProcessor])
def test_the_displays_ray_and_frustum_are_answered_on_each_frame_handed_over(kind):
    """A ray and frustum the display shows are answered where the frame's index is: the
    frames come with the answers their own index gives, and no index is brought over."""
    from editor.model.query_answers import QueryAsk, answer
    from spatial.geometry import frustum_planes_from_camera

    planes = frustum_planes_from_camera(np.array([450.0, -300, 450]), np.array([0.0, 1, 0]),
                                        np.array([0.0, 0, 1]), 60.0, 1.5, 1.0, 2000.0)
    ask = QueryAsk((np.array([-50.0, 450, 450]), np.array([1.0, 0, 0]), np.inf), planes)
    feed = _Feed()
    processor = kind(feed.take, feed.wake, _grid())
    processor.queries = ask  # before the child started: sent once it has
    feed.put(("connected", "game:1"), *[("data", c) for c in _stream(30)])
    _, newest = _drain(processor, lambda ev: _frames(ev)[-1:] == [30])
    answered = [frame for frame in newest if frame.answers is not None]
    assert answered and answered[-1] is newest[-1]
    assert all(frame.answers.ask.same_as(ask) for frame in answered)
    if kind is ProcessLiveProcessor:
        assert processor.fetches == 0 and not newest[-1].copies.held
    last = newest[-1]
    expected = answer(last.index, ask)  # the frame's own tree, asked here
    got = last.answers
    assert np.array_equal(got.ray.ids, expected.ray.ids) and np.array_equal(got.ray.t, expected.ray.t)
    assert np.array_equal(got.ray.visited, expected.ray.visited) and len(got.ray.ids) > 0
    assert np.array_equal(np.sort(got.frustum.ids), np.sort(expected.frustum.ids))
    assert np.array_equal(got.frustum.visited, expected.frustum.visited)
    assert got.objects == 80 + 300
    assert got.ray.visited.max() < len(last.nodes)  # rows of the frame's own node table
    # nothing asked: frames come without answers
    processor.queries = QueryAsk()
    feed.put(*[("data", c) for c in _stream(40)[31:]])
    _, later = _drain(processor, lambda ev: _frames(ev)[-1:] == [40])
    assert later and later[-1].answers is None
    assert processor.stop(timeout=10)
