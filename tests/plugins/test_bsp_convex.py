"""The BSP's Doom-style build (leaf="convex"): convex leaves, exact cuts, exact answers."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from plugins.brute import BruteForce
from plugins.bsp import BSPTree

FREEDOOM1 = Path("/usr/share/games/doom/freedoom1.wad")


def leaf_is_convex(a: np.ndarray, b: np.ndarray, tol: float = 1e-5) -> bool:
    """Every piece has the others on its right (front) or on its line running the same way."""
    for i in range(len(a)):
        d = b[i] - a[i]
        normal = np.array([d[1], -d[0]]) / np.hypot(*d)
        da = (a - a[i]) @ normal
        db = (b - a[i]) @ normal
        on_line = (np.abs(da) <= tol) & (np.abs(db) <= tol)
        same_way = (b - a) @ d > 0
        behind = (da < -tol) | (db < -tol) | (on_line & ~same_way)
        behind[i] = False
        if behind.any():
            return False
    return True


def box_of_segments(ids, a, b, floor=0.0, ceiling=64.0):
    lo = np.column_stack([np.minimum(a, b), np.full(len(a), floor)])
    hi = np.column_stack([np.maximum(a, b), np.full(len(a), ceiling)])
    return np.asarray(ids), lo, hi


def room_with_pillar():
    """A square room (walls facing in) around a square pillar (walls facing out)."""
    room = [(0, 0), (0, 256), (256, 256), (256, 0)]        # clockwise: fronts face inwards
    pillar = [(96, 96), (160, 96), (160, 160), (96, 160)]  # counter-clockwise: fronts face out
    a, b = [], []
    for loop in (room, pillar):
        for k in range(4):
            a.append(loop[k])
            b.append(loop[(k + 1) % 4])
    return np.arange(8), np.array(a, float), np.array(b, float)


def test_leaf_check_itself_tells_convex_from_not():
    ids, a, b = room_with_pillar()
    assert leaf_is_convex(a[:4], b[:4])
    assert not leaf_is_convex(a, b)


def test_room_with_pillar_gets_convex_leaves():
    ids, a, b = room_with_pillar()
    tree = BSPTree(space="2d", leaf="convex")
    tree.set_segments(ids, a, b)
    tree.build(*box_of_segments(ids, a, b), dynamic=np.zeros(8, bool))
    tree.validate()
    pieces = tree.leaf_segments()
    leaves = np.flatnonzero(tree.nodes().is_leaf)
    assert len(leaves) >= 2
    assert set(np.unique(pieces["leaf"])) == set(leaves)
    for leaf in leaves:
        here = pieces["leaf"] == leaf
        assert leaf_is_convex(pieces["a"][here], pieces["b"][here])
    stats = tree.stats()
    assert stats["splits"] == len(pieces["ids"]) - 8 and stats["nonconvex_leaves"] == 0


@pytest.mark.parametrize("seed,layout", [(3, "any"), (4, "any"), (5, "grid"), (6, "grid")])
def test_pieces_tile_their_segments(seed, layout):
    rng = np.random.default_rng(seed)
    n = 60
    if layout == "grid":  # axis-aligned walls on a coarse grid: many colinear and shared lines
        a = rng.integers(0, 8, size=(n, 2)).astype(float) * 64
        axis = rng.integers(0, 2, size=n)
        b = a.copy()
        b[np.arange(n), axis] += rng.choice([-128.0, -64.0, 64.0, 128.0], size=n)
    else:
        a = rng.integers(0, 1000, size=(n, 2)).astype(float)
        b = a + rng.integers(-200, 200, size=(n, 2))
    keep = (a != b).any(axis=1)
    ids, a, b = np.arange(keep.sum()), a[keep], b[keep]
    two = rng.random(len(ids)) < 0.3
    tree = BSPTree(space="2d", leaf="convex", max_depth=64)
    tree.set_segments(ids, a, b, two)
    tree.build(*box_of_segments(ids, a, b))
    tree.validate()
    pieces = tree.leaf_segments()
    stats = tree.stats()
    assert stats["segments"] == len(ids) + two.sum()
    assert stats["splits"] == len(pieces["ids"]) - stats["segments"]
    assert stats["splits"] > 0 or layout == "grid"
    lengths = np.hypot(*(pieces["b"] - pieces["a"]).T)
    total = np.bincount(pieces["ids"], weights=lengths, minlength=len(ids))
    np.testing.assert_allclose(total, np.hypot(*(b - a).T) * (1 + two), rtol=1e-9)
    for leaf in np.unique(pieces["leaf"]):
        here = pieces["leaf"] == leaf
        assert leaf_is_convex(pieces["a"][here], pieces["b"][here])
    assert stats["nonconvex_leaves"] == 0


def test_without_segments_convex_builds_like_count():
    rng = np.random.default_rng(5)
    lo = rng.uniform(0, 100, size=(200, 3))
    hi = lo + rng.uniform(0, 5, size=(200, 3))
    convex, count = BSPTree(space="2d", leaf="convex"), BSPTree(space="2d")
    for tree in (convex, count):
        tree.build(np.arange(200), lo, hi)
    np.testing.assert_array_equal(convex.node_planes(), count.node_planes())
    assert len(convex.leaf_segments()["ids"]) == 0


def test_freedoom_e1m1_convex_tree_is_exact_and_convex():
    if not FREEDOOM1.exists():
        pytest.skip(f"{FREEDOOM1} is absent: install the Debian package 'freedoom'")
    from editor.model.loading import document_source, load_document

    scene = load_document(f"{FREEDOOM1}:E1M1")
    source = document_source(scene, "e1m1")
    tree = BSPTree(space="2d", leaf="convex", max_depth=64)
    source.offer_exact_geometry(tree)
    tree.build(source.ids, source.lo, source.hi, source.dynamic)
    tree.validate()
    stats = tree.stats()
    assert stats["nonconvex_leaves"] == 0 and stats["splits"] > 0
    pieces = tree.leaf_segments()
    for leaf in np.unique(pieces["leaf"]):
        here = pieces["leaf"] == leaf
        assert leaf_is_convex(pieces["a"][here], pieces["b"][here])
    oracle = BruteForce()
    oracle.build(source.ids, source.lo, source.hi, source.dynamic)
    rng = np.random.default_rng(0)
    lo, hi = source.lo.min(axis=0), source.hi.max(axis=0)
    for _ in range(50):
        c = rng.uniform(lo, hi)
        r = rng.uniform(8, 256)
        np.testing.assert_array_equal(tree.query_box(c - r, c + r).ids, oracle.query_box(c - r, c + r).ids)
        np.testing.assert_array_equal(tree.query_sphere(c, r).ids, oracle.query_sphere(c, r).ids)
    for mode in ("all", "active"):
        np.testing.assert_array_equal(tree.pairs(mode).pairs, oracle.pairs(mode).pairs)
