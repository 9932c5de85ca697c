"""``tune --engine``: every engine's file on a real level, read back with that engine's dialect."""
from __future__ import annotations

import json

import pytest

from editor.cli import run_cli
from spatial.engines import ENGINE_NAMES, engine_profile
from spatial.engines.profile import ENGINE_NOISE
from tests.conftest import shared_file
from tests.engines.parsers import PARSERS


def run(capsys, *argv):
    code = run_cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_engine_list_names_every_engine(capsys):
    code, text, err = run(capsys, "tune", "--engine", "list", "--json")
    assert code == 0, err
    assert [row["name"] for row in json.loads(text)["engines"]] == list(ENGINE_NAMES)
    code, text, _ = run(capsys, "tune", "--engine", "list")
    assert code == 0 and all(name in text for name in ENGINE_NAMES)


@pytest.mark.parametrize("argv,needle", [
    (["--engine", "nope", "--demo"], "unknown engine 'nope'"),
    (["--engine", "godot"], "give a level FILE"),
    (["--engine", "godot", "--demo", "--backend", "bvh"], "cannot go with --backend"),
    (["--engine", "godot", "--demo", "--units-per-metre", "0"], "--units-per-metre"),
])
def test_bad_engine_arguments_are_one_line_errors(capsys, tmp_path, argv, needle):
    code, text, err = run(capsys, "tune", *argv, "--out", str(tmp_path / "out.txt"))
    assert code == 2 and text == ""
    assert needle in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_tuned_file_on_e1m1_reads_back(capsys, tmp_path, name):
    level = shared_file("quake", "quake_id1_e1m1.map")
    out = tmp_path / f"settings{engine_profile(name).suffix}"
    code, text, err = run(capsys, "tune", str(level), "--engine", name, "--budget", "10",
                          "--out", str(out), "--json")
    assert code == 0, err
    report = json.loads(text)
    assert report["engine"] == name and report["units_per_metre"] == 32.0
    replaced = any("replaced by the engine's own timing" in n for n in report["notes"])
    if not replaced:  # the model's pick: never above the engine's defaults in the model
        assert report["cost"] <= report["default_cost"] * (1 + 0.005)
    parsed = PARSERS[name](out.read_text(encoding="utf-8"))
    for key, knob in report["knobs"].items():
        if key in parsed:
            want = knob["value"]
            assert parsed[key] == (pytest.approx(want, rel=1e-5) if isinstance(want, float) else want)
    text = out.read_text(encoding="utf-8")
    for knob in report["knobs"].values():  # every value names its source and engine default
        assert knob["source"] in text
    if name == "chipmunk":  # the tree is modelled beside the hash and the better one recommended
        assert report["alternative_cost"] is not None
        assert parsed["enabled"] == (not report["prefer_alternative"])
        timing = report["engine_run"]  # pymunk is installed with the test extra: Chipmunk decides
        assert timing is not None
        clearly_faster = timing["hash_ms"] * (1 + ENGINE_NOISE) < timing["tree_ms"]
        assert report["prefer_alternative"] == (not clearly_faster)
