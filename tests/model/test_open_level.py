"""The one loading path: warnings for broken brushes, WAD parts, settings kept by a .map,
file types from the registry, and a tuned-parameters file choosing its backend."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from editor.cli import run_cli
from editor.model import SetSettings, UndoStack
from editor.model.loading import (
    LoadCancelled,
    level_file_types,
    level_parts,
    open_level,
    save_level,
    stores_settings,
)
from spatial.errors import PartitionStudioError
from spatial.registry import default_registry

FREEDOOM1 = Path("/usr/share/games/doom/freedoom1.wad")

CUBE = """( {x0} 0 0 ) ( {x0} 1 0 ) ( {x0} 0 1 ) T 0 0 0 1 1
( {x1} 0 0 ) ( {x1} 0 1 ) ( {x1} 1 0 ) T 0 0 0 1 1
( 0 0 0 ) ( 0 0 1 ) ( 1 0 0 ) T 0 0 0 1 1
( 0 8 0 ) ( 1 8 0 ) ( 0 8 1 ) T 0 0 0 1 1
( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T 0 0 0 1 1
( 0 0 8 ) ( 0 1 8 ) ( 1 0 8 ) T 0 0 0 1 1
"""


def _map_text(extra_keys: str = "", broken: bool = False) -> str:
    brushes = "{\n" + CUBE.format(x0=0, x1=8) + "}\n"
    brushes += "{\n" + CUBE.format(x0=16, x1=24) + "}\n"
    if broken:  # both x planes face the same way: no closed solid
        brushes += "{\n" + CUBE.format(x0=40, x1=40) + "}\n"
    return ('{\n"classname" "worldspawn"\n' + extra_keys + brushes + "}\n"
            '{\n"classname" "info_player_start"\n"origin" "4 4 24"\n}\n')


def test_a_broken_brush_is_left_out_with_a_warning_naming_its_line(tmp_path):
    path = tmp_path / "damaged.map"
    path.write_text(_map_text(broken=True))
    loaded = open_level(path)
    assert len(loaded.document.brush_ids()) == 2
    assert len(loaded.warnings) == 1
    assert loaded.warnings[0].startswith(f"{path}:19:") and "brush kept as written, not indexed" in loaded.warnings[0]


def test_the_command_line_reports_the_warning_and_goes_on(tmp_path, capsys):
    path = tmp_path / "damaged.map"
    path.write_text(_map_text(broken=True))
    assert run_cli(["stats", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["scene"]["brushes"] == 2
    assert err.count("\n") == 1 and "warning:" in err and "brush kept as written, not indexed" in err


def test_a_malformed_file_is_one_line_naming_the_position(tmp_path):
    path = tmp_path / "broken.map"
    path.write_text('{\n"classname" "worldspawn"\n( 0 0 0 ) ( 1 0 0 ) oops\n}\n')
    with pytest.raises(PartitionStudioError) as err:
        open_level(path)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{path}:3:")


def test_cancel_gives_up_before_reading(tmp_path):
    path = tmp_path / "level.map"
    path.write_text(_map_text())
    with pytest.raises(LoadCancelled):
        open_level(path, cancel=lambda: True)


def test_a_map_keeps_backend_and_parameters_as_worldspawn_keys(tmp_path):
    path = tmp_path / "level.map"
    path.write_text(_map_text())
    doc = open_level(path).document
    assert doc.settings.backend == "octree", "a real tree by default"
    UndoStack(doc).push(SetSettings(backend="kdtree", params={"leaf_size": 3, "split": "sah"}))
    out = tmp_path / "saved.map"
    save_level(doc, out)
    text = out.read_text()
    assert '"_ps_backend" "kdtree"' in text and '"_ps_param_leaf_size" "3"' in text
    again = open_level(out).document
    assert again.settings.backend == "kdtree"
    assert again.settings.params == {"leaf_size": 3, "split": "sah"}
    world = next(again[i] for i in again.entity_ids() if again[i].classname == "worldspawn")
    assert not any(k.startswith("_ps_") for k, _ in world.properties), "keys became settings"
    assert again.state() == open_level(out).document.state()


def test_a_bad_parameter_key_names_the_worldspawn_line(tmp_path):
    path = tmp_path / "level.map"
    path.write_text(_map_text('"_ps_backend" "kdtree"\n"_ps_param_leaf_size" "-4"\n'))
    with pytest.raises(PartitionStudioError, match=rf"^{path}:1:\d+: worldspawn: .*leaf_size"):
        open_level(path)


def test_which_formats_store_settings(tmp_path):
    assert stores_settings(None) and stores_settings(tmp_path / "a.json")
    assert stores_settings(tmp_path / "a.map")
    assert not stores_settings(tmp_path / "a.obj")
    wad = tmp_path / "a.wad"
    wad.write_bytes(b"")
    assert not stores_settings(f"{wad}:E1M1")


def test_file_types_list_every_importer_and_exporter_after_all_levels():
    registry = default_registry()
    for saving, items in ((False, registry.importers.values()),
                          (True, registry.exporters_of_kind("scene").values())):
        types = level_file_types(saving=saving)
        assert types[0][0] == "All levels"
        every = set(types[0][1])
        assert "*.json" in every
        for item in items:
            assert set(item.patterns) <= every
            assert tuple(item.patterns) in [patterns for _, patterns in types[1:]]


def test_a_wad_lists_its_maps_with_counts():
    if not FREEDOOM1.exists():
        pytest.skip(f"{FREEDOOM1} is absent: install the Debian package 'freedoom'")
    parts = level_parts(FREEDOOM1)
    assert [p["name"] for p in parts[:3]] == ["E1M1", "E1M2", "E1M3"]
    doc = open_level(f"{FREEDOOM1}:E1M2").document
    assert parts[1]["linedefs"] == len(doc.segment_ids())
    assert parts[1]["things"] == len(doc.point_entity_ids())
    assert level_parts(f"{FREEDOOM1}:E1M2") is None, "a named map is one level"


def test_a_params_file_selects_its_backend(tmp_path, capsys):
    params = tmp_path / "params.json"
    params.write_text(json.dumps({"backend": "kdtree", "params": {"leaf_size": 3}}))
    assert run_cli(["stats", "--random", "300", "--params", str(params), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["index"]["backend"] == "kdtree" and report["index"]["params"]["leaf_size"] == 3
    assert run_cli(["stats", "--random", "300", "--params", str(params), "--backend", "octree"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "parameters are for backend 'kdtree', not 'octree'" in err


@pytest.mark.parametrize("suffix", [".map", ".json"])
def test_parameters_are_parsed_once_from_the_file_to_the_live_index(tmp_path, monkeypatch, suffix):
    import spatial.params
    from editor.model import IndexSync

    path = tmp_path / "level.map"
    path.write_text(_map_text('"_ps_backend" "kdtree"\n"_ps_param_leaf_size" "3"\n'))
    if suffix == ".json":
        save_level(open_level(path).document, tmp_path / "level.json")
        path = tmp_path / "level.json"
    calls = []
    real = spatial.params.parse_params
    monkeypatch.setattr(spatial.params, "parse_params",
                        lambda *a, **k: calls.append(a[0].__name__) or real(*a, **k))
    doc = open_level(path).document
    sync = IndexSync(doc)
    assert sync.index.name == "kdtree" and sync.index.params.leaf_size == 3
    assert len(calls) == 1, f"parsed by the reader only, not again on the way: {calls}"
