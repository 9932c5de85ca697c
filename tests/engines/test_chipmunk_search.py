"""The Chipmunk hash search's structure, on a stand-in for Chipmunk's timing (no clocks read).

What is searched (cell sizes and Chipmunk's table sizes), the rule that keeps a setting (faster
than the docs' values by more than the engine's noise in every confirming round, else the docs'
values), held knobs, the budget, and the exported text read back with Chipmunk's call syntax.
"""
from __future__ import annotations

import pytest

from spatial.engines import engine_profile
from spatial.engines.chipmunk_search import CONFIRM_ROUNDS, TABLE_PRIMES, candidate_tables, search_hash, table_size
from spatial.engines.profile import ENGINE_NOISE, LevelFrame
from spatial.engines.tuning import default_settings
from tests.engines.parsers import PARSERS

DOCS = (10.0, 10_500)  # 1,050 objects: ten cells each, a table of 12,289


class StandIn:
    """Ratios from a fixed landscape ``ratio_of(setting, call)``; records every call."""

    def __init__(self, ratio_of, clock=None, seconds_per_call=0.0):
        self.ratio_of, self.calls, self.clock, self.seconds = ratio_of, [], clock, seconds_per_call

    def ratio(self, setting, steps):
        self.calls.append((setting, steps))
        if self.clock is not None:
            self.clock.now += self.seconds
        return self.ratio_of(setting, len(self.calls))


class Clock:
    now = 0.0

    def __call__(self):
        return self.now


def test_table_sizes_are_chipmunks_primes():
    assert table_size(10_500) == 12_289 and table_size(12_289) == 12_289 and table_size(1) == 5
    assert table_size(200_040) == 393_241
    tables = candidate_tables(10_500)
    assert tables[0] == 12_289 and set(tables) <= set(TABLE_PRIMES)
    assert min(tables) == 389 and max(tables) == 24_593  # five halvings below, one doubling above


def test_a_clear_win_on_both_knobs_is_found_and_kept():
    win = (20.0, 1_543)  # twice the docs' cell size, a table of 1,543 cells

    def landscape(setting, call):
        if setting == win:
            return 0.8
        return 0.9 if setting[0] == 20.0 else 1.0  # the cell size alone helps a little

    timer = StandIn(landscape)
    choice = search_hash(timer, DOCS, model_dim=None, budget_s=100, step_s=0.001, clock=Clock())
    assert choice.kept == win and choice.gain == pytest.approx(0.2)
    counts = {count for (_, count), _ in timer.calls}
    assert counts - {DOCS[1]} and counts - {DOCS[1]} <= set(TABLE_PRIMES)  # count was searched
    assert choice.rounds[win] == [0.8] * CONFIRM_ROUNDS
    assert all(setting != DOCS for setting, _ in timer.calls)  # never timed against itself
    assert "dim 20, count 1543 beats the docs' values" in choice.note()


def test_a_gain_within_the_noise_keeps_the_docs_values():
    timer = StandIn(lambda setting, call: 1 / (1 + ENGINE_NOISE) + 0.001)
    choice = search_hash(timer, DOCS, model_dim=12.0, budget_s=100, step_s=0.001, clock=Clock())
    assert choice.kept == DOCS and not choice.rounds and choice.gain == 0.0
    assert (12.0, DOCS[1]) in choice.screened  # the model's pick is a candidate
    assert "the docs' values are kept" in choice.note() and "best: dim" in choice.note()


def test_one_lost_confirming_round_keeps_the_docs_values():
    screened_win = (5.0, DOCS[1])
    confirming = iter([0.8, 0.97, 0.8])  # the second round is within the noise

    def landscape(setting, call):
        if setting == screened_win:
            return 0.8 if not any(s == screened_win for s, _ in timer.calls[:-1]) else next(confirming)
        return 1.0

    timer = StandIn(landscape)
    choice = search_hash(timer, DOCS, model_dim=None, budget_s=100, step_s=0.001, clock=Clock())
    assert choice.kept == DOCS
    assert choice.rounds[screened_win] == [0.8, 0.97]  # stopped at the lost round
    steps = min(n for _, n in timer.calls)
    assert [n for s, n in timer.calls if s == screened_win][1:] == [2 * steps, 2 * steps]


@pytest.mark.parametrize("held", ["dim", "count"])
def test_a_held_knob_is_not_searched(held):
    timer = StandIn(lambda setting, call: 1.0)
    search_hash(timer, DOCS, model_dim=7.0, budget_s=100, step_s=0.001, held=frozenset({held}),
                clock=Clock())
    index = 0 if held == "dim" else 1
    assert timer.calls and {setting[index] for setting, _ in timer.calls} == {DOCS[index]}


def test_the_search_stops_at_its_budget():
    clock = Clock()
    timer = StandIn(lambda setting, call: 0.5, clock=clock, seconds_per_call=1.0)
    choice = search_hash(timer, DOCS, model_dim=None, budget_s=5, step_s=0.001, clock=clock)
    # a block starts only when the last one's time still fits: screening within 60 % of the
    # budget, confirming within the budget (blocks here take a second whatever their steps)
    assert len(choice.screened) == 3 and clock.now <= 5
    assert "stopped" in choice.stop_reason and choice.kept == DOCS  # unconfirmed: not kept


def test_the_exported_call_carries_both_knobs_and_reads_back():
    frame = LevelFrame.of(*_boxes(), 32.0, 2)
    settings = default_settings(engine_profile("chipmunk"), frame, source="t")
    assert settings.values["count"] == 10 * frame.objects
    settings.values.update(dim=64.0, count=1_543)
    text = settings.profile.render(settings)
    parsed = PARSERS["chipmunk"](text)
    assert parsed == {"dim": 64.0, "count": 1_543, "enabled": True}
    assert "count: engine default none cells" in text and "tuned in the engine itself" in text
    assert "Chipmunk allocates 1543 cells" in text


def test_the_docs_cell_size_is_the_ground_plane_median():
    lo, hi = _boxes()
    frame = LevelFrame.of(lo, hi, 32.0, 2)  # tall thin walls: 4 x 1 across, 100 high
    assert frame.median_size == 100.0 and frame.ground_size == 4.0
    profile = default_settings(engine_profile("chipmunk"), frame).profile
    assert profile.knob("dim").start == 4.0


def _boxes():
    import numpy as np

    lo = np.array([[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [20.0, 5.0, 0.0]])
    hi = lo + np.array([4.0, 1.0, 100.0])
    return lo, hi


def test_the_engine_gets_what_the_budget_has_left(monkeypatch):
    """tune_engine hands Chipmunk only the time the model's search left of the budget, so the
    whole stays within it; the model's search had its share."""
    import time

    from spatial.engines import chipmunk
    from spatial.engines.tuning import tune_engine
    from tests.spatial.tuning_helpers import small_workload

    monkeypatch.setattr(chipmunk.ChipmunkProfile, "engine_share", lambda self: 0.7)
    asked = []

    def refine(self, settings, workload, budget_s, held=frozenset()):
        asked.append((time.perf_counter(), budget_s, held))

    monkeypatch.setattr(chipmunk.ChipmunkProfile, "refine_in_engine", refine)
    monkeypatch.setattr(chipmunk.ChipmunkProfile, "measure_in_engine", lambda *a: None)
    work = small_workload(n=60, frames=2)
    frame = LevelFrame.of(work.lo, work.hi, 1.0, 2)
    total = 60.0
    # the model's kernels compiled first (an empty cache on a loaded machine took longer than
    # any budget share): a compile cannot be cut short, and the time it takes is not the point
    tune_engine(engine_profile("chipmunk"), work, frame, budget_s=total, max_trials=1,
                fixed={"dim": 2.0})
    asked.clear()
    began = time.perf_counter()
    # three trials end the model's search well inside its share; the engine gets the rest
    tuned = tune_engine(engine_profile("chipmunk"), work, frame, budget_s=total, max_trials=3,
                        fixed={"dim": 2.0})
    (called, budget, held), = asked
    assert tuned.result.budget_s == pytest.approx(total * 0.3)
    assert 0 < budget and (called - began) + budget <= total
    assert held == frozenset({"dim"})
