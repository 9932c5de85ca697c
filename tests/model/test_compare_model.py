"""Compare mode's measuring logic on the demo level: same work, same path, real differences."""
from __future__ import annotations

import numpy as np

from editor.model.compare import SideSpec, query_set
from editor.model.compare.difference import costliest_objects, object_nodes, region_grid
from editor.model.compare.queries import world_bounds
from editor.model.compare.report import FIGURES, compare_record, comparison_rows
from editor.model.compare.sides import build_side
from editor.model.demo import build_demo_scene
from editor.model.index_input import index_input
from editor.model.index_sync import IndexSync

#: figures read from counters (the others are wall-clock times)
COUNTED = [key for key, _ in FIGURES if not key.endswith("_ms")]


def test_query_set_is_deterministic_and_seeded():
    record = index_input(build_demo_scene())
    one, two, other = query_set(record, 1), query_set(record, 1), query_set(record, 2)
    assert np.array_equal(one.box_lo, two.box_lo) and np.array_equal(one.ray_directions, two.ray_directions)
    assert not np.array_equal(one.box_lo, other.box_lo)
    lo, hi = world_bounds(record)
    centres = (one.box_lo + one.box_hi) / 2
    assert (centres >= lo).all() and (centres <= hi).all()


def test_counted_figures_repeat_and_sides_differ():
    record = index_input(build_demo_scene(), "demo")
    a, b = SideSpec("octree"), SideSpec("octree", {"max_depth": 1})
    first = compare_record(record, a, b, frames=2, warm=False).as_dict()
    again = compare_record(record, a, b, frames=2, warm=False).as_dict()
    for key in COUNTED:
        rows = {k: (va, vb) for k, _, va, vb, _ in comparison_rows(first)}
        rows_again = {k: (va, vb) for k, _, va, vb, _ in comparison_rows(again)}
        assert rows[key] == rows_again[key], key
    assert first["b"]["max_depth"] <= 1 < first["a"]["max_depth"]
    assert first["a"]["pair_overlapping"] == first["b"]["pair_overlapping"]


def test_side_is_the_tree_the_editor_builds():
    scene = build_demo_scene()
    built = build_side(index_input(scene), SideSpec("bvh"))
    synced = IndexSync(scene, "bvh").index
    assert built.stats()["nodes"] == synced.stats()["nodes"]
    assert object_nodes(built) == object_nodes(synced)


def test_difference_grid_and_costliest_objects():
    record = index_input(build_demo_scene())
    queries = query_set(record)
    lo, hi = world_bounds(record)
    a = build_side(record, SideSpec("octree", {"max_depth": 1}))
    b = build_side(record, SideSpec("bsp"))  # splits objects: some sit in many nodes
    ga, gb = region_grid(a, queries, lo, hi), region_grid(b, queries, lo, hi)
    visits_a = a.query_boxes(queries.box_lo, queries.box_hi).nodes_visited.sum() + \
        a.query_rays(queries.ray_origins, queries.ray_directions, queries.ray_max_t).nodes_visited.sum()
    assert ga.values.sum() == visits_a
    diff = ga.minus(gb)
    assert np.allclose(diff.values, ga.values - gb.values)
    costs = costliest_objects(a, b, top=3)
    assert len(costs) == 3 and costs[0].b_nodes > costs[0].a_nodes
    assert costs[0].describe("brush", "octree", "bsp").startswith(f"brush {costs[0].oid} is in 1 octree node and ")
    counts_a, counts_b = object_nodes(a), object_nodes(b)
    for cost in costs:
        assert (cost.a_nodes, cost.b_nodes) == (counts_a.get(cost.oid, 0), counts_b.get(cost.oid, 0))
    assert [abs(c.difference) for c in costs] == sorted((abs(c.difference) for c in costs), reverse=True)
    pairs = region_grid(b, queries, lo, hi, "pair_tests")
    assert pairs.values.sum() == b.nodes().pair_tests.sum() > 0
