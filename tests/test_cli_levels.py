"""The command line on Doom maps and meshes: map suffix, convex BSP splits, sphere probes."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from editor.cli import run_cli
from plugins.doom_wad.shipped_bsp import load_shipped_bsp
from tests.conftest import shared_file

FREEDOOM1 = Path("/usr/share/games/doom/freedoom1.wad")


def stats(capsys, *argv):
    code = run_cli(["stats", *argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def need_freedoom():
    if not FREEDOOM1.exists():
        pytest.skip(f"{FREEDOOM1} is absent: install the Debian package 'freedoom'")


def test_wad_map_suffix_and_convex_bsp_report_splits(capsys):
    need_freedoom()
    count = stats(capsys, f"{FREEDOOM1}:E1M1")
    assert count["scene"]["segments"] == 812  # LINEDEFS of E1M1 (11368 bytes / 14)
    assert count["index"]["backend"] == "octree", "a WAD map opens on the default tree"
    doom_style = ["--backend", "bsp", "--param", "space=2d"]
    count = stats(capsys, f"{FREEDOOM1}:E1M1", *doom_style)
    assert count["index"]["backend"] == "bsp" and count["index"]["params"]["space"] == "2d"
    convex = stats(capsys, f"{FREEDOOM1}:E1M1", *doom_style, "--param", "leaf=convex",
                   "--param", "max_depth=64")
    index = convex["index"]
    assert index["params"]["leaf"] == "convex"
    assert index["nonconvex_leaves"] == 0
    assert index["splits"] == index["seg_pieces"] - index["segments"] > 0
    shipped = load_shipped_bsp(FREEDOOM1, "E1M1").stats()
    # the same kind of tree as the node builder's: within a factor two on every count
    for key in ("nodes", "leaves", "splits"):
        assert shipped[key] / 2 < index[key] < shipped[key] * 2
    assert convex["pairs"]["overlapping"] == count["pairs"]["overlapping"]


def test_unknown_map_is_a_one_line_error(capsys):
    need_freedoom()
    code = run_cli(["stats", f"{FREEDOOM1}:MAP77", "--json"])
    _, err = capsys.readouterr()
    assert code == 2 and "no map 'MAP77'" in err and "E1M1" in err


def test_probe_radius_reports_candidates(capsys):
    path = shared_file("meshes", "oa_dm5_world.obj")
    assert stats(capsys, str(path))["index"]["backend"] == "octree", "the default tree"
    report = stats(capsys, str(path), "--backend", "triangle_octree", "--probe-radius", "16", "--seed", "2")
    assert report["index"]["backend"] == "triangle_octree"
    assert report["scene"]["triangles"] == report["scene"]["objects"] > 0
    probe = report["probe"]
    assert probe["radius"] == 16 and probe["probes"] == 256 and probe["seed"] == 2
    assert probe["mean_hits"] <= probe["mean_candidates"] <= probe["max_candidates"]
    bigger = stats(capsys, str(path), "--backend", "triangle_octree", "--probe-radius", "64",
                   "--seed", "2")["probe"]
    assert bigger["mean_hits"] > probe["mean_hits"]


def test_negative_probe_radius_is_refused(capsys):
    code = run_cli(["stats", "--random", "50", "--probe-radius", "-1", "--json"])
    _, err = capsys.readouterr()
    assert code == 2 and "probe radius" in err
