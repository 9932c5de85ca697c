"""The delta between two frames is what a plain set comparison of their objects says: the ids
gone and new, the ids whose box changed and the ids whose awake flag flipped — for frames with
the same objects (the shortcut a game's usual frame takes) and with objects coming and going."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model.recording import FrameRecord, Recording


def _record(frame: int, ids, lo, hi, awake) -> FrameRecord:
    return FrameRecord(frame, np.asarray(ids, dtype=np.int64), np.asarray(lo, dtype=float).reshape(-1, 3),
                       np.asarray(hi, dtype=float).reshape(-1, 3), np.asarray(awake, dtype=bool))


def _expected(before: FrameRecord, after: FrameRecord) -> dict:
    old = {int(i): (tuple(lo), tuple(hi), bool(a)) for i, lo, hi, a in
           zip(before.ids, before.lo, before.hi, before.awake)}
    new = {int(i): (tuple(lo), tuple(hi), bool(a)) for i, lo, hi, a in
           zip(after.ids, after.lo, after.hi, after.awake)}
    kept = sorted(set(old) & set(new))
    return {"despawned": sorted(set(old) - set(new)), "spawned": sorted(set(new) - set(old)),
            "moved": [i for i in kept if old[i][:2] != new[i][:2]],
            "awake_ids": [i for i in kept if old[i][2] != new[i][2]]}


def _next(rng, record: FrameRecord, churn: bool) -> FrameRecord:
    ids, lo, hi, awake = record.ids, record.lo.copy(), record.hi.copy(), record.awake.copy()
    step = np.where(rng.random((len(ids), 1)) < 0.5, rng.uniform(-2, 2, (len(ids), 3)), 0.0)
    lo += step
    hi += step
    grow = rng.random(len(ids)) < 0.05  # resized, not moved: one bound changes
    hi[grow, 1] += 1.0
    awake ^= rng.random(len(ids)) < 0.1
    if churn:
        keep = rng.random(len(ids)) < 0.8
        fresh = np.setdiff1d(rng.integers(0, 400, 30), ids)
        ids = np.concatenate([ids[keep], fresh])
        lo = np.vstack([lo[keep], rng.uniform(0, 50, (len(fresh), 3))])
        hi = np.vstack([hi[keep], lo[len(lo) - len(fresh):] + 1.0])
        awake = np.concatenate([awake[keep], rng.random(len(fresh)) < 0.5])
        order = np.argsort(ids)
        ids, lo, hi, awake = ids[order], lo[order], hi[order], awake[order]
    return _record(record.frame + 1, ids, lo, hi, awake)


@pytest.mark.parametrize("churn", [False, True])
def test_the_delta_is_what_comparing_the_two_frames_object_by_object_says(churn):
    rng = np.random.default_rng(int(churn))
    recording = Recording(capacity=10)
    ids = np.sort(rng.choice(400, 120, replace=False))
    lo = rng.uniform(0, 50, (120, 3))
    record = _record(1, ids, lo, lo + 2.0, rng.random(120) < 0.5)
    for _ in range(10):
        after = _next(rng, record, churn)
        delta = recording.delta(record, after)
        expected = _expected(record, after)
        for name, want in expected.items():
            assert getattr(delta, name).tolist() == want, name
        kept = np.isin(after.ids, delta.moved)
        np.testing.assert_array_equal(delta.moved_lo, after.lo[kept])
        np.testing.assert_array_equal(delta.moved_hi, after.hi[kept])
        np.testing.assert_array_equal(delta.awake_flags, after.awake[np.isin(after.ids, delta.awake_ids)])
        np.testing.assert_array_equal(delta.spawned_lo, after.lo[np.isin(after.ids, delta.spawned)])
        record = after


def test_the_first_frame_and_an_empty_frame_spawn_and_despawn_everything():
    recording = Recording(capacity=4)
    first = _record(1, [3, 5], [[0, 0, 0], [1, 1, 1]], [[1, 1, 1], [2, 2, 2]], [True, False])
    delta = recording.delta(None, first)
    assert delta.spawned.tolist() == [3, 5] and len(delta.moved) == 0
    empty = _record(2, [], np.empty((0, 3)), np.empty((0, 3)), [])
    delta = recording.delta(first, empty)
    assert delta.despawned.tolist() == [3, 5] and len(delta.spawned) == len(delta.moved) == 0
    assert len(recording.delta(empty, empty).moved) == 0
