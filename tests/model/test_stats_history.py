"""The timeline's per-frame stats: the plot columns kept beside the dict read as the dict says,
whatever order frames come in, are replaced, dropped or cleared."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from editor.model.frame_step import FrameStats
from editor.model.stats_history import COLUMNS, StatsHistory


def _stats(frame: int, value: int) -> FrameStats:
    return FrameStats(frame, candidates=value, overlapping=value // 2, nodes=value + 7,
                      update_ms=value / 8, awake=value % 11)


def _expected(model: dict[int, FrameStats], after: int) -> dict[str, np.ndarray]:
    frames = sorted(f for f in model if f > after)
    out = {"frame": np.array(frames, dtype=np.int64)}
    for name in COLUMNS:
        out[name] = np.array([float(getattr(model[f], name)) for f in frames])
    return out


operations = st.lists(st.one_of(
    st.tuples(st.just("set"), st.integers(0, 60), st.integers(0, 1000)),
    st.tuples(st.just("append"), st.integers(1, 3), st.integers(0, 1000)),
    st.tuples(st.just("setdefault"), st.integers(0, 60), st.integers(0, 1000)),
    st.tuples(st.just("drop_before"), st.integers(0, 70), st.just(0)),
    st.tuples(st.just("clear"), st.just(0), st.just(0)),
    st.tuples(st.just("read"), st.integers(-1, 60), st.just(0)),
), max_size=60)


@settings(max_examples=300, deadline=None)
@given(operations)
def test_the_columns_always_read_as_the_dict(ops):
    history, model = StatsHistory(), {}
    for op, a, b in ops:
        if op == "set":
            history[a] = model[a] = _stats(a, b)
        elif op == "append":  # the usual case: the next frames of a run
            frame = (max(model) if model else 0) + a
            history[frame] = model[frame] = _stats(frame, b)
        elif op == "setdefault":
            got = history.setdefault(a, _stats(a, b))
            assert got is model.setdefault(a, got)
        elif op == "drop_before":
            history.drop_before(a)
            model = {f: s for f, s in model.items() if f >= a}
        elif op == "clear":
            history.clear()
            model = {}
        else:
            cols = history.columns(after=a)
            want = _expected(model, a)
            assert cols.keys() == want.keys()
            for name in want:
                np.testing.assert_array_equal(cols[name], want[name])
        assert len(history) == len(model) and set(history) == set(model)
        assert all(history[f] is model[f] for f in model)
    cols = history.columns()
    for name, want in _expected(model, -1).items():
        np.testing.assert_array_equal(cols[name], want)


def test_frames_that_come_in_order_are_appended_and_earlier_reads_stay_as_they_were():
    history = StatsHistory(_stats(f, f) for f in range(1, 101))
    before = history.columns()
    copy = {k: v.copy() for k, v in before.items()}
    for frame in range(101, 1001):
        history[frame] = _stats(frame, frame)
    history.drop_before(500)
    after = history.columns(after=600)
    assert after["frame"][0] == 601 and after["frame"][-1] == 1000 and len(after["frame"]) == 400
    np.testing.assert_array_equal(after["candidates"], np.arange(601, 1001, dtype=float))
    for name, values in copy.items():  # the plots may still hold these
        np.testing.assert_array_equal(before[name], values)
    history.clear()
    history[5] = _stats(5, 5)
    for name, values in copy.items():
        np.testing.assert_array_equal(before[name], values)
    assert history.columns()["frame"].tolist() == [5]
