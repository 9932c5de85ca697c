"""``compare``: both sides measured on the same work, the ratios and the one-line errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from editor.cli import run_cli
from editor.model.compare.report import FIGURES, figure
from tests.conftest import shared_file

FREEDOOM1 = Path("/usr/share/games/doom/freedoom1.wad")
E1M1 = f"{FREEDOOM1}:E1M1"
DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo_level.json"


def compare(capsys, *argv):
    code = run_cli(["compare", *argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def need_freedoom():
    if not FREEDOOM1.exists():
        pytest.skip(f"{FREEDOOM1} is absent: install the Debian package 'freedoom'")


def stats_index(capsys, path, backend, *params):
    code = run_cli(["stats", path, "--backend", backend, *params, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def check_ratios(report):
    for key, _label in FIGURES:
        a, b = figure(report["a"], key), figure(report["b"], key)
        expected = None if not a else round(b / a, 4)
        assert report["ratios"][key] == expected, key


@pytest.mark.slow
def test_doom_map_compares_our_bsp_with_the_shipped_one(capsys):
    need_freedoom()
    report = compare(capsys, E1M1, "--frames", "3")
    assert (report["a"]["backend"], report["b"]["backend"]) == ("bsp", "shipped_bsp")
    check_ratios(report)
    # the same queries on both sides
    for kind in ("rays", "frusta", "boxes"):
        assert report["a"]["queries"][kind]["count"] == report["b"]["queries"][kind]["count"] > 0
    # both trees hold every object and find the same overlapping pairs
    assert report["a"]["objects"] == report["b"]["objects"] == 1050
    assert report["a"]["pair_overlapping"] == report["b"]["pair_overlapping"]
    # the figures are those of the tree 'stats' builds from the same document
    for side, backend in (("a", "bsp"), ("b", "shipped_bsp")):
        index = stats_index(capsys, E1M1, backend)["index"]
        for key in ("nodes", "leaves", "max_depth", "references", "memory_bytes"):
            assert report[side][key] == index[key], (side, key)


@pytest.mark.slow
def test_two_parameter_sets_of_one_backend(capsys):
    need_freedoom()
    report = compare(capsys, E1M1, "--a", "octree", "--b", "octree", "--b-param", "max_depth=2",
                     "--frames", "2", "--seed", "3")
    assert report["b"]["params"]["max_depth"] == 2 != report["a"]["params"]["max_depth"]
    assert report["b"]["max_depth"] <= 2 < report["a"]["max_depth"]
    assert report["workload"]["seed"] == 3
    check_ratios(report)


@pytest.mark.slow
def test_e3m4_octree_against_bvh(capsys):
    path = shared_file("quake", "librequake_e3m4_valve220.map")
    report = compare(capsys, str(path), "--a", "octree", "--b", "bvh", "--frames", "2")
    assert (report["a"]["backend"], report["b"]["backend"]) == ("octree", "bvh")
    assert report["a"]["objects"] == report["b"]["objects"] > 4000
    assert report["a"]["pair_overlapping"] == report["b"]["pair_overlapping"]
    check_ratios(report)


def test_bad_backend_and_parameter_are_one_line_errors(capsys):
    source = str(DEMO)
    code = run_cli(["compare", source, "--a", "nosuch", "--json"])
    _, err = capsys.readouterr()
    assert code == 2 and "--a: no backend named 'nosuch'" in err and len(err.splitlines()) == 1
    code = run_cli(["compare", source, "--a", "octree", "--b-param", "max_depth=oops", "--json"])
    _, err = capsys.readouterr()
    assert code == 2 and "max_depth" in err and len(err.splitlines()) == 1
    code = run_cli(["compare", source, "--frames", "-1", "--json"])
    _, err = capsys.readouterr()
    assert code == 2 and "--frames" in err


def test_demo_level_text_table_names_both_sides(capsys):
    code = run_cli(["compare", str(DEMO), "--a", "octree", "--b", "bvh", "--frames", "2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "A        octree" in out and "B        bvh" in out
    assert all(label in out for _key, label in FIGURES)


def test_recording_frames_are_played_into_both_sides(capsys, tmp_path):
    recording = tmp_path / "demo.npz"
    assert run_cli(["simulate", "--demo", "--frames", "12", "--save-recording", str(recording),
                    "--json"]) == 0
    capsys.readouterr()
    report = compare(capsys, str(DEMO), "--a", "octree", "--b", "bvh", "--recording",
                     str(recording), "--frames", "8")
    assert report["workload"]["motion"] == "recording, 8 frames"
    a, b = report["a"]["frames"], report["b"]["frames"]
    assert [f["frame"] for f in a] == [f["frame"] for f in b] and len(a) == 8
    # the same motion: the same pairs really overlap in both, frame by frame
    assert [f["overlapping"] for f in a] == [f["overlapping"] for f in b]
    assert report["a"]["frame_candidates"] == pytest.approx(sum(f["candidates"] for f in a) / 8, abs=1e-3)
    check_ratios(report)
