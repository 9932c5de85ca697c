"""Ties resolved the way a person would: a value that makes no difference stays at its default,
and the plateau says so."""
from __future__ import annotations

from plugins.octree import Octree
from spatial.tuner import Dimension, Trial, resolve_ties, tune
from tests.spatial.tuning_helpers import small_workload

DEPTH = Dimension("max_depth", int, 1.0, 30.0)
LOOSE = Dimension("looseness", float, 1.0, 4.0)


def _trial(index, depth, looseness, cost):
    return Trial(index, "start", {"max_depth": depth, "looseness": looseness}, "ok", cost, {}, 0.1)


def test_a_depth_beyond_the_trees_own_stays_at_the_default():
    # a tree 7 levels deep: every max_depth >= 7 costs the same; the search met 28 first
    trials = [_trial(0, 16, 1.0, 120.0), _trial(1, 28, 1.5, 100.0), _trial(2, 7, 1.5, 100.0),
              _trial(3, 3, 1.5, 140.0), _trial(4, 16, 1.5, 100.2), _trial(5, 30, 2.5, 130.0)]
    best = trials[1]
    chosen, plateau = resolve_ties(trials, best, [DEPTH, LOOSE], {"max_depth": 16, "looseness": 1.0})
    assert chosen.params == {"max_depth": 16, "looseness": 1.5}
    (entry,) = plateau
    assert entry["name"] == "max_depth" and entry["lo"] == 7 and entry["hi"] == 28
    assert "any max_depth from 7 to 28 gives the same cost" in entry["text"]


def test_a_plateau_reaching_the_top_of_the_range_is_open_ended():
    trials = [_trial(0, 16, 1.0, 50.0), _trial(1, 7, 1.0, 50.0), _trial(2, 30, 1.0, 50.1),
              _trial(3, 4, 1.0, 90.0)]
    chosen, plateau = resolve_ties(trials, trials[2], [DEPTH, LOOSE], {"max_depth": 16, "looseness": 1.0})
    assert chosen is trials[0]
    assert plateau[0]["text"].startswith("any max_depth \u2265 7 gives the same cost")


def test_a_real_difference_is_kept():
    trials = [_trial(0, 16, 1.0, 100.0), _trial(1, 7, 1.0, 80.0), _trial(2, 16, 1.0, 100.0)]
    chosen, plateau = resolve_ties(trials, trials[1], [DEPTH, LOOSE], {"max_depth": 16, "looseness": 1.0})
    assert chosen is trials[1] and plateau == []


def test_the_search_settles_unneeded_changes_back_to_the_defaults():
    # looseness, lifespans and depth all change little on this small scene: whatever the chosen
    # trial changes must be needed (putting it back costs more than the tolerance)
    work = small_workload(n=80, frames=2)
    result = tune(Octree, work, budget_s=60, seed=0, max_trials=40, warm=True)
    defaults = result.trials[0].params
    best = result.best
    limit = best.cost * (1 + result.tie_tolerance)
    for name, value in best.params.items():
        if value == defaults[name]:
            continue
        reset = {**best.params, name: defaults[name]}
        same = [t for t in result.trials if t.params == reset and t.ok]
        assert not same or same[0].cost > limit, f"{name}={value} changed for nothing"


def test_a_budgeted_search_settles_back_towards_the_defaults():
    work = small_workload(n=80, frames=2)
    result = tune(Octree, work, budget_s=3.0, seed=1)
    defaults = result.trials[0].params
    settled = [t for t in result.trials if t.phase == "settle"]
    assert result.best.params == defaults or settled or result.stop_reason != "budget"
    limit = result.best.cost * (1 + result.tie_tolerance)
    for t in settled:  # every reset the search kept costs no more than the chosen trial allows
        if t is result.best:
            assert t.cost <= limit
    changed = sum(result.best.params[k] != v for k, v in defaults.items())
    tied = [t for t in result.trials if t.ok and t.cost <= limit]
    assert all(sum(t.params[k] != v for k, v in defaults.items()) >= changed for t in tied)
