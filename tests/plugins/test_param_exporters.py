"""Tuned-parameter exporters: JSON round trip with field-path errors, engine snippets, atomicity."""
from __future__ import annotations

import json

import pytest

from plugins.octree.index import Octree
from plugins.param_exporters import UNREAL_MAP, c_header_text, godot_text, save_json, unreal_ini_text
from spatial.registry import default_registry
from spatial.tuned_params import (
    ParamsFormatError,
    check_params_document,
    load_params_document,
    tuned_params_document,
)
from spatial.tuner import tune
from tests.spatial.tuning_helpers import small_workload

SCENE = {"source": "test.map", "hash": "sha256:" + "ab" * 32, "objects": 120}


@pytest.fixture(scope="module")
def octree_result():
    return tune(Octree, small_workload(), budget_s=60, seed=1, max_trials=6)


@pytest.fixture()
def document(octree_result):
    return tuned_params_document(octree_result, SCENE, date="2026-01-02T03:04:05+00:00")


def test_json_round_trip_restores_the_parameters(tmp_path, document, octree_result):
    path = tmp_path / "p.json"
    default_registry().exporter_for(path, kind="params").save(document, path)
    loaded, params = load_params_document(path)
    assert loaded == json.loads(json.dumps(document))
    assert params == Octree.Params(**octree_result.best.params)
    assert loaded["backend"] == "octree" and loaded["version"] == 1
    assert loaded["cost"]["tuned"] <= loaded["cost"]["defaults"]
    assert loaded["scene"] == SCENE and loaded["units"]["min_size"] == "units"
    assert loaded["cost_model"]["seed"] == 1 and loaded["tool"]["version"]
    history = loaded["search"]["history"]
    assert [h["index"] for h in history] == list(range(6)) and history[0]["phase"] == "default"
    assert history[0]["cost"] == loaded["cost"]["defaults"]


@pytest.mark.parametrize("change,field", [
    (lambda d: d["params"].__setitem__("max_depth", 99), "params.max_depth"),
    (lambda d: d["params"].__setitem__("bogus", 1), "params.bogus"),
    (lambda d: d.__setitem__("version", 7), "version"),
    (lambda d: d.pop("backend"), "backend"),
    (lambda d: d.__setitem__("backend", "nope"), "backend"),
    (lambda d: d.__setitem__("params", []), "params"),
    (lambda d: d["scene"].__setitem__("hash", "md5:1"), "scene.hash"),
])
def test_bad_documents_name_the_field(tmp_path, document, change, field):
    change(document)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ParamsFormatError) as err:
        load_params_document(path)
    assert err.value.field == field
    assert str(err.value).startswith(f"{path}: {field}:")


def test_invalid_json_names_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"format":\n  oops}', encoding="utf-8")
    with pytest.raises(ParamsFormatError, match=r"broken\.json:2:3: invalid JSON"):
        load_params_document(path)


def test_a_failed_write_leaves_the_old_file(tmp_path, document):
    path = tmp_path / "p.json"
    save_json(document, path)
    before = path.read_bytes()
    document["cost"]["tuned"] = float("nan")  # not JSON: the write fails before replacing
    with pytest.raises(ValueError):
        save_json(document, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["p.json"]


def test_c_header_defines_every_parameter(document):
    text = c_header_text(document)
    assert "#ifndef PS_OCTREE_TUNED_PARAMS_H" in text and text.rstrip().endswith("*/")
    for name, value in document["params"].items():
        line = next(row for row in text.splitlines() if row.startswith(f"#define PS_OCTREE_{name.upper()} "))
        literal = line.split(" ", 2)[2]
        assert (json.loads(literal) == value) if isinstance(value, str) else float(literal) == value


def test_unreal_ini_maps_depth_and_leaf_size_and_lists_the_rest():
    doc = {"backend": "kdtree", "params": {"split": "sah", "leaf_size": 6, "max_depth": 20,
                                           "traversal_cost": 1.0}}
    text = unreal_ini_text(doc)
    assert "[ConsoleVariables]" in text
    assert "p.AABBMaxChildrenInLeaf=6" in text.splitlines()
    assert "p.AABBMaxTreeDepth=20" in text.splitlines()
    assert "; no Unreal counterpart: split=sah, traversal_cost=1" in text


def test_godot_maps_an_absolute_bvh_margin_only():
    absolute = godot_text({"backend": "bvh", "params": {"margin": 0.25, "margin_mode": "absolute",
                                                         "build_method": "incremental", "sah_bins": 16}})
    assert "3d/godot_physics/bvh_collision_margin=0.25" in absolute.splitlines()
    relative = godot_text({"backend": "bvh", "params": {"margin": 0.25, "margin_mode": "relative"}})
    assert "bvh_collision_margin" not in relative.replace("; no Godot counterpart", "")
    assert "no Godot counterpart: margin=0.25, margin_mode=relative" in relative


def test_exporters_are_registered_by_file_pattern():
    registry = default_registry()
    names = {p: registry.exporter_for(p, kind="params").name
             for p in ("a.json", "a.h", "a.hpp", "DefaultEngine.ini", "project.godot")}
    assert names == {"a.json": "json", "a.h": "c-header", "a.hpp": "c-header",
                     "DefaultEngine.ini": "unreal-ini", "project.godot": "godot"}


def test_check_accepts_what_stats_reads(document):
    params = check_params_document(json.loads(json.dumps(document)))
    assert params.max_depth == document["params"]["max_depth"]


# --------------------------------------------------------------------------- parsed back
def _ini_sections(text: str) -> dict[str, dict[str, str]]:
    """``{section: {key: raw value}}`` of an ini-style text (``;`` comments skipped)."""
    sections: dict[str, dict[str, str]] = {}
    current = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(";"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        key, sep, value = line.partition("=")
        assert sep and current is not None, f"not a setting: {line!r}"
        current[key] = value
    return sections


def _same_value(raw: str, value) -> bool:
    if isinstance(value, bool):
        return raw in ({"1", "true"} if value else {"0", "false"})
    if isinstance(value, (int, float)):
        return float(raw) == float(value)
    return raw in (value, json.dumps(value))


BVH_DOC = {"backend": "bvh", "params": {"margin": 0.25, "margin_mode": "absolute",
                                        "build_method": "incremental", "sah_bins": 16}}


def test_c_header_parses_back_to_every_value(document):
    defines = {}
    for line in c_header_text(document).splitlines():
        if line.startswith("#define PS_OCTREE_") and not line.endswith("_H"):
            _, name, literal = line.split(" ", 2)
            defines[name.removeprefix("PS_OCTREE_").lower()] = literal
    assert set(defines) == set(document["params"])
    for name, value in document["params"].items():
        assert _same_value(defines[name], value), name


@pytest.mark.parametrize("doc_name", ["tuned-octree", "bvh"])
def test_unreal_ini_parses_back_to_every_value(document, doc_name):
    doc = document if doc_name == "tuned-octree" else BVH_DOC
    text = unreal_ini_text(doc)
    sections = _ini_sections(text)
    values = sections[f"PartitionStudio.{doc['backend']}"]
    assert set(values) == set(doc["params"])
    for name, value in doc["params"].items():
        assert _same_value(values[name], value), name
    unmapped = [n for n in doc["params"] if n not in UNREAL_MAP.get(doc["backend"], {})]
    for name in unmapped:  # a comment for each value Chaos cannot take
        assert f"; {name}: no Chaos console variable" in text.splitlines()
    if doc_name == "tuned-octree":
        assert sections["ConsoleVariables"]["p.AABBMaxTreeDepth"] == str(doc["params"]["max_depth"])


@pytest.mark.parametrize("doc_name", ["tuned-octree", "bvh"])
def test_godot_parses_back_to_every_value(document, doc_name):
    doc = document if doc_name == "tuned-octree" else BVH_DOC
    text = godot_text(doc)
    sections = _ini_sections(text)
    backend = doc["backend"]
    values = {key.removeprefix(f"{backend}/"): raw
              for key, raw in sections["partition_studio"].items()}
    assert set(values) == set(doc["params"])
    for name, value in doc["params"].items():
        assert _same_value(values[name], value), name
    if doc_name == "bvh":
        assert float(sections["physics"]["3d/godot_physics/bvh_collision_margin"]) == 0.25
        assert "; margin: no Godot physics setting" not in text
    else:  # Godot's physics has no octree setting: every value says so
        for name in doc["params"]:
            assert f"; {name}: no Godot physics setting" in text.splitlines()
