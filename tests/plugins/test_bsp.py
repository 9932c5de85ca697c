"""The BSP backend: planes from the scene's geometry, cost weights, 2D trees, a real Quake map.

The shared oracle suite (tests/spatial/test_oracle.py) already checks every answer against brute
force; these tests check what is particular to a BSP tree.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pytest

from plugins.brute import BruteForce
from plugins.bsp import BSPTree
from spatial.errors import IndexInvariantError, ParamError
from spatial.geometry import frustum_planes_from_camera, ray_box
from spatial.scenegen import random_boxes

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
E1M1 = DATA / "quake" / "quake_id1_e1m1.map"


def inner_rows(tree: BSPTree) -> np.ndarray:
    return np.flatnonzero(~tree.nodes().is_leaf)


def oracle_of(tree: BSPTree) -> BruteForce:
    obj = tree.objects
    slots = obj.alive_slots()
    oracle = BruteForce()
    oracle.build(obj.ids[slots], obj.lo[slots], obj.hi[slots], obj.dynamic[slots], obj.awake[slots])
    return oracle


def assert_pairs_match(tree: BSPTree) -> None:
    oracle = oracle_of(tree)
    for mode in ("all", "active"):
        np.testing.assert_array_equal(tree.pairs(mode).pairs, oracle.pairs(mode).pairs)


def offered_planes(rng, n_axial, n_tilted, world=1000.0):
    """Axial planes on a grid and planes of random direction through random points."""
    axis = rng.integers(0, 3, n_axial)
    axial = np.zeros((n_axial, 4))
    axial[np.arange(n_axial), axis] = rng.choice([-1.0, 1.0], n_axial)
    axial[:, 3] = -axial[np.arange(n_axial), axis] * rng.uniform(0, world, n_axial).round()
    normals = rng.normal(size=(n_tilted, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    points = rng.uniform(0, world, (n_tilted, 3))
    tilted = np.column_stack([normals, -np.einsum("ij,ij->i", normals, points)])
    return np.vstack([axial, tilted])


# --------------------------------------------------------------------------- parameters
def test_params_are_declared_and_checked():
    names = [spec.name for spec in BSPTree.param_specs()]
    assert names == ["space", "plane", "max_depth", "min_objects", "balance_weight",
                     "split_weight", "candidates", "axial_bonus", "leaf"]
    assert not next(s for s in BSPTree.param_specs() if s.name == "plane").tunable
    with pytest.raises(ParamError, match="leaf.*space=2d"):
        BSPTree(leaf="convex")
    with pytest.raises(ParamError, match="space"):
        BSPTree(space="4d")
    with pytest.raises(ParamError, match="axial_bonus"):
        BSPTree(axial_bonus=0.5)


# --------------------------------------------------------------------------- plane choice
def test_split_planes_come_only_from_the_offered_planes():
    rng = np.random.default_rng(4)
    ids, lo, hi = random_boxes(800, seed=4, size_max=60.0)
    planes = offered_planes(rng, 60, 60)
    tree = BSPTree()
    tree.build(ids, lo, hi)
    assert (tree.node_plane_sources() == -1).all(), "without offered planes, box faces are used"
    tree.set_split_planes(planes)
    rows = inner_rows(tree)
    assert len(rows) > 20
    sources = tree.node_plane_sources()
    chosen = tree.node_planes()
    assert (sources[rows] >= 0).all()
    np.testing.assert_array_equal(chosen[rows], tree.split_planes[sources[rows]])
    leaves = tree.nodes().is_leaf
    assert np.isnan(chosen[leaves]).all() and (sources[leaves] == -1).all()
    tree.validate()
    assert_pairs_match(tree)
    assert tree.stats()["scene_planes"] == len(rows)
    tree.set_split_planes(np.empty((0, 4)))  # withdrawing the offer goes back to box faces
    assert (tree.node_plane_sources() == -1).all()


def test_box_face_planes_are_faces_of_objects_in_the_node():
    ids, lo, hi = random_boxes(500, seed=9, layout="clustered")
    tree = BSPTree()
    tree.build(ids, lo, hi)
    planes = tree.node_planes()
    for row in inner_rows(tree):
        axis = int(np.flatnonzero(planes[row, :3])[0])
        assert planes[row, axis] == 1.0
        x = -planes[row, 3]
        assert np.isin(x, np.concatenate([lo[:, axis], hi[:, axis]]))


def test_higher_split_weight_gives_fewer_splits():
    ids, lo, hi = random_boxes(3000, seed=2, size_max=150.0)
    splits = []
    for weight in (0.0, 1.0, 20.0):
        tree = BSPTree(split_weight=weight, balance_weight=1.0)
        tree.build(ids, lo, hi)
        splits.append(tree.stats()["splits"])
        tree.validate()
    assert splits[0] > splits[1] > splits[2], splits


def test_higher_balance_weight_gives_a_shallower_tree():
    ids, lo, hi = random_boxes(3000, seed=2, layout="clustered", size_max=40.0)
    depths, balances = [], []
    for weight in (0.0, 0.05, 5.0):
        tree = BSPTree(balance_weight=weight, split_weight=1.0, max_depth=64)
        tree.build(ids, lo, hi)
        stats = tree.stats()
        depths.append(stats["max_depth"])
        balances.append(stats["balance"])
    assert depths[0] > depths[1] > depths[2], depths
    tree = BSPTree(balance_weight=0.0, split_weight=1.0, max_depth=9)
    tree.build(ids, lo, hi)
    assert tree.stats()["max_depth"] == 9
    tree.validate()
    assert balances[0] > balances[2], balances


def test_axial_bonus_prefers_axial_planes():
    rng = np.random.default_rng(12)
    ids, lo, hi = random_boxes(1500, seed=12, size_max=40.0)
    planes = offered_planes(rng, 150, 150)
    fractions = []
    for bonus in (1.0, 100.0):
        tree = BSPTree(axial_bonus=bonus, candidates=300)
        tree.set_split_planes(planes)
        tree.build(ids, lo, hi)
        chosen = tree.node_planes()[inner_rows(tree)]
        axial = (chosen[:, :3] != 0).sum(axis=1) == 1
        fractions.append(axial.mean())
        tree.validate()
    assert fractions[0] < 0.9, "without a bonus, tilted planes should win at some nodes"
    assert fractions[1] > fractions[0] + 0.1 and fractions[1] > 0.97, fractions


@pytest.mark.parametrize("plane,up", [("xy", 2), ("xz", 1)])
def test_2d_tree_splits_with_vertical_planes_only(plane, up):
    rng = np.random.default_rng(5)
    ids, lo, hi = random_boxes(700, seed=5, layout="clustered")
    tree = BSPTree(space="2d", plane=plane)
    tree.build(ids, lo, hi)
    rows = inner_rows(tree)
    assert len(rows) > 20
    assert (tree.node_planes()[rows, up] == 0).all()
    table = tree.nodes()
    assert (table.lo[:, up] == table.lo[0, up]).all() and (table.hi[:, up] == table.hi[0, up]).all()
    walls = offered_planes(rng, 0, 40)  # tilted planes made vertical; the rest mostly are not
    walls[:, up] = 0.0
    walls[:, :3] /= np.linalg.norm(walls[:, :3], axis=1, keepdims=True)
    tree.set_split_planes(np.vstack([offered_planes(rng, 80, 80), walls]))
    rows = inner_rows(tree)
    sources = tree.node_plane_sources()[rows]
    assert len(rows) > 10 and (sources >= 0).all()
    assert (np.abs(tree.split_planes[sources, up]) <= 1e-9).all()
    table = tree.nodes()
    assert (table.lo[:, up] == table.lo[0, up]).all() and (table.hi[:, up] == table.hi[0, up]).all()
    tree.validate()
    assert_pairs_match(tree)


# --------------------------------------------------------------------------- structure
def test_node_bounds_nest_and_axial_regions_are_clipped():
    ids, lo, hi = random_boxes(600, seed=6)
    tree = BSPTree()
    tree.build(ids, lo, hi)
    table, planes = tree.nodes(), tree.node_planes()
    np.testing.assert_array_equal(table.lo[0], lo.min(axis=0))
    np.testing.assert_array_equal(table.hi[0], hi.max(axis=0))
    for row in inner_rows(tree):
        axis = int(np.flatnonzero(planes[row, :3])[0])
        x = -planes[row, 3] / planes[row, axis]
        children = np.flatnonzero(table.parent == row)
        assert len(children) == 2
        front, back = children  # the front child is made first
        assert table.lo[front, axis] == x and table.hi[back, axis] == x
    assert (table.lo <= table.hi).all()
    assert table.own_count[~table.is_leaf].sum() == 0
    assert table.subtree_count[0] == tree.stats()["references"]


def test_edits_are_applied_lazily_by_refit_then_by_rebuild():
    ids, lo, hi = random_boxes(400, seed=3)
    tree = BSPTree()
    tree.build(ids, lo, hi)
    planes = tree.node_planes()
    rebuilds, refits = tree.rebuilds, tree.refits
    tree.insert([1000, 1001], [[0.0, 0, 0], [2000, 2000, 2000]], [[5.0, 5, 5], [2100, 2100, 2100]])
    tree.update([3, 4], lo[[3, 4]] + 300.0, hi[[3, 4]] + 300.0)
    tree.remove([5, 6, 7])
    assert (tree.rebuilds, tree.refits) == (rebuilds, refits), "edits alone change nothing"
    assert list(tree.query_point([2050.0, 2050, 2050]).ids) == [1001]
    assert (tree.rebuilds, tree.refits) == (rebuilds, refits + 1), "a small batch is refitted"
    np.testing.assert_array_equal(tree.node_planes(), planes)
    assert tree.nodes().hi[0].tolist() == [2100.0, 2100.0, 2100.0], "root box grows"
    tree.validate()
    assert_pairs_match(tree)
    tree.query_box([0.0, 0, 0], [10.0, 10, 10])
    assert (tree.rebuilds, tree.refits) == (rebuilds, refits + 1), "nothing left to apply"
    moved = ids[10:150]  # with the earlier edits, more than a quarter of the objects
    tree.update(moved, lo[moved] * 0.5, hi[moved] * 0.5)
    tree.validate()
    assert tree.rebuilds == rebuilds + 1
    assert_pairs_match(tree)
    tree.remove(tree.objects.ids[tree.objects.alive_slots()])
    tree.validate()
    assert len(tree.query_box([-1e9] * 3, [1e9] * 3).ids) == 0


def test_validate_catches_a_missing_reference_and_a_moved_plane():
    ids, lo, hi = random_boxes(300, seed=1)
    tree = BSPTree()
    tree.build(ids, lo, hi)
    tree.validate()
    leaf = int(np.flatnonzero(tree.nodes().is_leaf & (tree.nodes().own_count > 1))[0])
    start = tree._leaf_start[leaf]
    tree._items[start] = tree._items[start + 1]
    with pytest.raises(IndexInvariantError, match="twice"):
        tree.validate()
    tree.build(ids, lo, hi)
    row = inner_rows(tree)[0]
    tree._planes[row, 3] += 200.0
    with pytest.raises(IndexInvariantError, match="wrong side|missing"):
        tree.validate()


def test_ray_distances_are_bit_identical_to_the_reference():
    rng = np.random.default_rng(8)
    ids, lo, hi = random_boxes(800, seed=8, layout="clustered")
    tree = BSPTree()
    tree.build(ids, lo, hi)
    origins = rng.uniform(-100, 1100, (40, 3))
    directions = rng.normal(size=(40, 3))
    directions[::5, 1:] = 0.0  # axis-parallel rays
    batch = tree.query_rays(origins, directions)
    for q in range(40):
        hit, t = ray_box(origins[q], directions[q], lo, hi)
        one = tree.query_ray(origins[q], directions[q])
        assert np.array_equal(one.t, np.sort(t[hit]))
        if hit.any():
            best = np.lexsort((ids[hit], t[hit]))[0]
            assert batch.ids[q] == ids[hit][best] and batch.t[q] == t[hit][best]
        else:
            assert batch.ids[q] == -1
    assert (batch.nodes_visited < len(tree.nodes())).all(), "closest-hit rays must prune"


def test_trace_rows_and_work_counters():
    ids, lo, hi = random_boxes(1000, seed=2)
    tree = BSPTree()
    tree.build(ids, lo, hi)
    n_rows = len(tree.nodes())
    box = tree.query_box([100.0, 100, 100], [160.0, 160, 160], trace=True)
    assert box.nodes_visited == len(box.visited) < n_rows
    assert len(box.ids) <= box.objects_tested < len(ids)
    planes = frustum_planes_from_camera([500.0, 500, 500], [1.0, 0, 0], [0.0, 0, 1], 60, 1.0, 1, 300)
    frustum = tree.query_frustum(planes, trace=True)
    assert len(frustum.culled) > 0 and len(np.intersect1d(frustum.visited, frustum.culled)) == 0
    assert (np.asarray(frustum.visited) < n_rows).all()
    pairs = tree.pairs("all")
    assert pairs.node_tests.sum() == pairs.tests
    assert (pairs.node_tests[~tree.nodes().is_leaf] == 0).all()


# --------------------------------------------------------------------------- a real map
_NUMBER = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_POINT = r"\(\s*" + r"\s+".join([_NUMBER] * 3) + r"\s*\)"
_FACE = re.compile(r"^\s*" + r"\s*".join([_POINT] * 3) + r"\s*\S+")


def read_map_brushes(path: Path) -> list[np.ndarray]:
    """Face point triples ``(F, 3, 3)`` of every brush of a Quake ``.map`` (all entities)."""
    brushes, current, depth = [], [], 0
    for number, line in enumerate(path.read_text().splitlines(), 1):
        text = line.strip()
        if text == "{":
            depth += 1
            current = []
        elif text == "}":
            if depth == 2:
                brushes.append(np.array(current, dtype=np.float64).reshape(-1, 3, 3))
            depth -= 1
        elif depth == 2 and text.startswith("("):
            match = _FACE.match(text)
            assert match, f"{path.name}:{number}: unreadable face line"
            current.append([float(v) for v in match.groups()])
    return brushes


_ORIGIN = re.compile(r'^\s*"origin"\s+"' + r"\s+".join([_NUMBER] * 3) + r'"')


def read_map_origins(path: Path) -> np.ndarray:
    """Origins ``(E, 3)`` of the point entities (entities with an ``origin`` key)."""
    found = [[float(v) for v in m.groups()] for m in map(_ORIGIN.match, path.read_text().splitlines())
             if m]
    return np.array(found, dtype=np.float64).reshape(-1, 3)


def quake_planes(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quake convention: normal = normalize((p0 - p1) x (p2 - p1)), dist = normal . p0."""
    normal = np.cross(points[:, 0] - points[:, 1], points[:, 2] - points[:, 1])
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    return normal, np.einsum("ij,ij->i", normal, points[:, 0])


def brush_bounds(brushes, planes):
    """Bounds of each brush's solid if :mod:`spatial.brush` can build it, else of its points."""
    lo = np.array([b.reshape(-1, 3).min(axis=0) for b in brushes])
    hi = np.array([b.reshape(-1, 3).max(axis=0) for b in brushes])
    try:
        from spatial.brush import brushes_from_planes
    except ImportError:
        return lo, hi
    for k, solid in enumerate(brushes_from_planes(planes, on_error="none")):
        if solid is not None:
            lo[k], hi[k] = solid.lo, solid.hi
    return lo, hi


@pytest.mark.slow
@pytest.mark.skipif(not E1M1.exists(), reason=f"real level data not found at {E1M1}")
def test_e1m1_splits_only_on_the_maps_brush_planes():
    brushes = read_map_brushes(E1M1)
    planes = [quake_planes(b) for b in brushes]
    try:
        from spatial.brush import plane_from_points
    except ImportError:
        pass
    else:
        normal, dist = plane_from_points(*brushes[0][0])
        np.testing.assert_allclose(normal, planes[0][0][0], atol=1e-12)
        np.testing.assert_allclose(dist, planes[0][1][0], atol=1e-9)
    lo, hi = brush_bounds(brushes, planes)
    origins = read_map_origins(E1M1)  # point entities as 32-unit boxes, as in the game
    lo, hi = np.vstack([lo, origins - 16.0]), np.vstack([hi, origins + 16.0])
    map_planes = np.concatenate([np.column_stack([n, -d]) for n, d in planes])
    ids = np.arange(len(lo))
    assert len(brushes) > 1000 and len(origins) > 100

    tree = BSPTree()
    tree.set_split_planes(map_planes)
    start = time.perf_counter()
    tree.build(ids, lo, hi)
    build_ms = (time.perf_counter() - start) * 1e3
    print(f"\ne1m1: {len(brushes)} brushes + {len(origins)} point entities, "
          f"{len(map_planes)} face planes, build {build_ms:.1f} ms, "
          f"{tree.stats()}")
    tree.validate()
    rows = inner_rows(tree)
    chosen = tree.node_planes()[rows]
    assert len(rows) > 100
    # every chosen plane is one of the map's face planes, by index and by value
    sources = tree.node_plane_sources()[rows]
    assert (sources >= 0).all()
    np.testing.assert_array_equal(chosen, tree.split_planes[sources])
    distance = np.abs(chosen[:, None, :] - map_planes[None, :, :]).max(axis=2)
    assert (distance.min(axis=1) < 1e-9).all()
    oracle = BruteForce()
    oracle.build(ids, lo, hi)
    for mode in ("all", "active"):
        got, want = tree.pairs(mode), oracle.pairs(mode)
        np.testing.assert_array_equal(got.pairs, want.pairs)
        assert got.tests < want.tests / 10
    lo_all, hi_all = lo.min(axis=0), hi.max(axis=0)
    rng = np.random.default_rng(0)
    centers = rng.uniform(lo_all, hi_all, (200, 3))
    batch = tree.query_boxes(centers - 32.0, centers + 32.0)
    for q in range(200):
        want = oracle.query_box(centers[q] - 32.0, centers[q] + 32.0).ids
        np.testing.assert_array_equal(np.sort(batch.hits(q)), want)

    tree2d = BSPTree(space="2d")
    tree2d.set_split_planes(map_planes)
    tree2d.build(ids, lo, hi)
    rows = inner_rows(tree2d)
    assert len(rows) > 50
    assert (tree2d.node_planes()[rows, 2] == 0).all(), "a 2d tree splits only on walls"
    assert (tree2d.node_plane_sources()[rows] >= 0).all()
    assert ((tree2d.node_planes()[rows, :2] != 0).all(axis=1)).any(), "e1m1 has diagonal walls"
    table = tree2d.nodes()
    assert (table.lo[:, 2] == lo[:, 2].min()).all() and (table.hi[:, 2] == hi[:, 2].max()).all()
    np.testing.assert_array_equal(tree2d.pairs("all").pairs, oracle.pairs("all").pairs)
