"""``tune`` on the command line: writes parameters ``stats --params`` reads, in every format."""
from __future__ import annotations

import json

import pytest

from editor.cli import run_cli
from tests.conftest import shared_file


def run(capsys, *argv):
    code = run_cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_tune_writes_json_that_stats_reads(capsys, tmp_path):
    out = tmp_path / "p.json"
    code, text, err = run(capsys, "tune", "--demo", "--backend", "octree", "--budget", "3",
                          "--out", str(out), "--json")
    assert code == 0, err
    report = json.loads(text)
    assert report["trials"] >= 1 and report["format"] == "json"
    assert report["elapsed_s"] <= 3.5
    assert report["cost"] <= report["default_cost"]
    doc = json.loads(out.read_text())
    assert doc["params"] == report["params"] and doc["scene"]["hash"].startswith("sha256:")
    code, text, err = run(capsys, "stats", "--demo", "--params", str(out), "--json")
    assert code == 0, err
    assert json.loads(text)["index"]["params"] == doc["params"]


@pytest.mark.parametrize("fmt,suffix,needle", [("c-header", ".h", "#define PS_KDTREE_LEAF_SIZE"),
                                               ("unreal-ini", ".ini", "p.AABBMaxChildrenInLeaf="),
                                               ("godot", ".godot", "no Godot counterpart")])
@pytest.mark.slow
def test_formats_by_flag_or_suffix(capsys, tmp_path, fmt, suffix, needle):
    for args in (["--format", fmt, "--out", str(tmp_path / "by_flag.txt")],
                 ["--out", str(tmp_path / f"by_suffix{suffix}")]):
        code, text, err = run(capsys, "tune", "--demo", "--backend", "kdtree", "--budget", "1",
                              *args, "--json")
        assert code == 0, err
        report = json.loads(text)
        assert report["format"] == fmt
        assert needle in open(report["out"], encoding="utf-8").read()


@pytest.mark.parametrize("argv,needle", [
    (["--budget", "0"], "--budget"),
    (["--weight", "pair_test=x"], "--weight pair_test"),
    (["--weight", "bogus=1"], "weights.bogus"),
    (["--backend", "nope"], "unknown backend 'nope'"),
    (["--backend", "octree", "--all-backends"], "not allowed with"),
])
def test_bad_arguments_are_one_line_errors(capsys, tmp_path, argv, needle):
    code, text, err = run(capsys, "tune", "--demo", *argv, "--out", str(tmp_path / "p.json"))
    assert code == 2 and text == ""
    assert needle in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "p.json").exists()


@pytest.mark.slow
def test_all_backends_skips_brute_and_ranks_the_rest(capsys, tmp_path):
    out = tmp_path / "best.json"
    code, text, err = run(capsys, "tune", "--demo", "--all-backends", "--budget", "12",
                          "--out", str(out), "--json")
    assert code == 0, err
    report = json.loads(text)
    named = {r["backend"] for r in report["ranking"]} | set(report["not_evaluated"])
    assert "brute" not in named and {"octree", "kdtree", "bsp"} <= named
    costs = [r["cost"] for r in report["ranking"]]
    assert costs == sorted(costs) and report["backend"] == report["ranking"][0]["backend"]
    assert json.loads(out.read_text())["comparison"]["ranking"][0]["backend"] == report["backend"]


@pytest.mark.slow
def test_real_level_tuned_cost_is_no_worse_than_defaults(capsys, tmp_path):
    level = shared_file("quake", "quake_id1_dm1.map")
    out = tmp_path / "dm1.json"
    code, text, err = run(capsys, "tune", str(level), "--backend", "octree", "--budget", "6",
                          "--out", str(out), "--json")
    assert code == 0, err
    report = json.loads(text)
    assert report["cost"] <= report["default_cost"]
    assert report["elapsed_s"] <= 6.5


def test_param_holds_a_value_through_the_search(capsys, tmp_path):
    out = tmp_path / "q.json"
    code, text, err = run(capsys, "tune", "--demo", "--backend", "kdtree", "--budget", "1",
                          "--param", "split=median", "--out", str(out), "--json")
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert doc["params"]["split"] == "median"
    assert all(h["params"]["split"] == "median" for h in doc["search"]["history"])


def test_a_recording_alone_is_tuned_on_its_own_objects(capsys, tmp_path):
    """A game's live session is a recording with no level file: tune measures its objects."""
    recording = tmp_path / "session.jsonl"
    code, text, err = run(capsys, "simulate", "--demo", "--frames", "12", "--save-recording",
                          str(recording), "--json")
    assert code == 0, err
    out = tmp_path / "p.json"
    code, text, err = run(capsys, "tune", "--recording", str(recording), "--backend", "grid",
                          "--max-trials", "3", "--budget", "30", "--out", str(out), "--json")
    assert code == 0, err
    report = json.loads(text)
    assert report["source"] == str(recording) and report["backend"] == "grid"
    document = json.loads(out.read_text())
    from editor.model.frame_format import load_frame_lines

    played = load_frame_lines(recording)
    objects = len(played.static_ids) + len(played.at(0).ids)
    assert document["scene"]["objects"] == objects


def test_without_a_level_or_a_recording_tune_asks_for_one(capsys, tmp_path):
    code, text, err = run(capsys, "tune", "--out", str(tmp_path / "p.json"))
    assert code == 2 and text == "" and "--recording" in err


def test_a_level_whose_frames_are_over_the_work_budget_is_one_line(capsys, tmp_path, monkeypatch):
    """Every trial's frames are held to the work budget: over it, tune names the level, the
    frame and the budget in one line."""
    monkeypatch.setenv("PARTITION_STUDIO_WORK_BUDGET_PAIRS", "1")
    code, text, err = run(capsys, "tune", "--demo", "--backend", "grid", "--max-trials", "2",
                          "--budget", "30", "--out", str(tmp_path / "p.json"), "--json")
    assert code == 4 and text == "" and not (tmp_path / "p.json").exists()  # the budget status
    line = err.strip()
    assert len(line.splitlines()) == 1
    assert line.startswith("partition-studio: error: demo: grid: frame ")
    assert "of the tuning workload" in line and "work budget" in line
