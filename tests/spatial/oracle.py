"""Comparison helpers: every backend answers exactly like the brute-force oracle."""
from __future__ import annotations

import numpy as np
import pytest

from plugins.brute import BruteForce
from spatial.errors import IndexInvariantError
from spatial.geometry import frustum_planes_from_camera


def assert_same_queries(index, oracle: BruteForce, rng: np.random.Generator, n_queries: int = 12,
                        scale: float | None = None) -> None:
    """Random box, sphere, point, ray, frustum and batch queries give the oracle's answers."""
    lo_all, hi_all = _extent(oracle)
    span = hi_all - lo_all
    span = np.where(span > 0, span, 1.0)
    pad = 0.25 * span
    scale = scale if scale is not None else float(span.max())

    def rand_point():
        return rng.uniform(lo_all - pad, hi_all + pad)

    # include the corners of existing objects so touching (closed) cases are exercised
    corners = _object_corners(oracle)

    for q in range(n_queries):
        if len(corners) and q % 3 == 0:
            p = corners[rng.integers(len(corners))]
            size = rng.uniform(0, 0.05 * scale, 3) * (q % 2)
            qlo, qhi = p - size, p + size
        else:
            c = rand_point()
            size = rng.uniform(0, 0.3 * scale, 3)
            qlo, qhi = c - size / 2, c + size / 2
        _same(index.query_box(qlo, qhi).ids, oracle.query_box(qlo, qhi).ids, "query_box", qlo, qhi)

        center = corners[rng.integers(len(corners))] if (len(corners) and q % 4 == 1) else rand_point()
        radius = float(rng.uniform(0, 0.3 * scale)) if q % 5 else 0.0
        _same(index.query_sphere(center, radius).ids, oracle.query_sphere(center, radius).ids,
              "query_sphere", center, radius)

        point = corners[rng.integers(len(corners))] if (len(corners) and q % 2) else rand_point()
        _same(index.query_point(point).ids, oracle.query_point(point).ids, "query_point", point)

        origin = rand_point()
        direction = rng.normal(size=3)
        if q % 4 == 0:  # axis-parallel rays hit the division-by-zero paths
            direction = np.zeros(3)
            direction[q % 3] = rng.choice([-1.0, 1.0])
        if q % 6 == 5 and len(corners):
            direction = corners[rng.integers(len(corners))] - origin
            if not direction.any():
                direction = np.array([1.0, 0.0, 0.0])
        max_t = np.inf if q % 2 else float(rng.uniform(0, 2 * scale))
        got = index.query_ray(origin, direction, max_t)
        want = oracle.query_ray(origin, direction, max_t)
        _same(got.ids, want.ids, "query_ray ids/order", origin, direction, max_t, ordered=True)
        np.testing.assert_allclose(got.t, want.t, rtol=1e-12, atol=1e-9,
                                   err_msg=f"query_ray distances origin={origin} dir={direction}")

        eye = rand_point()
        forward = rng.normal(size=3)
        up = np.array([0.0, 0.0, 1.0]) if abs(forward[2]) < 0.9 * np.linalg.norm(forward) else np.array([1.0, 0, 0])
        far = 0.5 + float(rng.uniform(0.2, 1.5) * scale)
        planes = frustum_planes_from_camera(eye, forward, up, float(rng.uniform(30, 120)),
                                            float(rng.uniform(0.5, 2.0)), 0.5, far)
        _same(index.query_frustum(planes).ids, oracle.query_frustum(planes).ids, "query_frustum", eye, forward)

    # batch forms
    centers = rng.uniform(lo_all - pad, hi_all + pad, size=(n_queries, 3))
    sizes = rng.uniform(0, 0.3 * scale, size=(n_queries, 3))
    batch = index.query_boxes(centers - sizes / 2, centers + sizes / 2)
    assert len(batch.offsets) == n_queries + 1
    for q in range(n_queries):
        want = oracle.query_box(centers[q] - sizes[q] / 2, centers[q] + sizes[q] / 2).ids
        _same(np.sort(batch.hits(q)), want, "query_boxes", q)
    origins = rng.uniform(lo_all - pad, hi_all + pad, size=(n_queries, 3))
    dirs = rng.normal(size=(n_queries, 3))
    rays = index.query_rays(origins, dirs)
    for q in range(n_queries):
        want = oracle.query_ray(origins[q], dirs[q])
        if len(want.ids) == 0:
            assert rays.ids[q] == -1 and np.isinf(rays.t[q]), f"query_rays {q}: expected a miss"
        else:
            assert rays.ids[q] == want.ids[0], f"query_rays {q}: closest {rays.ids[q]} != {want.ids[0]}"
            np.testing.assert_allclose(rays.t[q], want.t[0], rtol=1e-12, atol=1e-9)


def assert_same_pairs(index, oracle: BruteForce) -> None:
    """Both pair modes equal the oracle's, with a plausible test count; so do their counts."""
    for mode in ("all", "active"):
        got = index.pairs(mode)
        want = oracle.pairs(mode)
        assert got.pairs.dtype.kind == "i" and got.pairs.shape[1:] == (2,)
        if len(got.pairs):
            assert (got.pairs[:, 0] < got.pairs[:, 1]).all(), f"{mode}: pairs must have a < b"
        np.testing.assert_array_equal(got.pairs, want.pairs, err_msg=f"pairs({mode!r}) differ from brute force")
        assert got.tests >= len(got.pairs), f"{mode}: fewer tests than overlapping pairs"
        counted = index.count_pairs(mode)
        assert counted.overlapping == len(want.pairs), f"count_pairs({mode!r}) differs from brute force"
        assert counted.tests == got.tests, f"count_pairs({mode!r}) made other tests than pairs()"


def assert_matches(index, oracle, rng, n_queries: int = 12) -> None:
    """Full comparison plus validate() on the backend."""
    index.validate()
    assert len(index) == len(oracle)
    assert_same_pairs(index, oracle)
    assert_same_queries(index, oracle, rng, n_queries)
    _check_node_table(index)


def _check_node_table(index) -> None:
    table = index.nodes()
    n = len(table)
    for col in ("lo", "hi", "core_lo", "core_hi"):
        assert getattr(table, col).shape == (n, 3), col
    for col in ("depth", "parent", "is_leaf", "own_count", "subtree_count", "lifespan_left",
                "lifespan_max", "awake", "pair_tests"):
        assert getattr(table, col).shape == (n,), col
    if n:
        assert table.parent[0] == -1
        assert (table.parent[1:] < np.arange(1, n)).all(), "parents must come before children"
        assert (table.own_count >= 0).all()
        stats = index.stats()
        assert stats["nodes"] == n
        assert stats["leaves"] == int(table.is_leaf.sum())
        assert stats["references"] >= len(index) or index.dims == 2 or stats["references"] >= 0


def _same(got, want, what, *context, ordered=False):
    got = np.asarray(got)
    want = np.asarray(want)
    if not ordered:
        got, want = np.sort(got), np.sort(want)
    if not np.array_equal(got, want):
        missing = np.setdiff1d(want, got)
        extra = np.setdiff1d(got, want)
        raise AssertionError(f"{what} differs from brute force for {context}: missing {missing[:10]}, "
                             f"extra {extra[:10]}, got {got[:10]} want {want[:10]}")


def _extent(oracle):
    slots = oracle.objects.alive_slots()
    if len(slots) == 0:
        return np.zeros(3), np.ones(3)
    return oracle.objects.lo[slots].min(axis=0), oracle.objects.hi[slots].max(axis=0)


def _object_corners(oracle):
    slots = oracle.objects.alive_slots()
    if len(slots) == 0:
        return np.zeros((0, 3))
    return np.concatenate([oracle.objects.lo[slots], oracle.objects.hi[slots]])


def assert_validate_catches_tampering(index, object_id: int, match: str, shift_hi: float,
                                      shift_lo: float = 0.0) -> None:
    """Shift one object's stored box behind ``index``'s back: ``validate()`` must notice.

    Parameters
    ----------
    index : SpatialIndex
        A built index keeping its object boxes in ``index.objects``.
    object_id : int
        The object whose stored box is shifted.
    match : str
        A regular expression the :class:`~spatial.errors.IndexInvariantError` must match.
    shift_hi, shift_lo : float
        Added to the stored upper and lower corners.
    """
    slot = index.objects.slots_of([object_id])[0]
    index.objects.lo[slot] += shift_lo
    index.objects.hi[slot] += shift_hi
    with pytest.raises(IndexInvariantError, match=match):
        index.validate()
