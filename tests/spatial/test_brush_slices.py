"""A level's brushes built in slices (to bound the kernel's worst-case blocks) equal one build."""
from __future__ import annotations

import numpy as np
import pytest

from spatial import brush as spatial_brush
from spatial.brush import build_brush_arrays

_AXES = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], float)


def _level(count: int, seed: int = 3):
    """Planes of ``count`` boxes, one of them open (three planes) and one empty."""
    rng = np.random.default_rng(seed)
    normals, dists, counts = [], [], []
    for b in range(count):
        lo = rng.uniform(-100, 100, 3)
        hi = lo + rng.uniform(1, 20, 3)
        d = np.array([hi[0], -lo[0], hi[1], -lo[1], hi[2], -lo[2]])
        if b == count // 3:  # open: three planes only
            normals.append(_AXES[::2])
            dists.append(d[::2])
            counts.append(3)
            continue
        if b == count // 2:  # empty: the top below the bottom
            d[4] = -d[5] - 1
        normals.append(_AXES)
        dists.append(d)
        counts.append(6)
    return np.concatenate(normals), np.concatenate(dists), np.array(counts)


def test_slices_build_the_same_arrays(monkeypatch):
    normals, dists, counts = _level(50)
    whole = build_brush_arrays(normals, dists, counts, on_error="none")
    monkeypatch.setattr(spatial_brush, "BUILD_SLICE", 7)
    sliced = build_brush_arrays(normals, dists, counts, on_error="none")
    assert not whole.ok.all() and whole.ok.sum() == 48
    for name in ("ok", "lo", "hi", "normals", "dists", "face_offsets", "_vertices", "_indices",
                 "_vert_offsets", "_idx_offsets", "_face_ends"):
        a, b = getattr(whole, name), getattr(sliced, name)
        assert a.dtype == b.dtype and np.array_equal(a[whole.ok] if name in ("lo", "hi") else a,
                                                     b[whole.ok] if name in ("lo", "hi") else b)
    for b in range(len(counts)):
        one, other = whole.brush(b), sliced.brush(b)
        assert (one is None) == (other is None)
        if one is not None:
            assert np.array_equal(one.vertices, other.vertices)


def test_slices_raise_at_the_first_broken_brush(monkeypatch):
    normals, dists, counts = _level(50)
    monkeypatch.setattr(spatial_brush, "BUILD_SLICE", 7)
    with pytest.raises(Exception, match="brush 16"):
        build_brush_arrays(normals, dists, counts, what="brush")
