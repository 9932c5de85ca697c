"""Convex brushes from planes: conventions, errors, closedness, and every brush of real maps."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial import ConvexHull, HalfspaceIntersection

from spatial.brush import (
    ConvexBrush,
    brush_from_planes,
    brushes_from_plane_arrays,
    brushes_from_planes,
    closure_problems,
    is_closed_convex,
    plane_from_points,
    planes_from_points,
)
from spatial.errors import GeometryError

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "quake"

AXES = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], float)


def box_planes(lo, hi):
    """Six outward planes of the box ``[lo, hi]``."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    return AXES.copy(), np.array([hi[0], -lo[0], hi[1], -lo[1], hi[2], -lo[2]])


def as_point_set(points, decimals=9):
    return sorted(map(tuple, np.round(np.asarray(points), decimals).tolist()))


def rotation(rng):
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q *= np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] *= -1
    return q


# ---------------------------------------------------------------------------------------------
# .map helper: brushes are `{ ... }` blocks of face lines inside an entity `{ }`.

_NUM = r"\s*([-+0-9.eE]+)"
_POINT = r"\(" + _NUM * 3 + r"\s*\)\s*"
_FACE = re.compile(r"^\s*" + _POINT * 3)
_BRUSH = re.compile(r"\{[ \t]*\r?\n((?:[ \t]*\(.*\r?\n)+)[ \t]*\}")


def map_brush_points(path: Path) -> list[np.ndarray]:
    """The face point triples ``(F, 3, 3)`` of every brush in a Quake ``.map`` file."""
    brushes = []
    for block in _BRUSH.finditer(path.read_text()):
        rows = [_FACE.match(line).groups() for line in block.group(1).splitlines()
                if line.strip()]
        brushes.append(np.array(rows, dtype=float).reshape(-1, 3, 3))
    return brushes


# ---------------------------------------------------------------------------------------------
# planes from points


def test_plane_from_points_follows_quake_orientation():
    # First face of the first brush of id's dm1: the brush spans z 144..160, so this is the
    # bottom face and its outward normal points down.
    normal, dist = plane_from_points((-328, 1352, 144), (-328, 1472, 144), (-336, 1472, 144))
    np.testing.assert_allclose(normal, [0, 0, -1])
    assert dist == pytest.approx(-144)
    # Listing the points in the opposite order flips the plane.
    normal, dist = plane_from_points((-336, 1472, 144), (-328, 1472, 144), (-328, 1352, 144))
    np.testing.assert_allclose(normal, [0, 0, 1])
    assert dist == pytest.approx(144)


def test_planes_from_points_is_vectorised_and_unit_length():
    rng = np.random.default_rng(3)
    pts = rng.normal(size=(50, 3, 3)) * 100
    normals, dists = planes_from_points(pts)
    assert normals.shape == (50, 3) and dists.shape == (50,)
    np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1.0)
    for k in range(3):  # all three points lie on their plane
        np.testing.assert_allclose(np.einsum("ij,ij->i", normals, pts[:, k]), dists, atol=1e-9)
    single = [plane_from_points(*p) for p in pts[:5]]
    np.testing.assert_allclose([n for n, _ in single], normals[:5])


@pytest.mark.parametrize("points", [
    [(0, 0, 0), (1, 1, 1), (2, 2, 2)],          # collinear
    [(0, 0, 0), (0, 0, 0), (1, 0, 0)],          # two coincident
    [(5, 5, 5), (5, 5, 5), (5, 5, 5)],          # all the same
    [(0, 0, 0), (1e6, 0, 0), (2e6, 1e-9, 0)],   # collinear up to rounding at large scale
])
def test_collinear_plane_points_are_rejected(points):
    with pytest.raises(GeometryError, match="three collinear plane points"):
        plane_from_points(*points)
    with pytest.raises(GeometryError, match=r"dm1\.map:7: face 1: three collinear"):
        planes_from_points([[(0, 0, 0), (1, 0, 0), (0, 1, 0)], points], what="dm1.map:7")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_plane_points_are_rejected(bad):
    with pytest.raises(GeometryError, match="finite"):
        plane_from_points((0, 0, 0), (1, bad, 0), (0, 1, 0))


# ---------------------------------------------------------------------------------------------
# simple brushes


def test_cube():
    brush = brush_from_planes(*box_planes([-1, -2, -3], [1, 2, 3]))
    assert isinstance(brush, ConvexBrush)
    assert brush.vertices.dtype == np.float64 and brush.vertices.shape == (8, 3)
    expected = [(x, y, z) for x in (-1, 1) for y in (-2, 2) for z in (-3, 3)]
    assert as_point_set(brush.vertices) == as_point_set(expected)
    assert [len(f) for f in brush.faces] == [4] * 6
    assert brush.edges().shape == (12, 2)
    assert (brush.edges()[:, 0] < brush.edges()[:, 1]).all()
    assert brush.triangles().shape == (12, 3)
    np.testing.assert_array_equal(brush.lo, [-1, -2, -3])
    np.testing.assert_array_equal(brush.hi, [1, 2, 3])
    assert brush.volume() == pytest.approx(48)
    assert closure_problems(brush) == []


def test_normals_of_any_length_are_normalised():
    normals, dists = box_planes([0, 0, 0], [2, 2, 2])
    brush = brush_from_planes(normals * 7.0, dists * 7.0)
    np.testing.assert_allclose(brush.hi - brush.lo, [2, 2, 2])
    np.testing.assert_allclose(np.linalg.norm(brush.normals, axis=1), 1.0)
    np.testing.assert_allclose(brush.dists, dists)


def test_wedge():
    # A triangular prism: x, y >= 0, x + y <= 4, 0 <= z <= 2.
    normals = np.array([[-1, 0, 0], [0, -1, 0], [1, 1, 0], [0, 0, -1], [0, 0, 1]], float)
    dists = np.array([0, 0, 4, 0, 2], float)
    brush = brush_from_planes(normals, dists)
    expected = [(x, y, z) for (x, y) in [(0, 0), (4, 0), (0, 4)] for z in (0, 2)]
    assert as_point_set(brush.vertices) == as_point_set(expected)
    assert [len(f) for f in brush.faces] == [4, 4, 4, 3, 3]
    assert len(brush.edges()) == 9
    assert brush.volume() == pytest.approx(16)
    assert is_closed_convex(brush)


def test_faces_are_counter_clockwise_seen_from_outside():
    normals = np.array([[-1, 0, 0], [0, -1, 0], [1, 1, 1], [0, 0, -1]], float)  # tetrahedron
    brush = brush_from_planes(normals, np.array([0, 0, 3, 0], float))
    for face, normal in zip(brush.faces, brush.normals):
        pts = brush.vertices[face]
        for k in range(len(face)):  # every corner turns left about the outward normal
            a, b, c = pts[k - 1], pts[k], pts[(k + 1) % len(face)]
            assert np.cross(b - a, c - b) @ normal > 0
    for tri in brush.triangles():
        a, b, c = brush.vertices[tri]
        centre = brush.vertices.mean(axis=0)
        assert np.cross(b - a, c - a) @ (a - centre) > 0  # faces away from the interior


def test_rotated_brushes():
    rng = np.random.default_rng(11)
    normals, dists = box_planes([-1, -2, -3], [4, 5, 6])
    corners = np.array([(x, y, z) for x in (-1, 4) for y in (-2, 5) for z in (-3, 6)], float)
    for _ in range(20):
        rot = rotation(rng)
        brush = brush_from_planes(normals @ rot.T, dists)
        assert as_point_set(brush.vertices, 6) == as_point_set(corners @ rot.T, 6)
        assert brush.volume() == pytest.approx(5 * 7 * 9)
        assert closure_problems(brush) == []


def test_vertices_lie_inside_every_plane_and_on_their_faces():
    rng = np.random.default_rng(5)
    normals = rng.normal(size=(30, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    dists = rng.uniform(1.0, 2.0, size=30)
    brush = brush_from_planes(normals, dists)
    assert (brush.vertices @ normals.T - dists <= 1e-9).all()
    for face, normal, dist in zip(brush.faces, normals, dists):
        if len(face):
            np.testing.assert_allclose(brush.vertices[face] @ normal, dist, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# errors


def test_open_brush_is_rejected():
    normals, dists = box_planes([0, 0, 0], [1, 1, 1])
    with pytest.raises(GeometryError, match=r"^crate: open \(unbounded\)"):
        brush_from_planes(normals[:5], dists[:5], what="crate")
    with pytest.raises(GeometryError, match="open"):
        brush_from_planes(normals[:3], dists[:3])
    # Four planes that all face up-ish never close below.
    up = np.array([[0, 0, 1], [1, 0, 1], [0, 1, 1], [-1, -1, 1]], float)
    with pytest.raises(GeometryError, match="open"):
        brush_from_planes(up, np.ones(4))


def test_flat_brush_is_degenerate():
    normals, dists = box_planes([0, 0, 0], [2, 3, 0])  # z from 0 to 0
    with pytest.raises(GeometryError, match=r"^slab: degenerate: .*zero volume"):
        brush_from_planes(normals, dists, what="slab")
    # Planes meeting in a single point: a tetrahedron shrunk to nothing.
    normals = np.array([[-1, 0, 0], [0, -1, 0], [1, 1, 1], [0, 0, -1]], float)
    with pytest.raises(GeometryError, match="degenerate"):
        brush_from_planes(normals, np.zeros(4))


def test_contradicting_planes_are_empty():
    normals, dists = box_planes([0, 0, 0], [1, 1, 1])
    normals = np.vstack([normals, [[1, 0, 0]]])
    dists = np.append(dists, -5.0)  # x <= -5 while x >= 0
    with pytest.raises(GeometryError, match="empty"):
        brush_from_planes(normals, dists)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_planes_are_rejected(bad):
    normals, dists = box_planes([0, 0, 0], [1, 1, 1])
    normals[2, 1] = bad
    with pytest.raises(GeometryError, match=r"^b: plane 2 is not finite"):
        brush_from_planes(normals, dists, what="b")
    normals, dists = box_planes([0, 0, 0], [1, 1, 1])
    dists[4] = bad
    with pytest.raises(GeometryError, match="plane 4 is not finite"):
        brush_from_planes(normals, dists, what="b")


def test_zero_normal_is_rejected():
    normals, dists = box_planes([0, 0, 0], [1, 1, 1])
    normals[3] = 0
    with pytest.raises(GeometryError, match="plane 3 has a zero normal"):
        brush_from_planes(normals, dists)


# ---------------------------------------------------------------------------------------------
# redundant planes


@pytest.mark.parametrize("extra_normal, extra_dist, what", [
    ([1, 0, 0], 5.0, "far away"),
    ([1, 1, 0], 2.0, "touching an edge"),
    ([1, 1, 1], 3.0, "touching a corner"),
    ([1, 0, 0], 1.0, "duplicating a face"),
])
def test_redundant_plane_gives_an_empty_face(extra_normal, extra_dist, what):
    normals, dists = box_planes([-1, -1, -1], [1, 1, 1])
    brush = brush_from_planes(np.vstack([normals, extra_normal]), np.append(dists, extra_dist))
    assert len(brush.faces) == 7, what
    assert [len(f) for f in brush.faces] == [4] * 6 + [0], what
    assert brush.faces[6].dtype == np.int64
    assert len(brush.vertices) == 8 and closure_problems(brush) == [], what


def test_duplicate_plane_first_copy_keeps_the_face():
    normals, dists = box_planes([-1, -1, -1], [1, 1, 1])
    brush = brush_from_planes(np.vstack([normals[:1], normals]), np.append(dists[:1], dists))
    assert [len(f) for f in brush.faces] == [4, 0, 4, 4, 4, 4, 4]


# ---------------------------------------------------------------------------------------------
# random convex brushes against an independent reference (scipy / qhull)


@pytest.mark.parametrize("seed", range(40))
def test_random_brushes_from_tangent_planes_close(seed):
    rng = np.random.default_rng(seed)
    n_planes = int(rng.integers(6, 60))
    normals = rng.normal(size=(n_planes, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    radius = rng.uniform(0.5, 500.0)
    centre = rng.uniform(-3000, 3000, size=3)
    dists = radius + normals @ centre  # every plane tangent to the same sphere
    if seed % 4 == 0:
        normals = normals @ rotation(rng).T  # tangency to the sphere is kept by rotating both
        dists = radius + normals @ centre
    # The planes bound a volume exactly when the origin lies inside the hull of the normals.
    normal_hull_offsets = ConvexHull(normals).equations[:, 3]
    if normal_hull_offsets.max() > -1e-6:
        assert normal_hull_offsets.max() > 1e-6, "too close to call; pick another seed"
        with pytest.raises(GeometryError, match="open"):
            brush_from_planes(normals, dists)
        return
    reference = HalfspaceIntersection(np.column_stack([normals, -dists]), centre).intersections
    brush = brush_from_planes(normals, dists)
    assert closure_problems(brush) == []
    tol = 1e-7 * radius
    assert (brush.vertices @ normals.T - dists <= tol).all()
    # Same corners as qhull (qhull repeats corners where more than three planes meet).
    hull = ConvexHull(reference)
    assert brush.volume() == pytest.approx(hull.volume, rel=1e-9)
    ref = reference[hull.vertices]
    dist_to_ref = np.linalg.norm(brush.vertices[:, None] - ref[None], axis=2)
    assert dist_to_ref.min(axis=1).max() < tol
    assert dist_to_ref.min(axis=0).max() < tol
    # A face exists exactly for the planes qhull's hull touches with an area.
    assert sum(len(f) > 0 for f in brush.faces) == len(
        {tuple(np.round(eq, 9)) for eq in hull.equations})


def test_small_brushes_far_from_the_origin_and_snapped_normals_close():
    """Tolerances follow the brush size: 1 cm brushes 60,000 units out, and normals on a coarse
    lattice (many parallel faces and corners where four or more planes meet)."""
    rng = np.random.default_rng(8)
    planes, bounded = [], []
    for k in range(300):
        normals = rng.normal(size=(int(rng.integers(4, 30)), 3))
        if k % 2 == 0:
            normals = np.round(normals * 2) / 2
            normals = normals[np.linalg.norm(normals, axis=1) > 0]
        normals /= np.linalg.norm(normals, axis=1, keepdims=True)
        size = 10 ** rng.uniform(-2, 3)
        centre = rng.uniform(-60000, 60000, size=3)
        dists = size * np.round(rng.uniform(0.5, 1.0, size=len(normals)) * 4) / 4
        planes.append((normals, dists + normals @ centre))
        try:
            bounded.append(ConvexHull(normals).equations[:, 3].max() < -1e-9)
        except Exception:  # flat or too few distinct normals: certainly unbounded
            bounded.append(False)
    built = brushes_from_planes(planes, on_error="none")
    assert [b is not None for b in built] == bounded
    assert sum(bounded) > 200
    for brush in built:
        if brush is not None:
            assert closure_problems(brush) == []


def test_closure_check_detects_broken_brushes():
    brush = brush_from_planes(*box_planes([0, 0, 0], [1, 1, 1]))
    flipped = ConvexBrush(brush.vertices, (brush.faces[0][::-1],) + brush.faces[1:],
                          brush.normals, brush.dists, brush.lo, brush.hi)
    problems = closure_problems(flipped)
    assert any("counter-clockwise" in p for p in problems)
    assert any("edge" in p for p in problems)
    holed = ConvexBrush(brush.vertices, brush.faces[:5] + (np.empty(0, np.int64),),
                        brush.normals, brush.dists, brush.lo, brush.hi)
    assert not is_closed_convex(holed)
    moved = ConvexBrush(brush.vertices + [0, 0, 0.5], brush.faces, brush.normals, brush.dists,
                        brush.lo, brush.hi)
    assert any("outside" in p for p in closure_problems(moved))


# ---------------------------------------------------------------------------------------------
# batches


def test_batch_matches_single_builds_and_reports_failures():
    rng = np.random.default_rng(2)
    good = []
    for _ in range(30):
        lo = rng.uniform(-100, 100, size=3)
        good.append(box_planes(lo, lo + rng.uniform(0.1, 50, size=3)))
    built = brushes_from_planes(good)
    for planes, brush in zip(good, built):
        single = brush_from_planes(*planes)
        np.testing.assert_array_equal(brush.vertices, single.vertices)
        assert [f.tolist() for f in brush.faces] == [f.tolist() for f in single.faces]
        np.testing.assert_array_equal(brush.lo, single.lo)
    flat = brushes_from_plane_arrays(np.concatenate([n for n, _ in good]),
                                     np.concatenate([d for _, d in good]), [6] * 30)
    assert [b.vertices.tolist() for b in flat] == [b.vertices.tolist() for b in built]

    normals, dists = box_planes([0, 0, 0], [1, 1, 1])
    mixed = [good[0], (normals[:5], dists[:5]), good[1], (normals, np.zeros(6))]
    with pytest.raises(GeometryError, match=r"^wall 1: open"):
        brushes_from_planes(mixed, what="wall")
    result = brushes_from_planes(mixed, on_error="none")
    assert result[1] is None and result[3] is None
    assert result[0].vertices.tolist() == built[0].vertices.tolist()
    assert result[2].vertices.tolist() == built[1].vertices.tolist()
    with pytest.raises(GeometryError, match=r"brush 2: plane 0 is not finite"):
        brushes_from_planes([good[0], good[1], (normals * np.nan, dists)], on_error="none")
    assert brushes_from_planes([]) == []


# ---------------------------------------------------------------------------------------------
# real levels


@pytest.mark.parametrize("name", ["quake_id1_dm1.map", "librequake_e3m4_valve220.map"])
def test_every_brush_of_a_real_map_closes(name):
    path = DATA / name
    if not path.exists():
        pytest.skip(f"real level {path} not available (needs the shared data folder next to "
                    f"the repository)")
    brush_points = map_brush_points(path)
    assert len(brush_points) > 100
    planes = [planes_from_points(p, what=f"{name} brush {b}")
              for b, p in enumerate(brush_points)]
    brushes = brushes_from_planes(planes, what=name)
    bad = [(b, closure_problems(brush)) for b, brush in enumerate(brushes)
           if closure_problems(brush)]
    assert bad == []
    for brush, points in zip(brushes, brush_points):
        # Each face's three defining points lie on that face's plane.
        np.testing.assert_allclose(np.einsum("fij,fj->fi", points, brush.normals),
                                   np.repeat(brush.dists[:, None], 3, axis=1), atol=1e-6)
    # The orientation convention matters: inverted planes describe no brush at all.
    inverted = brushes_from_planes([(-n, -d) for n, d in planes[:100]], on_error="none")
    assert all(b is None for b in inverted)


def test_built_brush_arrays_match_the_brushes_built_one_list_at_a_time():
    from spatial.brush import build_brush_arrays

    boxes = [box_planes([0, 0, 0], [1, 2, 3]), box_planes([-5, 1, 1], [-4, 9, 2])]
    open_planes = (np.array([[1.0, 0, 0], [-1.0, 0, 0], [0, 1.0, 0]]), np.array([1.0, 0, 1]))
    planes = [boxes[0], open_planes, boxes[1]]
    normals = np.concatenate([n for n, _ in planes])
    dists = np.concatenate([d for _, d in planes])
    counts = [len(d) for _, d in planes]
    built = build_brush_arrays(normals, dists, counts, on_error="none")
    listed = brushes_from_plane_arrays(normals, dists, counts, on_error="none")
    assert built.ok.tolist() == [True, False, True] and listed[1] is None
    assert built.brush(1) is None
    for b in (0, 2):
        one = built.brush(b)
        np.testing.assert_array_equal(one.vertices, listed[b].vertices)
        assert [f.tolist() for f in one.faces] == [f.tolist() for f in listed[b].faces]
        np.testing.assert_array_equal(built.lo[b], listed[b].lo)
        np.testing.assert_array_equal(built.hi[b], listed[b].hi)
    np.testing.assert_array_equal(built.lo[2], [-5, 1, 1])
    with pytest.raises(GeometryError, match="level 1: open"):
        build_brush_arrays(normals, dists, counts, what="level")
