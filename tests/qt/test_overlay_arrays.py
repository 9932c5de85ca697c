"""The overlay's array building (Qt-free numpy): filters, level of detail, 2D projection."""
from __future__ import annotations

import numpy as np
import pytest

from editor.qt.overlay import (
    OverlaySettings,
    box_lines,
    build_overlay,
    project_rects,
    rect_segments,
    select_rows,
)
from editor.qt.views.camera import CameraShot, pixel_ray
from spatial.contract import NodeTable


def _table():
    # a root, two children, four grandchildren stacked along z (same top-view footprint pairs)
    lo = np.array([[0, 0, 0], [0, 0, 0], [4, 0, 0], [0, 0, 0], [0, 0, 2], [4, 0, 0], [4, 0, 2]], float)
    hi = np.array([[8, 4, 4], [4, 4, 4], [8, 4, 4], [4, 4, 2], [4, 4, 4], [8, 4, 2], [8, 4, 4]], float)
    return NodeTable.from_columns(
        lo=lo, hi=hi, depth=[0, 1, 1, 2, 2, 2, 2], parent=[-1, 0, 0, 1, 1, 2, 2],
        is_leaf=[False, False, False, True, True, True, True], own_count=[1, 0, 0, 3, 1, 0, 2],
        subtree_count=[7, 4, 2, 3, 1, 0, 2])


def test_box_lines_trace_the_twelve_edges():
    lines = box_lines(np.array([[0, 0, 0]]), np.array([[1, 2, 3]]))
    assert lines.shape == (24, 3)
    seg = lines.reshape(12, 2, 3)
    lengths = np.sort(np.linalg.norm(seg[:, 1] - seg[:, 0], axis=1))
    np.testing.assert_allclose(lengths, [1] * 4 + [2] * 4 + [3] * 4)


def test_filters_and_the_cap_keep_the_coarse_levels():
    t = _table()
    rows, cut = select_rows(t, OverlaySettings(leaves_only=True))
    assert rows.tolist() == [3, 4, 5, 6] and cut == 0
    rows, cut = select_rows(t, OverlaySettings(min_depth=1, max_depth=1))
    assert rows.tolist() == [1, 2]
    rows, cut = select_rows(t, OverlaySettings(max_boxes=3))
    assert rows.tolist() == [0, 1, 2] and cut == 4


def test_metric_colours_span_the_range():
    geom = build_overlay(_table(), OverlaySettings(metric="own_count"))
    assert (geom.vmin, geom.vmax) == (0, 3)
    assert geom.lines3d.shape == (24 * 7, 3) and geom.colours3d.shape == (24 * 7, 4)
    lowest, highest = geom.colours[5], geom.colours[3]
    assert not np.allclose(lowest, highest)
    with pytest.raises(ValueError, match="unknown overlay metric"):
        OverlaySettings(metric="nonsense")


def test_top_view_draws_each_footprint_once_in_its_highest_colour():
    geom = build_overlay(_table(), OverlaySettings(metric="own_count"))
    rects, bins, members = project_rects(geom, (0, 1))
    assert len(rects) == 3  # the root and the two columns
    assert len(rect_segments(rects)) == 8 * 3
    left = np.flatnonzero((rects == [0, 0, 4, 4]).all(axis=1))[0]
    assert bins[left] == geom.bins[3], "the column shows its fullest cell (3 objects)"


def test_pixel_ray_goes_through_the_centre_and_frustum_corners():
    shot = CameraShot((0, 0, 0), (1, 0, 0), (0, 0, 1), fov_y_deg=90, aspect=1, near=1, far=10)
    c = shot.corners()
    np.testing.assert_allclose(c[4:].mean(axis=0), [10, 0, 0], atol=1e-9)
    np.testing.assert_allclose(np.abs(c[4:, 1:]), 10, atol=1e-9)
    planes = shot.planes()
    inside = np.array([5.0, 0, 0, 1.0])
    assert (planes @ inside >= 0).all()
    origin, direction = pixel_ray(np.eye(4), 50, 50, 100, 100)
    np.testing.assert_allclose(direction, [0, 0, 1])


def test_unique_rows_matches_numpy():
    from editor.qt.overlay import unique_rows
    rng = np.random.default_rng(3)
    rows = rng.integers(0, 4, size=(500, 4)).astype(float)
    uniq, members = unique_rows(rows)
    ref, ref_members = np.unique(rows, axis=0, return_inverse=True)
    np.testing.assert_array_equal(uniq, ref)
    np.testing.assert_array_equal(members, ref_members.reshape(-1))
    np.testing.assert_array_equal(uniq[members], rows)
