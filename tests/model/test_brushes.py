"""Brush values: transforms keep texture attributes and the solid is right."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model.shapes import box_brush, prism_brush, ramp_brush
from spatial.errors import GeometryError


def test_translate_moves_solid_and_keeps_textures():
    brush = prism_brush(0, (10, 20), 16, (0, 32), sides=5, angle_deg=13, texture="rock", valve=True)
    moved = brush.translated((3.5, -2, 8))
    np.testing.assert_allclose(moved.solid.vertices, brush.solid.vertices + [3.5, -2, 8], atol=1e-9)
    assert [(f.texture, f.u_axis, f.offset) for f in moved.faces] == \
        [(f.texture, f.u_axis, f.offset) for f in brush.faces]
    assert brush.translated((0, 0, 0)) is brush


def test_resize_of_a_box_is_axial_and_exact():
    brush = box_brush(0, (0, 0, 0), (64, 32, 16))
    out = brush.resized((-8, 0, 0), (120, 48, 64))
    np.testing.assert_allclose(out.lo, [-8, 0, 0])
    np.testing.assert_allclose(out.hi, [120, 48, 64])
    assert out.solid.volume() == pytest.approx(128 * 48 * 64)


def test_scaling_a_slanted_brush_maps_its_vertices():
    brush = ramp_brush(0, (0, 0, 0), (64, 32, 32), rise_axis=1)
    anchor, factors = np.array([10.0, 0, 5]), np.array([2.0, 0.5, 3.0])
    out = brush.scaled(anchor, factors)
    expected = anchor + (brush.solid.vertices - anchor) * factors
    got = out.solid.vertices
    assert len(got) == len(expected)
    for v in expected:
        assert np.min(np.linalg.norm(got - v, axis=1)) < 1e-9
    mirrored = brush.scaled((0, 0, 0), (-1, 1, 1))  # a mirror keeps the faces outward
    assert mirrored.solid.volume() == pytest.approx(brush.solid.volume())


def test_degenerate_transforms_raise():
    brush = box_brush(0, (0, 0, 0), (8, 8, 8))
    with pytest.raises(GeometryError):
        brush.scaled((0, 0, 0), (1, 0, 1))
    with pytest.raises(GeometryError):
        brush.translated((np.nan, 0, 0))
    with pytest.raises(GeometryError):
        box_brush(0, (0, 0, 0), (8, 0, 8))


def test_brushes_built_together_read_bounds_from_the_level_and_make_solids_when_asked():
    from editor.model.brushes import Brush, build_solids

    boxes = [box_brush(0, [0, 0, 0], [4, 4, 4]), box_brush(0, [10, 0, -2], [12, 1, 0])]
    together = [Brush(b.entity, b.faces) for b in boxes]  # fresh values, nothing cached
    alone = [Brush(b.entity, b.faces) for b in boxes]
    assert build_solids(together) == []
    assert "solid" not in together[0]._cache  # nothing made yet
    for a, b in zip(together, alone):
        np.testing.assert_array_equal(a.lo, b.lo)
        np.testing.assert_array_equal(a.hi, b.hi)
        assert a.check() is a
        np.testing.assert_array_equal(a.solid.vertices, b.solid.vertices)
    np.testing.assert_array_equal(together[1].hi, [12, 1, 0])


def test_face_points_from_rows_are_three_tuples_of_three():
    from editor.model.faces import point_triple

    assert point_triple([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]) == \
        ((0.0, 1.0, 2.0), (3.0, 4.0, 5.0), (6.0, 7.0, 8.0))
    with pytest.raises(ValueError):
        point_triple([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    with pytest.raises(ValueError):
        point_triple([[0.0, 1.0], [3.0, 4.0], [6.0, 7.0]])


def test_moved_faces_keep_their_points_as_float_tuples():
    brush = box_brush(0, (0, 0, 0), (64, 32, 16)).translated((1, 2, 3))
    for face in brush.faces:
        assert len(face.points) == 3
        assert all(type(p) is tuple and len(p) == 3 and all(type(c) is float for c in p)
                   for p in face.points)
