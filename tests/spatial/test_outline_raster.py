"""Box outlines rasterised by spatial.outline_raster against a plain per-box reference."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatial.outline_raster import argb, box_edge_colours, box_edges, finite_bounds, outline_image

SLEEPING, AWAKE = 0x11111111, 0x22222222


def reference(lo, hi, awake, axes, m, size, thickness):
    """The device-sized picture the kernel's buffer is a window of: each box's device rectangle
    ``floor(corner)`` inclusive, its pixels within ``thickness`` of the border set, sleeping
    boxes first and awake ones over them."""
    width, height = size
    out = np.zeros((height, width), dtype=np.uint32)
    u, v = axes
    for layer, colour in ((0, SLEEPING), (1, AWAKE)):
        for row in range(len(lo)):
            if bool(awake[row]) != bool(layer):
                continue
            xs = [m[0] * p[u] + m[2] * p[v] + m[4] for p in (lo[row], hi[row])]
            ys = [m[1] * p[u] + m[3] * p[v] + m[5] for p in (lo[row], hi[row])]
            if not np.all(np.isfinite(xs + ys)):
                continue
            x0, x1 = int(np.floor(min(xs))), int(np.floor(max(xs)))
            y0, y1 = int(np.floor(min(ys))), int(np.floor(max(ys)))
            if x1 < 0 or y1 < 0 or min(xs) >= width or min(ys) >= height:
                continue
            yy, xx = np.mgrid[y0:y1 + 1, x0:x1 + 1]
            solid = (x1 - x0 < 2 * thickness) or (y1 - y0 < 2 * thickness)
            ring = solid | (xx - x0 < thickness) | (x1 - xx < thickness) | \
                (yy - y0 < thickness) | (y1 - yy < thickness)
            keep = ring & (xx >= 0) & (yy >= 0) & (xx < width) & (yy < height)
            out[yy[keep], xx[keep]] = colour
    return out


def placed(made, size):
    """The kernel's buffer put back on the whole device."""
    width, height = size
    picture = np.zeros((height, width), dtype=np.uint32)
    if made is not None:
        pixels, left, top = made
        picture[top:top + pixels.shape[0], left:left + pixels.shape[1]] = pixels
    return picture


boxes = st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.lists(st.tuples(*[st.floats(-60, 60)] * 3), min_size=n, max_size=n),
    st.lists(st.tuples(*[st.floats(0, 40)] * 3), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n, max_size=n)))


@settings(max_examples=150, deadline=None)
@given(boxes, st.floats(0.25, 3.0), st.booleans(), st.floats(-20, 40), st.floats(-20, 40),
       st.integers(1, 3), st.sampled_from([(0, 1), (0, 2), (1, 2)]))
def test_the_outlines_are_the_reference_outlines_on_any_view(data, scale, flip, dx, dy,
                                                            thickness, axes):
    corners, extents, awake = data
    lo = np.array(corners, dtype=np.float64)
    hi = lo + np.array(extents, dtype=np.float64)
    awake = np.array(awake)
    # a 2D view's transform: uniform scale, y up on screen when flipped, any offset
    m = (scale, 0.0, 0.0, -scale if flip else scale, dx, dy + (60 if flip else 0))
    size = (48, 40)
    made = outline_image(lo, hi, awake, axes, m, size, (SLEEPING, AWAKE), thickness)
    expected = reference(lo, hi, awake, axes, m, size, thickness)
    np.testing.assert_array_equal(placed(made, size), expected)
    if made is not None:  # the buffer lies on the device, around the boxes' visible parts
        pixels, left, top = made
        assert left >= 0 and top >= 0
        assert left + pixels.shape[1] <= size[0] and top + pixels.shape[0] <= size[1]


def test_nothing_visible_gives_no_image():
    lo, hi = np.array([[100.0, 100, 0]]), np.array([[110.0, 110, 0]])
    assert outline_image(lo, hi, np.ones(1), (0, 1), (1, 0, 0, 1, 0, 0), (50, 50), (1, 2)) is None
    assert outline_image(np.empty((0, 3)), np.empty((0, 3)), np.empty(0), (0, 1),
                         (1, 0, 0, 1, 0, 0), (50, 50), (1, 2)) is None


def test_non_finite_boxes_are_left_out_and_huge_ones_are_clipped():
    lo = np.array([[np.nan, 0, 0], [-1e300, -1e300, 0], [2.0, 2, 0]])
    hi = np.array([[5.0, 5, 0], [1e300, 1e300, 0], [np.inf, 6, 0]])
    made = outline_image(lo, hi, np.array([1, 0, 1]), (0, 1), (1, 0, 0, 1, 0, 0), (30, 20),
                         (SLEEPING, AWAKE), 1)
    assert made is not None
    pixels, left, top = made
    # only the huge box is drawn: it covers the device, its outline lies outside it
    assert (left, top) == (0, 0) and pixels.shape == (20, 30)
    assert not (pixels == AWAKE).any()


def test_finite_bounds_skip_boxes_with_a_non_finite_corner():
    lo = np.array([[0.0, 1, 2], [np.nan, 0, 0], [-5.0, 0, 9]])
    hi = np.array([[3.0, 4, 5], [1.0, 1, 1], [-4.0, 1, 10]])
    assert finite_bounds(lo, hi, 0, 2) == (-5.0, 2.0, 3.0, 10.0)
    u0, _, u1, _ = finite_bounds(lo[1:2], hi[1:2], 0, 1)
    assert u1 < u0


@pytest.mark.parametrize(("rgb", "alpha", "value"), [
    ((1.0, 0.5, 0.0), 1.0, 0xFFFF8000), ((1.0, 1.0, 1.0), 0.5, 0x80808080), ((0, 0, 0), 0.0, 0)])
def test_argb_is_premultiplied(rgb, alpha, value):
    assert int(argb(rgb, alpha)) == value


def test_box_edges_are_the_twelve_edges_of_each_box():
    rng = np.random.default_rng(3)
    lo = rng.uniform(-100, 100, (50, 3))
    hi = lo + rng.uniform(0, 30, (50, 3))
    lines = box_edges(lo, hi)
    assert lines.shape == (50 * 24, 3) and lines.dtype == np.float32
    for row in (0, 17, 49):
        segments = lines[row * 24:(row + 1) * 24].reshape(12, 2, 3).astype(np.float64)
        corners = {tuple(np.where([(k >> a) & 1 for a in range(3)], hi[row], lo[row]).astype(np.float32))
                   for k in range(8)}
        seen = set()
        for a, b in segments:
            assert tuple(a.astype(np.float32)) in corners and tuple(b.astype(np.float32)) in corners
            differs = np.flatnonzero(a != b)
            assert len(differs) == 1  # an edge runs along one axis
            seen.add((tuple(np.minimum(a, b)), int(differs[0])))
        assert len(seen) == 12  # every edge once
    assert box_edges(np.empty((0, 3)), np.empty((0, 3))).shape == (0, 3)


def test_box_edge_colours_give_each_vertex_its_box_colour():
    colours = np.random.default_rng(4).random((30, 4))
    per_vertex = box_edge_colours(colours)
    assert per_vertex.shape == (30 * 24, 4) and per_vertex.dtype == np.float32
    np.testing.assert_array_equal(per_vertex, np.repeat(colours.astype(np.float32), 24, axis=0))
    assert box_edge_colours(np.empty((0, 4))).shape == (0, 4)
