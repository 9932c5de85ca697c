"""The shared oracle suite: every registered backend answers exactly like brute force.

Each backend runs with its default parameters and with every variant it lists in
``param_variants`` (e.g. a loose octree, a quadtree on the xz plane), on random and degenerate
scenes, and after random sequences of edits with ``validate()`` after each step.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plugins.brute import BruteForce
from spatial.registry import default_registry
from spatial.scenegen import random_boxes

from .oracle import assert_matches, assert_same_pairs

REGISTRY = default_registry()


def _cases():
    cases = []
    for name, cls in sorted(REGISTRY.backends.items()):
        variants = getattr(cls, "param_variants", None) or [{}]
        for variant in [{}] + [v for v in variants if v]:
            label = name if not variant else f"{name}[{','.join(f'{k}={v}' for k, v in variant.items())}]"
            cases.append(pytest.param(name, variant, id=label))
    return cases


CASES = _cases()


def make(name, variant):
    return REGISTRY.backend(name)(**variant)


def both(name, variant, ids, lo, hi, dynamic=None, awake=None):
    index, oracle = make(name, variant), BruteForce()
    index.build(ids, lo, hi, dynamic, awake)
    oracle.build(ids, lo, hi, dynamic, awake)
    return index, oracle


def flags(rng, n):
    return rng.random(n) < 0.5, rng.random(n) < 0.6


# --------------------------------------------------------------------------- static scenes
@pytest.mark.parametrize("name,variant", CASES)
@pytest.mark.parametrize("layout", ["uniform", "clustered"])
def test_random_scene(name, variant, layout):
    rng = np.random.default_rng(7)
    ids, lo, hi = random_boxes(600, seed=3, layout=layout, world=500.0)
    index, oracle = both(name, variant, ids, lo, hi, *flags(rng, len(ids)))
    assert_matches(index, oracle, rng, n_queries=20)


def _degenerate_scenes():
    rng = np.random.default_rng(11)
    scenes = {}
    scenes["empty"] = (np.zeros(0, np.int64), np.zeros((0, 3)), np.zeros((0, 3)))
    scenes["single"] = (np.array([5]), np.array([[1.0, 2, 3]]), np.array([[4.0, 5, 6]]))
    pts = rng.uniform(0, 64, size=(200, 3)).round()
    scenes["zero_size"] = (np.arange(200), pts, pts.copy())
    same = np.tile([[10.0, 10, 10]], (150, 1))
    scenes["coincident"] = (np.arange(150), same, same + 4.0)
    # boxes whose faces lie exactly on power-of-two split planes of a root cube
    grid = np.stack(np.meshgrid(*[np.arange(0, 64, 8.0)] * 3, indexing="ij"), -1).reshape(-1, 3)
    scenes["on_split_planes"] = (np.arange(len(grid)), grid, grid + 8.0)
    straddle = np.stack(np.meshgrid(*[np.arange(4.0, 64, 16.0)] * 3, indexing="ij"), -1).reshape(-1, 3)
    scenes["straddling_planes"] = (np.arange(len(straddle)), straddle - 4.0, straddle + 4.0)
    ids, lo, hi = random_boxes(300, seed=5, world=100.0, size_max=5.0)
    lo = np.vstack([lo, [[-1000.0, -1000, -1000]]])
    hi = np.vstack([hi, [[1000.0, 1000, 1000]]])
    scenes["one_huge"] = (np.arange(301), lo, hi)
    flat = rng.uniform(0, 100, size=(200, 3))
    flat[:, 2] = 0.0
    scenes["flat_plane"] = (np.arange(200), flat, flat + [3.0, 3.0, 0.0])
    far = rng.uniform(-1e5, 1e5, size=(100, 3))
    scenes["sparse_far"] = (np.arange(100) * 7 + 3, far, far + rng.uniform(0, 10, (100, 3)))
    tiny = rng.uniform(0, 1e-3, size=(100, 3))
    scenes["tiny_world"] = (np.arange(100), tiny, tiny + 1e-5)
    return scenes


DEGENERATE = _degenerate_scenes()


@pytest.mark.parametrize("name,variant", CASES)
@pytest.mark.parametrize("scene", sorted(DEGENERATE))
def test_degenerate_scene(name, variant, scene):
    rng = np.random.default_rng(1)
    ids, lo, hi = DEGENERATE[scene]
    index, oracle = both(name, variant, ids, lo, hi, *flags(rng, len(ids)))
    assert_matches(index, oracle, rng, n_queries=8)


@pytest.mark.parametrize("name,variant", CASES)
def test_objects_outside_the_root(name, variant):
    """Objects inserted after the build far outside the first world bounds."""
    rng = np.random.default_rng(2)
    ids, lo, hi = random_boxes(200, seed=8, world=100.0, size_max=10.0)
    index, oracle = both(name, variant, ids, lo, hi)
    far_lo = np.array([[500.0, 500, 500], [-300.0, 20, 20], [50.0, 50, 4000], [99.0, 99, 99]])
    far_hi = far_lo + [[10.0, 10, 10], [400.0, 5, 5], [1.0, 1, 1], [1000.0, 1000, 1000]]
    new = np.arange(1000, 1004)
    for index_or_oracle in (index, oracle):
        index_or_oracle.insert(new, far_lo, far_hi)
    assert_matches(index, oracle, rng)
    moved = far_lo * -3.0
    for index_or_oracle in (index, oracle):
        index_or_oracle.update(new, moved, moved + 2.0)
    assert_matches(index, oracle, rng)


# --------------------------------------------------------------------------- edit sequences
def _random_edits(name, variant, seed, steps=25, check_every=1):
    rng = np.random.default_rng(seed)
    ids, lo, hi = random_boxes(150, seed=seed, world=200.0, size_max=30.0,
                               layout="clustered" if seed % 2 else "uniform")
    index, oracle = both(name, variant, ids, lo, hi, *flags(rng, len(ids)))
    next_id = 150
    for step in range(steps):
        held = oracle.objects.ids[oracle.objects.alive_slots()]
        op = rng.choice(["insert", "remove", "update", "update_far", "awake", "step", "build"],
                        p=[0.2, 0.15, 0.3, 0.05, 0.1, 0.15, 0.05])
        if op == "insert" or len(held) == 0:
            k = int(rng.integers(1, 30))
            new_ids = np.arange(next_id, next_id + k)
            next_id += k
            c = rng.uniform(-20, 220, size=(k, 3))
            s = rng.uniform(0, 25, size=(k, 3)) * (rng.random((k, 1)) < 0.9)
            dyn, awk = flags(rng, k)
            for x in (index, oracle):
                x.insert(new_ids, c - s / 2, c + s / 2, dyn, awk)
        elif op == "remove":
            k = int(rng.integers(1, max(2, len(held) // 4)))
            gone = rng.choice(held, size=min(k, len(held)), replace=False)
            for x in (index, oracle):
                x.remove(gone)
        elif op in ("update", "update_far"):
            k = int(rng.integers(1, max(2, len(held) // 3)))
            moved = rng.choice(held, size=min(k, len(held)), replace=False)
            slots = oracle.objects.slots_of(moved)
            olo, ohi = oracle.objects.lo[slots], oracle.objects.hi[slots]
            reach = 400.0 if op == "update_far" else 15.0
            delta = rng.normal(0, reach, size=(len(moved), 3))
            grow = rng.uniform(0.7, 1.4, size=(len(moved), 1))
            size = (ohi - olo) * grow
            nlo = olo + delta
            for x in (index, oracle):
                x.update(moved, nlo, nlo + size)
        elif op == "awake":
            k = int(rng.integers(1, max(2, len(held) // 3)))
            chosen = rng.choice(held, size=min(k, len(held)), replace=False)
            f = rng.random(len(chosen)) < 0.5
            for x in (index, oracle):
                x.set_awake(chosen, f)
        elif op == "step":
            frames = int(rng.integers(1, 20))
            for x in (index, oracle):
                x.step(frames)
        else:
            slots = oracle.objects.alive_slots()
            o = oracle.objects
            args = (o.ids[slots].copy(), o.lo[slots].copy(), o.hi[slots].copy(),
                    o.dynamic[slots].copy(), o.awake[slots].copy())
            for x in (index, oracle):
                x.build(*args)
        index.validate()
        if step % check_every == 0:
            assert_same_pairs(index, oracle)
    assert_matches(index, oracle, rng, n_queries=10)


@pytest.mark.parametrize("name,variant", CASES)
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_edit_sequence(name, variant, seed):
    _random_edits(name, variant, seed)


boxes_strategy = st.lists(
    st.tuples(*[st.integers(-40, 40)] * 3, *[st.integers(0, 12)] * 3, st.booleans(), st.booleans()),
    min_size=0, max_size=40)


@pytest.mark.parametrize("name,variant", CASES)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(boxes=boxes_strategy, moves=st.lists(st.tuples(st.integers(0, 39), *[st.integers(-30, 30)] * 3),
                                            max_size=15),
       data=st.data())
def test_hypothesis_scenes(name, variant, boxes, moves, data):
    """Integer-snapped boxes make touching faces and shared split planes common."""
    ids = np.arange(len(boxes), dtype=np.int64)
    arr = np.array([b[:6] for b in boxes], dtype=np.float64).reshape(-1, 6)
    lo, hi = arr[:, :3] / 2.0, arr[:, :3] / 2.0 + arr[:, 3:] / 4.0
    dyn = np.array([b[6] for b in boxes], dtype=bool)
    awk = np.array([b[7] for b in boxes], dtype=bool)
    index, oracle = both(name, variant, ids, lo, hi, dyn, awk)
    index.validate()
    assert_same_pairs(index, oracle)
    for who, dx, dy, dz in moves:
        if who >= len(boxes):
            continue
        slot = oracle.objects.slots_of([who])
        nlo = oracle.objects.lo[slot] + [dx, dy, dz]
        nhi = oracle.objects.hi[slot] + [dx, dy, dz]
        for x in (index, oracle):
            x.update([who], nlo, nhi)
        index.validate()
    assert_same_pairs(index, oracle)
    seed = data.draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    from .oracle import assert_same_queries
    assert_same_queries(index, oracle, rng, n_queries=4)


# --------------------------------------------------------------------------- contract errors
@pytest.mark.parametrize("name,variant", CASES)
def test_bad_input_is_rejected_clearly(name, variant):
    from spatial.errors import GeometryError, UnknownIdError
    index = make(name, variant)
    index.build([0, 1], [[0, 0, 0], [1, 1, 1]], [[1, 1, 1], [2, 2, 2]])
    with pytest.raises(GeometryError, match="finite"):
        index.insert([2], [[np.nan, 0, 0]], [[1, 1, 1]])
    with pytest.raises(GeometryError, match="exceeds"):
        index.insert([2], [[5, 0, 0]], [[1, 1, 1]])
    with pytest.raises(UnknownIdError, match="already"):
        index.insert([1], [[0, 0, 0]], [[1, 1, 1]])
    with pytest.raises(UnknownIdError, match="not in the index"):
        index.remove([9])
    with pytest.raises(UnknownIdError, match="not in the index"):
        index.update([9], [[0, 0, 0]], [[1, 1, 1]])
    with pytest.raises(GeometryError, match="zero"):
        index.query_ray([0, 0, 0], [0, 0, 0])
    index.validate()
    assert len(index) == 2
