"""The broad-phase benchmark harness: scene density, the build + pairs operation, the targets table.

Small scenes only (the harness itself is under test, not the backends' speed).
"""
from __future__ import annotations

import argparse
import os

import numpy as np
import pytest

from benchmarks import report
from benchmarks.adapters import Adapter, NotSupported, OurBackend
from benchmarks.timing import Cell
from benchmarks.workload import (
    REFERENCE_N,
    REFERENCE_WORLD,
    estimate_pairs,
    make_workload,
    pair_checksum,
    parse_world,
    world_side,
)
from spatial.errors import ParamError
from spatial.registry import default_registry

#: the harness collects garbage before each timed run: see ``earlier_objects_frozen``
pytestmark = pytest.mark.usefixtures("earlier_objects_frozen")


def _import_runner():
    """``benchmarks/run.py`` pins thread variables at import; keep them out of this process."""
    saved = dict(os.environ)
    try:
        from benchmarks import run
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return run


# --- world side and density -------------------------------------------------------------------

def test_scaled_world_keeps_the_reference_scene_and_grows_with_the_cube_root():
    assert world_side(REFERENCE_N, "scaled") == pytest.approx(REFERENCE_WORLD)
    assert world_side(8 * REFERENCE_N, "scaled") == pytest.approx(2 * REFERENCE_WORLD)
    assert world_side(1_000_000, "scaled") == pytest.approx(2154.43, abs=0.01)
    assert world_side(REFERENCE_N // 8, "scaled") == pytest.approx(REFERENCE_WORLD / 2)


def test_fixed_and_numeric_worlds_ignore_n():
    assert world_side(1_000, "fixed") == world_side(1_000_000, "fixed") == REFERENCE_WORLD
    assert world_side(1_000_000, parse_world("1500")) == 1500.0
    assert world_side(10, 250.0) == 250.0


@pytest.mark.parametrize("text", ["", "huge", "0", "-5", "nan", "inf"])
def test_bad_world_option_names_the_field(text):
    with pytest.raises(ParamError, match="world"):
        parse_world(text)


def test_workload_places_objects_in_the_requested_world():
    w = make_workload(1000, "uniform", queries=10, rays=10, world=300.0)
    assert w.world == 300.0
    centres = (w.lo + w.hi) / 2
    assert centres.min() >= 0.0 and centres.max() <= 300.0
    assert centres.max() > 250.0  # filled up to the side, not left in the default 1000 cube


def _pairs_per_object(n: int, world: float) -> float:
    w = make_workload(n, "uniform", queries=1, rays=1, world=world)
    return estimate_pairs(w.lo, w.hi, sample=n) / n  # sample = n: an exact count


@pytest.mark.slow
def test_scaled_world_keeps_pair_density_while_a_fixed_world_does_not():
    small, large = 1500, 12_000
    scaled = [_pairs_per_object(n, world_side(n, "scaled")) for n in (small, large)]
    fixed = [_pairs_per_object(n, world_side(n, "fixed")) for n in (small, large)]
    # Borders thin out the small scene a little; eight times the objects must not change the
    # density by more than that, whereas in a fixed world it grows about eightfold.
    assert scaled[1] / scaled[0] == pytest.approx(1.0, abs=0.25)
    assert fixed[1] / fixed[0] > 5.0


# --- oneshot ----------------------------------------------------------------------------------

def _sorted_pairs(pairs) -> np.ndarray:
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def _scene(n=1500):
    return make_workload(n, "uniform", queries=50, rays=50, world=world_side(n, "scaled"))


def _check_oneshot_matches_build_then_pairs(adapter: Adapter):
    w = _scene()
    adapter.build(w.ids, w.lo, w.hi)
    expected = _sorted_pairs(adapter.pairs())
    assert len(expected) > 100  # the scene really has pairs to compare
    adapter.close()
    got = _sorted_pairs(adapter.oneshot(w.ids, w.lo, w.hi))
    np.testing.assert_array_equal(got, expected)
    # The structure left behind is the scene's: later box queries run on it.
    ids, counts = adapter.query_boxes(w.query_lo, w.query_hi)
    assert len(counts) == len(w.query_lo) and int(np.sum(counts)) == len(ids) > 0


@pytest.mark.parametrize("name", ["octree", "grid"])
def test_oneshot_of_our_backend_equals_build_then_pairs(name):
    registry = default_registry()
    if name not in registry.backends:
        pytest.skip(f"backend {name!r} is not registered")
    _check_oneshot_matches_build_then_pairs(OurBackend(name, registry.backends[name]))


def test_oneshot_of_boostree_equals_build_then_pairs():
    pytest.importorskip("boostree")
    from benchmarks.peers import BoostreePeer
    _check_oneshot_matches_build_then_pairs(BoostreePeer())


def test_oneshot_without_a_pair_query_is_not_supported_and_does_not_build():
    class RaysOnly(Adapter):
        builds = 0

        def build(self, ids, lo, hi):
            self.builds += 1

    adapter = RaysOnly()
    w = _scene(200)
    with pytest.raises(NotSupported, match="no pair query"):
        adapter.oneshot(w.ids, w.lo, w.hi)
    assert adapter.builds == 0


class _OneshotBreaksTheStructure(OurBackend):
    """A backend whose build + pairs fails half-way, leaving no usable structure."""

    def oneshot(self, ids, lo, hi):
        self.index = None
        raise RuntimeError("pair buffer overflow")


@pytest.mark.slow
@pytest.mark.parametrize("broken", [False, True])
def test_runner_keeps_the_built_structure_for_operations_after_oneshot(broken):
    run = _import_runner()
    registry = default_registry()
    cls = _OneshotBreaksTheStructure if broken else OurBackend
    adapter = cls("grid", registry.backends["grid"])
    w = _scene(1200)
    args = argparse.Namespace(repeats=2, time_limit=5.0, max_pairs=1e9)
    cells, _ = run.run_implementation(adapter, w, list(run.ALL_OPS), args, run.Predictor(), 0.0)
    assert cells["oneshot"].status == ("error" if broken else "ok")
    assert cells["box"].status == "ok" and cells["ray"].status == "ok"

    reference = OurBackend("grid", registry.backends["grid"])
    reference.build(w.ids, w.lo, w.hi)
    ids, counts = reference.query_boxes(w.query_lo, w.query_hi)
    assert cells["box"].check["hits"] == int(np.sum(counts))
    if not broken:
        pairs = reference.pairs()
        assert cells["oneshot"].check == {"count": len(pairs), "checksum": pair_checksum(pairs, w.n)}


def test_oneshot_is_a_pair_operation_after_pairs():
    run = _import_runner()
    assert run.ALL_OPS.index("oneshot") == run.ALL_OPS.index("pairs") + 1
    assert "oneshot" in run.PAIR_OPS
    assert report.OP_TITLES["oneshot"] == "build + pairs"


# --- targets table ----------------------------------------------------------------------------

OURS = ["octree", "grid"]
PEERS = ["ckdtree", "boostree", "fcl", "open3d"]
OPS = ["build", "pairs", "oneshot", "box", "ray", "update", "rebuild", "frame"]


def ok(seconds: float) -> Cell:
    return Cell("ok", [seconds * 0.9, seconds, seconds * 1.2])  # median = seconds


def _scene_dict(layout, n, cells):
    return {"layout": layout, "n": n, "world": 1000.0, "estimated_pairs": 0.0, "cells": cells}


def _outcomes(scenes, layouts=("uniform",), peers=PEERS, unavailable=None):
    found = report.evaluate_targets(scenes, OPS, OURS, list(peers), list(layouts), unavailable)
    return {(o.target.op, o.layout, o.n): o for o in found}


def test_target_compares_our_fastest_backend_with_the_named_peer_not_the_fastest():
    scene = _scene_dict("uniform", 100_000, {
        "octree": {"update": ok(0.5), "rebuild": ok(2.0)}, "grid": {"update": ok(0.8), "rebuild": ok(2.0)},
        "boostree": {"update": ok(0.1)}, "fcl": {"update": ok(0.6)}})
    o = _outcomes([scene])[("update", "uniform", 100_000)]
    assert (o.status, o.backend, o.peer) == (report.MET, "octree", "fcl")
    assert o.ratio == pytest.approx(0.5 / 0.6)


def test_target_not_met_when_slower_than_the_bound():
    scene = _scene_dict("uniform", 100_000, {
        "octree": {"box": ok(0.20)}, "grid": {"box": ok(0.16)}, "boostree": {"box": ok(0.1)}})
    o = _outcomes([scene])[("box", "uniform", 100_000)]
    assert (o.status, o.backend) == (report.NOT_MET, "grid")
    assert o.ratio == pytest.approx(1.6)
    scene["cells"]["grid"]["box"] = ok(0.10)  # exactly 1.0 × boostree: the bound is inclusive
    assert _outcomes([scene])[("box", "uniform", 100_000)].status == report.MET


def test_update_target_also_needs_update_within_half_its_own_rebuild():
    cells = {"octree": {"update": ok(0.1), "rebuild": ok(0.05)},
             "grid": {"update": ok(0.3), "rebuild": ok(0.01)}, "fcl": {"update": ok(0.2)}}
    scene = _scene_dict("uniform", 100_000, cells)
    o = _outcomes([scene])[("update", "uniform", 100_000)]
    assert (o.status, o.backend, o.own) == (report.NOT_MET, "octree", 0.05)
    assert "rebuild" in o.reason
    cells["octree"]["rebuild"] = ok(0.15)  # faster than its rebuild, but not twice as fast
    assert _outcomes([scene])[("update", "uniform", 100_000)].status == report.NOT_MET
    cells["octree"]["rebuild"] = ok(0.4)
    assert _outcomes([scene])[("update", "uniform", 100_000)].status == report.MET
    cells["fcl"]["update"] = ok(0.05)  # well within its rebuild, but slower than fcl
    assert _outcomes([scene])[("update", "uniform", 100_000)].status == report.NOT_MET
    cells["fcl"]["update"] = ok(0.2)
    cells["octree"]["rebuild"] = Cell("skip", note="budget spent")
    o = _outcomes([scene])[("update", "uniform", 100_000)]
    assert o.status == report.NOT_MEASURED and "rebuild" in o.reason


def test_pairs_targets_name_the_fastest_peer_and_the_measured_floor():
    cells = {"octree": {"pairs": ok(1.0)}, "ckdtree": {"pairs": ok(2.0)},
             "boostree": {"pairs": ok(0.9)}, "open3d": {"pairs": Cell("na", note="no pair query")},
             report.FLOOR: {"pairs": ok(0.05)}}
    scene = _scene_dict("uniform", 1_000_000, cells)
    found = report.evaluate_targets([scene], OPS, OURS, PEERS, ["uniform"])
    best, floor = [o for o in found if o.target.op == "pairs" and o.n == 1_000_000]
    assert (best.status, best.peer, best.peer_time) == (report.NOT_MET, "boostree", 0.9)
    assert (floor.status, floor.peer, floor.ratio) == (report.NOT_MET, report.FLOOR, pytest.approx(20.0))
    cells[report.FLOOR]["pairs"] = ok(0.2)
    cells["boostree"]["pairs"] = ok(2.0)
    found = report.evaluate_targets([scene], OPS, OURS, PEERS, ["uniform"])
    assert [o.status for o in found if o.target.op == "pairs" and o.n == 1_000_000] == [report.MET] * 2


def test_not_measured_reasons():
    scene = _scene_dict("uniform", 100_000, {
        "octree": {"box": ok(0.1), "ray": Cell("error", note="RuntimeError: boom"),
                   "update": ok(0.1), "rebuild": ok(1.0)},
        "grid": {"box": ok(0.2), "ray": Cell("skip", note="predicted too slow")},
        "boostree": {"box": Cell("skip", note="run budget (--budget) spent")},
        "open3d": {"ray": ok(0.01)}})
    found = _outcomes([scene], layouts=("uniform", "clustered"), peers=["boostree", "open3d"],
                      unavailable={"fcl": "ImportError: no module named fcl"})
    box = found[("box", "uniform", 100_000)]
    assert box.status == report.NOT_MEASURED and "boostree skipped" in box.reason
    assert box.note == "run budget (--budget) spent"
    ray = found[("ray", "uniform", 100_000)]
    assert ray.status == report.NOT_MEASURED and "no backend of ours" in ray.reason
    update = found[("update", "uniform", 100_000)]
    assert update.status == report.NOT_MEASURED and "fcl unavailable" in update.reason
    for key in [("box", "uniform", 1_000_000), ("box", "clustered", 100_000),
                ("build", "uniform", 1_000_000)]:
        assert found[key].status == report.NOT_MEASURED
        assert found[key].reason == "scene not in this run"


def test_targets_table_has_one_row_per_target_layout_and_size():
    scenes = [_scene_dict("uniform", 100_000, {
        "octree": {"update": ok(0.5), "rebuild": ok(2.0), "box": ok(1.0)}, "fcl": {"update": ok(0.6)},
        "boostree": {"box": ok(0.1)}})]
    lines = report.targets_table(scenes, OPS, OURS, PEERS, ["uniform", "clustered"])
    rows = [line for line in lines if line.startswith("| ") and not line.startswith("| operation")]
    expected = 2 * sum(len(t.sizes) for t in report.TARGETS)
    assert len(rows) == expected
    update_row = next(r for r in rows if r.startswith("| update 10 % | uniform | 100,000 |"))
    assert update_row.endswith("| met |") and "octree 500 ms" in update_row and "fcl 600 ms" in update_row
    box_row = next(r for r in rows if r.startswith("| box queries | uniform | 100,000 |"))
    assert "not met" in box_row and "10.00×" in box_row
    at_100k = sum(1 for t in report.TARGETS if 100_000 in t.sizes)
    assert sum("not measured (scene not in this run)" in r for r in rows) == expected - at_100k


def test_warm_up_seeds_predictions_from_a_scene_of_the_runs_density():
    run = _import_runner()
    registry = default_registry()
    adapter = OurBackend("grid", registry.backends["grid"])
    predictor = run.Predictor()
    run.warm_up([adapter], predictor, ("uniform",), queries=1000, rays=1000, world="scaled")
    n, pairs, _ = predictor.seen[("grid", "uniform", "oneshot")]
    same_density = make_workload(n, "uniform", queries=1, rays=1, world=world_side(n, "scaled"))
    assert pairs == same_density.estimated_pairs
    # Scaling pair operations from the warm-up to 100k then follows the pair count of the
    # scaled world (about N), not the fixed world's N² that a 1000³ warm-up scene would imply.
    assert pairs / n == pytest.approx(3.3, abs=0.6)


def test_predictions_scale_queries_by_depth_and_density_and_pairs_by_pair_count():
    run = _import_runner()
    predictor = run.Predictor()
    for op in ("build", "box", "oneshot"):
        predictor.record("grid", "uniform", op, 1_000, 3_000.0, 0.01)
    assert predictor.predict("grid", "uniform", "build", 500, 1_500.0) is None  # not larger
    # Same density, 100 times the objects: a query batch only goes deeper in the structure.
    box, from_n = predictor.predict("grid", "uniform", "box", 100_000, 300_000.0)
    assert from_n == 1_000 and box == pytest.approx(0.01 * np.log(100_000) / np.log(1_000))
    build, _ = predictor.predict("grid", "uniform", "build", 100_000, 300_000.0)
    assert build == pytest.approx(0.01 * 100 * np.log(100_000) / np.log(1_000))
    # Ten times the density (a fixed world): ten times the hits per query, and pair
    # operations grow with the pair count when that outgrows N log N.
    dense_box, _ = predictor.predict("grid", "uniform", "box", 100_000, 3_000_000.0)
    assert dense_box == pytest.approx(10 * box)
    dense_pairs, _ = predictor.predict("grid", "uniform", "oneshot", 100_000, 3_000_000.0)
    assert dense_pairs == pytest.approx(0.01 * 1000)
