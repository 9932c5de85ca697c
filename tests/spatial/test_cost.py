"""The cost model: deterministic work counters, the documented objective, deadlines."""
from __future__ import annotations

import time

import pytest

from plugins.brute import BruteForce
from plugins.octree.index import Octree
from spatial.cost import CostWeights, TrialTimeout, measure, objective_terms, rescore
from spatial.errors import ParamError

from .tuning_helpers import small_workload

WALL_CLOCK = ("build_ms", "update_ms_per_frame")


def _counters(report):
    values = report.as_dict()
    for key in WALL_CLOCK:
        values.pop(key)
    values["terms"] = {k: v for k, v in values["terms"].items() if k not in ("update", "build")}
    return values


def test_same_params_same_workload_same_counters():
    work = small_workload()
    first = measure(Octree, Octree.Params(), work)
    second = measure(Octree, Octree.Params(), work)
    assert _counters(first) == _counters(second)
    assert first.cost == second.cost


def test_cost_is_the_weighted_sum_of_the_documented_terms():
    work = small_workload()
    weights = CostWeights(pair_test=2.0, rays_per_frame=4.0, frusta_per_frame=3.0, node=0.5)
    report = measure(Octree, {"max_depth": 4}, work, weights)
    expected = (2.0 * report.pair_tests_per_frame
                + 4.0 * (report.nodes_per_ray + report.objects_per_ray)
                + 3.0 * (report.nodes_per_frustum + report.objects_per_frustum)
                + 0.5 * report.nodes)
    assert report.cost == pytest.approx(expected)
    assert sum(report.terms.values()) == pytest.approx(report.cost)
    assert report.frames == 3 and report.rays == 16 and report.frusta == 2


def test_wasted_tests_are_candidates_that_do_not_overlap():
    work = small_workload()
    brute = measure(BruteForce, BruteForce.Params(), work)
    n = len(work.ids)
    assert brute.pairs_all_candidates == n * (n - 1) // 2  # the oracle tests every pair
    assert 0 < brute.pairs_all_overlapping < brute.pairs_all_candidates
    assert brute.wasted_tests_per_frame == pytest.approx(
        brute.pair_tests_per_frame - brute.overlapping_per_frame)
    tree = measure(Octree, Octree.Params(), work)
    # a partition finds the same overlaps with fewer tests than the oracle
    assert tree.overlapping_per_frame == brute.overlapping_per_frame
    assert tree.pair_tests_per_frame < brute.pair_tests_per_frame


def test_rescore_equals_measuring_with_the_other_weights():
    work = small_workload()
    heavy = CostWeights(object_test=10.0)
    measured = measure(Octree, Octree.Params(), work, heavy)
    rescored = rescore(measure(Octree, Octree.Params(), work), heavy)
    assert rescored.cost == pytest.approx(measured.cost)


def test_wall_clock_terms_only_count_when_weighted():
    report = measure(Octree, Octree.Params(), small_workload())
    assert report.terms["update"] == 0 and report.terms["build"] == 0
    assert report.build_ms > 0
    values = report.as_dict()
    terms = objective_terms(values, CostWeights(build_ms=1.0))
    assert terms["build"] == pytest.approx(report.build_ms)
    assert CostWeights(update_ms=1.0).uses_wall_clock() and not CostWeights().uses_wall_clock()


@pytest.mark.parametrize("values,field", [({"pair_test": -1}, "weights.pair_test"),
                                          ({"rays_per_frame": float("nan")}, "weights.rays_per_frame"),
                                          ({"bogus": 1}, "weights.bogus")])
def test_bad_weights_name_the_field(values, field):
    with pytest.raises(ParamError, match=field.replace(".", r"\.")):
        CostWeights.from_dict(values)


def test_a_passed_deadline_stops_between_stages():
    with pytest.raises(TrialTimeout):
        measure(Octree, Octree.Params(), small_workload(), deadline=time.perf_counter() - 1)
