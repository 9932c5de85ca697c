"""The tuner: never worse than the defaults, deterministic, within budget, cancellable."""
from __future__ import annotations

import math
import time

import pytest

from plugins.kdtree import KdTree
from plugins.octree.index import Octree
from spatial.cost import measure
from spatial.params import param_specs
from spatial.tuner import CancelToken, ScaleHints, compare_backends, search_space, tune

from .tuning_helpers import SlowBuild, small_workload

#: time the search may run over its budget (one poll of an overdue child, loaded machines)
MARGIN_S = 0.5


def test_tuned_cost_is_never_above_the_defaults_and_is_reproducible():
    work = small_workload()
    result = tune(Octree, work, budget_s=60, seed=3, max_trials=10)
    assert result.stop_reason == "max_trials" and len(result.trials) == 10
    assert result.defaults.index == 0 and result.defaults.params == Octree.Params().__dict__
    assert result.best.cost <= result.defaults.cost
    # the recorded cost is what the chosen parameters really cost under the same model
    assert measure(Octree, result.best.params, work).cost == pytest.approx(result.best.cost)
    assert result.best.cost == min(t.cost for t in result.trials if t.ok)


def test_same_seed_and_trial_count_give_the_same_trials():
    work = small_workload()
    runs = [tune(KdTree, work, budget_s=60, seed=7, max_trials=8) for _ in range(2)]
    assert [t.params for t in runs[0].trials] == [t.params for t in runs[1].trials]
    assert [t.cost for t in runs[0].trials] == [t.cost for t in runs[1].trials]
    other = tune(KdTree, work, budget_s=60, seed=8, max_trials=8)
    assert [t.params for t in other.trials] != [t.params for t in runs[0].trials]


@pytest.mark.parametrize("isolation", ["none", "process"])
def test_a_one_second_budget_is_honoured(isolation):
    work = small_workload(n=300, frames=5)
    began = time.perf_counter()
    result = tune(Octree, work, budget_s=1.0, seed=0, isolation=isolation)
    searched = time.perf_counter() - began - result.warmup_s
    assert result.stop_reason == "budget"
    assert len(result.trials) >= 2
    assert searched <= 1.0 + MARGIN_S


def test_an_uninterruptible_build_is_killed_at_the_end_of_the_budget():
    began = time.perf_counter()
    result = tune(SlowBuild, small_workload(n=20), budget_s=1.0, isolation="process", warm=False)
    assert time.perf_counter() - began <= 1.0 + MARGIN_S
    assert result.best is None and result.trials[0].status == "timeout"


def test_cancel_stops_before_the_next_trial():
    token = CancelToken()
    seen = []

    def on_trial(progress):
        seen.append((progress.trial.index, progress.best.index if progress.best else None,
                     len(progress.trials)))
        if len(progress.trials) == 3:
            token.cancel()

    result = tune(Octree, small_workload(), budget_s=60, cancel=token, on_trial=on_trial)
    assert result.cancelled and result.stop_reason == "cancelled"
    assert len(result.trials) == 3
    assert [s[0] for s in seen] == [0, 1, 2] and [s[2] for s in seen] == [1, 2, 3]


def test_search_space_stays_in_bounds_and_follows_the_declared_scale():
    hints = ScaleHints(small=16.0, extent=4096.0)
    for cls in (Octree, KdTree):
        specs = {s.name: s for s in param_specs(cls.Params)}
        for dim in search_space(cls.Params, hints):
            spec = specs[dim.name]
            assert spec.tunable
            if dim.choices:
                assert set(dim.choices) == set(spec.choices)
                continue
            for u in (0.0, 0.13, 0.5, 0.87, 1.0):
                value = dim.value(u)
                assert spec.lo <= value <= spec.hi and isinstance(value, spec.kind)
            if spec.scale == "log" and spec.unit != "units":
                assert dim.log
                # log spacing: the middle of the range is the geometric mean
                mid = dim.value(0.5)
                assert mid == pytest.approx(math.sqrt(dim.lo * dim.hi), rel=0.05, abs=1)
    names = [d.name for d in search_space(Octree.Params, hints)]
    assert "out_of_bounds" not in names  # declared tunable=False
    min_size = next(d for d in search_space(Octree.Params, hints) if d.name == "min_size")
    assert min_size.lo == pytest.approx(1.0) and min_size.hi == pytest.approx(2048.0)


def test_rejected_combinations_are_recorded_and_never_chosen():
    result = tune(Octree, small_workload(), budget_s=60, seed=0, max_trials=12)
    invalid = [t for t in result.trials if t.status == "invalid"]
    assert invalid, "this seed samples max_lifespan_initial above max_lifespan_cap"
    assert all("max_lifespan" in t.message for t in invalid)
    assert result.best.status == "ok"


@pytest.mark.slow
def test_compare_backends_ranks_and_reports_what_it_could_not_evaluate():
    slow = type("SlowerBuild", (SlowBuild,), {"name": "slower_build_for_tests"})
    outcome = compare_backends([slow, Octree], small_workload(), budget_s=3.0,
                               isolation="process")
    assert outcome.order[0] == "octree"  # the cheap probe goes first
    assert [r.backend for r in outcome.results] == ["octree"]
    assert "slower_build_for_tests" in outcome.not_evaluated
    assert outcome.best.best.cost <= outcome.best.defaults.cost


@pytest.mark.slow
def test_a_trial_far_slower_than_the_defaults_is_abandoned(monkeypatch):
    import spatial.tuner
    from spatial.tuner import TRIAL_CAP_MIN_S

    from .tuning_helpers import QuickDefaultSlowElsewhere

    # a small factor keeps the cap at its minimum even when a loaded machine slows the defaults
    # trial down several times; the rule under test (cap = max(factor x defaults, minimum)) is the same
    factor = 2.0
    monkeypatch.setattr(spatial.tuner, "TRIAL_CAP_FACTOR", factor)
    result = tune(QuickDefaultSlowElsewhere, small_workload(n=20), budget_s=30, seed=0,
                  max_trials=4, isolation="process")
    assert result.defaults.ok
    cap = max(factor * result.defaults.seconds, TRIAL_CAP_MIN_S)
    slow = [t for t in result.trials if t.params["delay_ms"] > 1000 * (cap + MARGIN_S)]
    assert slow, "the sample reaches the slow end of the range"
    for trial in slow:
        assert trial.status == "timeout" and trial.seconds <= cap + MARGIN_S
    assert result.best.params["delay_ms"] < 1000 * (cap + MARGIN_S)


def test_fixed_parameters_stay_out_of_the_search():
    from plugins.quadtree import Quadtree

    result = tune(Quadtree, small_workload(), budget_s=60, seed=0, max_trials=5,
                  fixed={"plane": "xz", "max_depth": "6"})
    assert all(t.params["plane"] == "xz" and t.params["max_depth"] == 6 for t in result.trials)
    assert "max_depth" not in [d["name"] for d in result.space]
    with pytest.raises(Exception, match="max_depth"):
        tune(Quadtree, small_workload(), budget_s=5, fixed={"max_depth": 99})


def _over_budget_from_frame_two(frame, tests, overlapping, seconds):
    from editor.model.work_budget import WorkBudgetError

    if frame >= 2:
        raise WorkBudgetError(f"frame {frame} of the tuning workload: {tests:,} candidate pair "
                              "tests in one frame is over the work budget", frame)


@pytest.mark.parametrize("isolation", ["none", "process"])
def test_a_trial_over_the_work_budget_is_refused_at_that_frame(isolation):
    """A frame of a trial that needs more work than the budget stops that trial with the
    budget's line (the frame named), like a structure over the memory budget; the search goes
    on and never chooses it."""
    import dataclasses

    workload = dataclasses.replace(small_workload(), check_frame=_over_budget_from_frame_two)
    assert len(workload.frames) >= 2
    result = tune(KdTree, workload, budget_s=20, max_trials=3, isolation=isolation)
    assert result.trials and all(t.status == "refused" for t in result.trials)
    assert all("frame 2 of the tuning workload" in t.message for t in result.trials)
    assert result.best is None
