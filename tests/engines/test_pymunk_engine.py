"""Chipmunk2D (pymunk) accepts the exported spatial-hash settings and finds the same contacts.

The settings come from ``tune --engine chipmunk``'s own text (read back as the engine's C call),
applied with ``pymunk.Space.use_spatial_hash``; a correct index must report exactly the box
overlaps the default tree reports (``bb_query``), checked against every pair. Speed is measured
in ``benchmarks/engine_check.py``, not here.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.pymunk_scene import build_space, from_record, generated, touching, touching_brute
from spatial.engines import engine_profile
from spatial.engines.chipmunk_search import TABLE_PRIMES
from spatial.engines.profile import LevelFrame
from spatial.engines.tuning import tune_engine
from tests.engines.parsers import PARSERS

FREEDOOM = Path("/usr/share/games/doom/freedoom1.wad")


def _exported_hash(level, max_trials=6):
    work = level.workload
    frame = LevelFrame.of(work.lo, work.hi, 32.0, 2)
    tuned = tune_engine(engine_profile("chipmunk"), work, frame, budget_s=60, max_trials=max_trials,
                        source=level.name)
    parsed = PARSERS["chipmunk"](tuned.render())
    return parsed["dim"], parsed["count"]


def _check_level(level):
    dim, count = _exported_hash(level)
    # the docs' table (ten cells per object) or one of the table sizes Chipmunk searched
    assert dim > 0 and (count == 10 * len(level.workload.ids) or count in TABLE_PRIMES)
    tree, tree_shapes = build_space(level)
    hashed, hash_shapes = build_space(level, (dim, count))
    assert len(hashed.shapes) == len(tree.shapes) == level.bodies - sum(
        1 for a, b in level.segments if (a == b).all())
    expected = touching_brute(tree, tree_shapes)
    assert expected  # the level has overlapping boxes to find
    assert touching(hashed, hash_shapes) == touching(tree, tree_shapes) == expected
    before = [s.body.position for s in hash_shapes]
    for _ in range(3):
        hashed.step(1 / 60)
    assert any(s.body.position != p for s, p in zip(hash_shapes, before))


@pytest.mark.slow
def test_freedoom_e1m1_hash_settings_are_honoured():
    if not FREEDOOM.exists():
        pytest.skip("Freedoom is not installed (Debian package freedoom)")
    from editor.model.index_input import index_input
    from editor.model.loading import open_level

    scene = open_level(f"{FREEDOOM}:E1M1").document
    _check_level(from_record("freedoom1 E1M1", index_input(scene)))


def test_generated_level_hash_settings_are_honoured():
    _check_level(generated(600, seed=3))


def test_chipmunk_times_its_tree_and_the_hash_and_the_advice_follows_it():
    from spatial.engines.chipmunk_run import measure_in_chipmunk
    from spatial.engines.profile import ENGINE_NOISE, EngineSettings

    level = generated(200, seed=1)
    run = measure_in_chipmunk(level.workload, (2.0, 2000), steps=3, rounds=2)
    assert run["steps"] == 6 and run["tree_ms"] > 0 and run["hash_ms"] > 0
    profile = engine_profile("chipmunk")
    frame = LevelFrame.of(level.workload.lo, level.workload.hi)
    settings = EngineSettings(profile, frame, {"dim": 2.0}, cost=1.0, alternative_cost=0.5)
    assert settings.prefer_alternative  # the model alone prefers the tree here
    settings.engine_run = {"tree_ms": 10.0, "hash_ms": 10.0 / (1 + 2 * ENGINE_NOISE), "steps": 6}
    assert not settings.prefer_alternative  # the engine's clear verdict wins over the model
    settings.engine_run = {"tree_ms": 10.0, "hash_ms": 9.9, "steps": 6}
    assert settings.prefer_alternative  # within noise: keep the engine's default tree
    text = profile.render(settings)
    assert "/* cpSpaceUseSpatialHash(space, 2, " in text


def test_dim_and_count_are_settled_by_chipmunks_own_timing(monkeypatch):
    """The engine has the last word on both knobs: the search times table sizes as well as cell
    sizes in Chipmunk, and the kept values are the docs' unless they beat them by more than the
    noise in every confirming round; the file says what was kept and reads back."""
    from spatial.engines import chipmunk_run
    from spatial.engines.chipmunk import ENGINE_SHARE
    from spatial.engines.profile import ENGINE_NOISE

    timed: list[tuple[tuple[float, int], int, float]] = []
    real = chipmunk_run.ChipmunkBench.ratio

    def recording(self, setting, steps):
        ratio = real(self, setting, steps)
        timed.append(((float(setting[0]), int(setting[1])), steps, ratio))
        return ratio

    monkeypatch.setattr(chipmunk_run.ChipmunkBench, "ratio", recording)
    level = generated(600, seed=3)
    work = level.workload
    frame = LevelFrame.of(work.lo, work.hi, 32.0, 2)
    tuned = tune_engine(engine_profile("chipmunk"), work, frame, budget_s=6, max_trials=4,
                        source=level.name)
    profile = tuned.settings.profile
    docs = (float(profile.knob("dim").start), int(profile.knob("count").start))
    assert docs == (pytest.approx(frame.ground_size), 10 * len(work.ids))
    screened = {setting for setting, _, _ in timed}
    assert {count for _, count in screened} - {docs[1]}, "table sizes were searched"
    assert {count for _, count in screened} <= set(TABLE_PRIMES) | {docs[1]}
    assert len({dim for dim, _ in screened}) > 2, "cell sizes were searched"
    kept = (float(tuned.settings.values["dim"]), int(tuned.settings.values["count"]))
    if kept != docs:  # kept only on a clear win in every confirming round (twice the steps)
        steps = min(n for _, n, _ in timed)
        confirming = [r for s, n, r in timed if s == kept and n == 2 * steps]
        assert len(confirming) == 3 and all(r * (1 + ENGINE_NOISE) < 1 for r in confirming)
    assert any("screened in Chipmunk" in note for note in tuned.settings.notes)
    parsed = PARSERS["chipmunk"](tuned.render())
    assert parsed["dim"] == pytest.approx(kept[0], rel=1e-5) and parsed["count"] == kept[1]
    assert tuned.settings.engine_run is not None and tuned.settings.engine_run["steps"] > 0
    # the engine's share of the budget: the model's search had the rest
    assert tuned.result.budget_s == pytest.approx(6 * (1 - ENGINE_SHARE))


def test_the_bench_times_hash_settings_on_live_spaces_and_rebuilds_them_after_a_while():
    """A setting is switched on the trial space (no new space per setting); past
    MAX_SIMULATED_STEPS both spaces are built afresh, so the timed state stays near the level's
    start."""
    from spatial.engines.chipmunk_run import MAX_SIMULATED_STEPS, ChipmunkBench

    level = generated(200, seed=1)
    bench = ChipmunkBench(level.workload, (2.0, 2000))
    assert bench.step_s > 0 and bench.build_s > 0
    ratio = bench.ratio((4.0, 769), 10)
    assert ratio > 0 and bench.rebuilds == 0
    bench.ratio((4.0, 389), MAX_SIMULATED_STEPS - 10)
    assert bench.rebuilds == 1
