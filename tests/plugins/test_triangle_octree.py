"""Triangle meshes: import counts, and the triangle octree's exact, duplicate-free queries."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model.level_geometry import Triangle
from editor.model.loading import document_source, load_document
from plugins.mesh_import import MeshImportError, read_triangles
from plugins.triangle_octree import TriangleOctree
from spatial.errors import GeometryError
from spatial.probes import sphere_probes
from spatial.triangles import triangles_boxes_overlap
from tests.conftest import shared_file


def random_triangles(n: int, seed: int, world: float = 200.0, size: float = 20.0):
    rng = np.random.default_rng(seed)
    base = rng.uniform(0, world, size=(n, 1, 3))
    corners = base + rng.uniform(-size, size, size=(n, 3, 3))
    corners[: n // 10] = np.round(corners[: n // 10])  # some on whole numbers: touching cases
    return corners


def build_tree(corners, **params):
    ids = np.arange(len(corners)) * 3 + 7  # ids are not slots
    tree = TriangleOctree(**params)
    tree.set_triangles(ids, corners[:, 0], corners[:, 1], corners[:, 2])
    tree.build(ids, corners.min(axis=1), corners.max(axis=1), dynamic=np.zeros(len(ids), bool))
    return ids, tree


def sphere_distance(center, corners):
    """Distance from ``center`` to each triangle, by numpy alone (projection, then edges)."""
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    n = np.cross(b - a, c - a)
    nn = np.einsum("ij,ij->i", n, n)
    out = np.full(len(corners), np.inf)
    ok = nn > 0
    t = np.einsum("ij,ij->i", center - a, n)
    proj = center - (t / np.where(ok, nn, 1))[:, None] * n
    inside = ok.copy()
    for p, q in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(q - p, proj - p), n) >= 0
    out[inside] = np.abs(t[inside]) / np.sqrt(nn[inside])
    for p, q in ((a, b), (b, c), (c, a)):
        e = q - p
        ee = np.einsum("ij,ij->i", e, e)
        s = np.clip(np.einsum("ij,ij->i", center - p, e) / np.where(ee > 0, ee, 1), 0, 1)
        closest = p + s[:, None] * e
        out = np.minimum(out, np.linalg.norm(closest - center, axis=1))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("max_triangles", [1, 4, 30])
def test_sphere_query_equals_brute_force_without_duplicates(max_triangles):
    corners = random_triangles(600, seed=max_triangles)
    ids, tree = build_tree(corners, max_triangles=max_triangles)
    tree.validate()
    rng = np.random.default_rng(1)
    for _ in range(60):
        center = rng.uniform(-20, 220, 3)
        radius = rng.uniform(0, 40)
        result = tree.query_sphere(center, radius)
        assert len(np.unique(result.ids)) == len(result.ids)
        d = sphere_distance(center, corners)
        clear = np.abs(d - radius) > 1e-7 * max(radius, 1)  # decided beyond rounding
        got = np.isin(ids, result.ids)
        np.testing.assert_array_equal(got[clear], (d <= radius)[clear])
        # candidates are counted once each: never more than the triangles, never fewer than hits
        assert len(result.ids) <= result.objects_tested <= len(ids)


def test_box_queries_equal_the_exact_triangle_box_test():
    corners = random_triangles(500, seed=7)
    ids, tree = build_tree(corners, max_triangles=8)
    rng = np.random.default_rng(2)
    for _ in range(60):
        lo = rng.uniform(-10, 200, 3)
        hi = lo + rng.uniform(0, 30, 3)
        expected = ids[triangles_boxes_overlap(corners[:, 0], corners[:, 1], corners[:, 2], lo, hi)]
        np.testing.assert_array_equal(tree.query_box(lo, hi).ids, np.sort(expected))


def test_triangles_go_only_into_cells_they_truly_meet():
    # one long thin diagonal triangle: its box covers the whole world, the triangle does not
    corners = np.array([[[0, 0, 0], [100, 100, 100], [100, 100, 101]]], float)
    filler = random_triangles(200, seed=3, world=100, size=2)
    corners = np.concatenate([corners, filler])
    ids, tree = build_tree(corners, max_triangles=4)
    tree.validate()
    table = tree.nodes()
    leaves = np.flatnonzero(table.is_leaf)
    holding = [row for row in leaves if ids[0] in tree.node_objects(row)]
    box_meets = [row for row in leaves
                 if (table.lo[row] <= corners[0].max(0)).all() and (table.hi[row] >= corners[0].min(0)).all()]
    assert 0 < len(holding) < len(box_meets)
    # a query far from the diagonal but inside its box does not return it
    assert ids[0] not in tree.query_box([90, 0, 0], [100, 10, 10]).ids


def test_rays_hit_triangles_at_their_distance():
    corners = np.array([[[0, 0, 10], [10, 0, 10], [0, 10, 10]],
                        [[0, 0, 20], [10, 0, 20], [0, 10, 20]]], float)
    ids, tree = build_tree(corners)
    hit = tree.query_ray([1, 1, 0], [0, 0, 1])
    np.testing.assert_array_equal(hit.ids, ids)
    np.testing.assert_allclose(hit.t, [10, 20])
    assert len(tree.query_ray([9, 9, 0], [0, 0, 1]).ids) == 0  # inside both boxes, off both


def test_a_triangle_outside_its_box_is_refused():
    tree = TriangleOctree()
    tree.set_triangles([0], [[0, 0, 0]], [[1, 0, 0]], [[0, 5, 0]])
    with pytest.raises(GeometryError, match="object 0"):
        tree.build([0], [[0, 0, 0]], [[1, 1, 0]])


def test_shared_obj_imports_every_face_and_probes_a_few_candidates():
    path = shared_file("meshes", "oa_dm5_world.obj")
    faces = [line.split()[1:] for line in path.read_text().splitlines() if line.startswith("f ")]
    assert all(len(f) == 3 for f in faces)
    scene = load_document(path)
    assert len(scene.triangle_ids()) == len(faces)
    first = scene[scene.triangle_ids()[0]]
    assert isinstance(first, Triangle)
    vertices = [line.split()[1:] for line in path.read_text().splitlines() if line.startswith("v ")]
    expected = [tuple(float(x) for x in vertices[int(i.split("/")[0]) - 1]) for i in faces[0]]
    assert (first.v0, first.v1, first.v2) == tuple(expected)

    source = document_source(scene, str(path))
    tree = TriangleOctree()
    source.offer_exact_geometry(tree)
    tree.build(source.ids, source.lo, source.hi, source.dynamic)
    tree.validate()
    stats = tree.stats()
    assert stats["triangles"] == len(faces)
    probe = sphere_probes(tree, source.lo.min(0), source.hi.max(0), 32.0, count=64)
    assert probe["mean_hits"] <= probe["mean_candidates"] < len(faces) / 100


def test_unreadable_mesh_names_the_file(tmp_path):
    bad = tmp_path / "broken.ply"
    bad.write_bytes(b"ply\nformat nonsense\n")
    with pytest.raises(MeshImportError, match="broken.ply"):
        read_triangles(bad)
    empty = tmp_path / "empty.obj"
    empty.write_text("# nothing\nv 0 0 0\n")
    with pytest.raises(MeshImportError, match="empty.obj"):
        read_triangles(empty)


def test_gltf_scene_graph_is_flattened_with_transforms(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    box = trimesh.creation.box(extents=(2, 2, 2))
    graph = trimesh.Scene()
    graph.add_geometry(box, node_name="left", transform=trimesh.transformations.translation_matrix([-10, 0, 0]))
    graph.add_geometry(box, node_name="right", transform=trimesh.transformations.translation_matrix([10, 0, 0]))
    path = tmp_path / "two_boxes.glb"
    graph.export(path)
    corners, groups, group_of = read_triangles(path)
    assert len(corners) == 2 * len(box.faces)
    assert sorted(groups) == ["left", "right"]
    xs = corners[:, :, 0]
    for k, name in enumerate(groups):
        side = xs[group_of == k]
        assert (side < 0).all() if name == "left" else (side > 0).all()
