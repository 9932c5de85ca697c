"""Picking without compiled kernels (``editor.model.picking``, ``spatial.table_queries``)
gives exactly the index's pick on real levels and fixtures, for every kind of tree."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model.index_input import index_input
from editor.model.index_sync import build_index
from editor.model.loading import open_level
from editor.model.picking import box_touching, pick_ray
from spatial.registry import default_registry
from spatial.table_queries import table_query_box, table_query_ray
from tests.conftest import shared_file

LEVELS = [None,  # the demo level
          ("quake", "librequake_e3m4_valve220.map"), ("quake", "quake_id1_e1m1.map"),
          ("quake", "trenchbroom_rtz_q1.map"), ("meshes", "oa_dm5_world.obj")]
BACKENDS = ("octree", "bvh", "grid", "quadtree", "kdtree")


def _scene(level):
    path = None if level is None else shared_file(*level)
    return open_level(path).document


def _rays(scene, rng, n: int):
    """Top-view rays straight down through points of the level (what a 2D click casts), then
    rays from outside the level in random directions, some with zero components (a side view's
    click, a 3D view's ray), some starting inside the level."""
    lo, hi = scene.bounds()
    size = hi - lo
    for k in range(n):
        point = lo + rng.random(3) * size
        if k % 3 == 0:
            origin = point.copy()
            origin[2] = hi[2] + 1.0
            yield origin, np.array([0.0, 0.0, -1.0])
        elif k % 3 == 1:
            direction = rng.normal(size=3)
            direction[rng.integers(3)] = 0.0
            yield point, direction
        else:
            origin = lo - size * 0.2 + rng.random(3) * size * 1.4
            yield origin, (point - origin) + 1e-9


@pytest.mark.parametrize("level", LEVELS, ids=lambda lv: "demo" if lv is None else lv[1])
def test_picking_from_the_object_table_is_the_index_pick(level):
    scene = _scene(level)
    record = index_input(scene)
    rng = np.random.default_rng(7)
    rays = list(_rays(scene, rng, 120))
    compared = 0
    for name in BACKENDS:
        cls = default_registry().backend(name)
        index = build_index(cls, cls.Params(), record)
        for origin, direction in rays:
            kernel = index.query_ray(origin, direction)
            ids, t = table_query_ray(index, origin, direction)
            assert ids.tolist() == kernel.ids.tolist(), (name, origin, direction)
            np.testing.assert_allclose(t, kernel.t, rtol=1e-9, atol=1e-9)
            assert pick_ray(scene, index, origin, direction, compiled=False) == \
                pick_ray(scene, index, origin, direction, compiled=True)
            compared += 1
        lo, hi = scene.bounds()
        for _ in range(20):
            a, b = lo + rng.random((2, 3)) * (hi - lo)
            qlo, qhi = np.minimum(a, b), np.maximum(a, b)
            assert table_query_box(index, qlo, qhi).tolist() == \
                index.query_box(qlo, qhi).ids.tolist()
            assert box_touching(index, qlo, qhi, compiled=False).tolist() == \
                box_touching(index, qlo, qhi, compiled=True).tolist()
    assert compared >= 120


def test_a_top_view_click_picks_a_brush_without_the_index(monkeypatch):
    """The pick without kernels never calls the index's queries, and still finds the brush
    under a click (the smallest brush of a real level, clicked at its centre)."""
    scene = _scene(("quake", "quake_id1_e1m1.map"))
    record = index_input(scene)
    cls = default_registry().backend("octree")
    index = build_index(cls, cls.Params(), record)
    ids = scene.brush_ids()
    lo, hi = scene.bounds_of(ids)
    k = int(np.argmin((hi - lo).prod(axis=1)))
    origin = np.array([(lo[k, 0] + hi[k, 0]) / 2, (lo[k, 1] + hi[k, 1]) / 2,
                       scene.bounds()[1][2] + 1.0])
    expected = pick_ray(scene, index, origin, [0.0, 0.0, -1.0])
    calls = []
    for query in ("query_ray", "query_box", "query_rays", "query_point"):
        monkeypatch.setattr(cls, query, lambda self, *a, _q=query, **kw: calls.append(_q))
    picked = pick_ray(scene, index, origin, [0.0, 0.0, -1.0], compiled=False)
    assert calls == []
    assert picked == expected and ids[k] in picked
