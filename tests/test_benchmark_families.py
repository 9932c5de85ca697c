"""Benchmark scene families, the user-facing operation definitions, the pair floor and checks.

Small scenes only: the harness is under test, not the backends' speed.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

from benchmarks import families
from benchmarks.adapters import Adapter, OurBackend, held_array_bytes
from benchmarks.checks import check_scene
from benchmarks.floor import pair_floor
from benchmarks.peers import FclPeer
from benchmarks.timing import Cell
from benchmarks.workload import make_workload
from spatial.registry import default_registry

from .conftest import shared_file

#: the harness collects garbage before each timed run: see ``earlier_objects_frozen``
pytestmark = pytest.mark.usefixtures("earlier_objects_frozen")


def test_sparse_family_keeps_its_world_at_every_n_and_most_boxes_touch_nothing():
    small = make_workload(2_000, "sparse", queries=1, rays=1)
    large = make_workload(20_000, "sparse", queries=1, rays=1)
    for w in (small, large):
        assert w.hi.max() <= families.SPARSE_WORLD + 2.0 and w.lo.min() >= -2.0
        assert ((w.hi - w.lo) <= 4.0).all()
    assert large.estimated_pairs < 0.01 * large.n


def test_mixed_family_holds_huge_static_boxes_that_never_move():
    w = make_workload(5_000, "mixed", queries=1, rays=1, world=1000.0)
    extent = (w.hi - w.lo).max(axis=1)
    huge = np.flatnonzero(extent >= 0.2 * 1000.0)
    assert len(huge) == families.HUGE_BOXES
    assert not np.isin(huge, w.moved).any()
    assert len(w.moved) == 500


def test_quake_family_tiles_the_level_read_by_the_products_importer():
    shared_file("quake", families.QUAKE_LEVEL.name)
    lo, hi = families._quake_boxes()
    n = 2 * len(lo) + 7
    w = make_workload(n, "quake", queries=1, rays=1)
    assert w.n == n and len(np.unique(w.ids)) == n
    extent = hi.max(axis=0) - lo.min(axis=0)
    # the second copy is the first shifted by one tile step along x, box for box
    shift = w.lo[len(lo):2 * len(lo)] - w.lo[:len(lo)]
    np.testing.assert_allclose(shift, np.tile([extent[0] * (1 + families.TILE_GAP), 0, 0], (len(lo), 1)))


def test_a_missing_level_makes_its_family_unavailable(monkeypatch, tmp_path):
    monkeypatch.setattr(families, "DOOM_WAD", tmp_path / "absent.wad")
    families._doom_boxes.cache_clear()
    try:
        with pytest.raises(families.FamilyUnavailable, match="absent.wad"):
            make_workload(100, "doom", queries=1, rays=1)
    finally:
        families._doom_boxes.cache_clear()


class _CountingAdapter(Adapter):
    """Records the calls the runner makes, so the operation definitions can be checked."""

    label = "counting"

    def __init__(self):
        self.calls = []

    def build(self, ids, lo, hi):
        self.calls.append("build")

    def query_boxes(self, lo, hi):
        self.calls.append(f"box x{len(lo)}")
        return np.zeros(0, dtype=np.int64), np.zeros(len(lo), dtype=np.int64)

    def update(self, index, lo, hi):
        self.calls.append("update")

    def pairs(self):
        self.calls.append("pairs")
        return np.zeros((0, 2), dtype=np.int64)


def test_build_update_and_frame_end_where_a_user_gets_an_answer():
    from tests.test_benchmark_harness import _import_runner

    run = _import_runner()
    w = make_workload(300, "uniform", queries=5, rays=1200, world=100.0)
    adapter = _CountingAdapter()
    args = run.parse_args(["--repeats", "1", "--ops", "update,frame"])
    cells, _ = run.run_implementation(adapter, w, ["build", "update", "frame"], args, run.Predictor(), 0.0)
    assert all(c.status == "ok" for c in cells.values())
    # build and update each end with one small box query; a frame asks for rays (none here)
    assert adapter.calls[:4] == ["build", "box x1", "update", "box x1"]
    assert "pairs" in adapter.calls[4:]
    assert adapter.frame_casts_rays is False


def test_our_backend_is_ready_to_query_when_build_ends():
    adapter = OurBackend("octree", default_registry().backends["octree"])
    w = make_workload(500, "uniform", queries=1, rays=1, world=200.0)
    adapter.build(w.ids, w.lo, w.hi)
    before = held_array_bytes(adapter.index)
    adapter.ready(*w.probe())
    # the octree's packed query copy is made by the first query, and counted in build
    assert held_array_bytes(adapter.index) > before


def test_floor_sorts_the_known_pairs():
    pairs = np.array([[0, 5], [1, 2], [3, 4]], dtype=np.int64)
    cell = pair_floor(pairs, 10, repeats=2, time_limit=1.0)
    assert cell.status == "ok" and len(cell.times) == 2 and cell.check == {"count": 3}


def test_fcl_answers_are_checked_by_count_where_two_objects_share_a_centre():
    pytest.importorskip("fcl")
    w = make_workload(50, "uniform", queries=1, rays=1, world=100.0)
    lo, hi = w.lo.copy(), w.hi.copy()
    lo[1], hi[1] = lo[0], hi[0]  # two coincident objects
    fcl = FclPeer()
    fcl.build(w.ids, lo, hi)
    assert fcl.ids_ambiguous
    ours = OurBackend("octree", default_registry().backends["octree"])
    cells = {"octree": {"pairs": Cell("ok", [1.0], check={"count": 3, "checksum": 1})},
             "fcl": {"pairs": Cell("ok", [1.0], check={"count": 3, "checksum": 2})}}
    lines = check_scene({"cells": cells}, w, [ours, fcl], {})
    assert any("agree" in line and "count only" in line for line in lines)
    cells["fcl"]["pairs"].check["count"] = 4
    assert any("MISMATCH" in line for line in check_scene({"cells": cells}, w, [ours, fcl], {}))


def test_a_saved_run_renders_the_same_report_section(tmp_path):
    from tests.test_benchmark_harness import _import_runner

    run = _import_runner()
    out, raw, again = tmp_path / "RESULTS.md", tmp_path / "raw.json", tmp_path / "AGAIN.md"
    common = ["--sizes", "400", "--layouts", "uniform", "--backends", "grid", "--peers", "boostree",
              "--ops", "build,pairs,box,update,rebuild,frame", "--repeats", "1", "--no-memory"]
    saved_env = dict(os.environ)
    try:
        run.main([*common, "--out", str(out), "--json", str(raw)])
        run.main([*common, "--out", str(again), "--render-json", str(raw)])
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
    text = out.read_text(encoding="utf-8")
    assert "### uniform, N = 400" in text and "| grid |" in text
    assert again.read_text(encoding="utf-8") == text
