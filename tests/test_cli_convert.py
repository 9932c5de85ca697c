"""``convert IN OUT``: .map <-> native by extension, for pipelines."""
from __future__ import annotations

import json

from editor.cli import run_cli
from editor.model.loading import load_document

from .conftest import shared_file


def test_map_to_native_to_map_keeps_every_brush_face_and_entity(tmp_path, capsys):
    source = shared_file("quake", "quake_id1_dm1.map")
    native, back = tmp_path / "dm1.json", tmp_path / "dm1.map"
    assert run_cli(["convert", str(source), str(native)]) == 0
    assert run_cli(["convert", str(native), str(back), "--json"]) == 0
    capsys.readouterr()
    assert run_cli(["stats", str(back), "--backend", "brute", "--json"]) == 0
    scene = json.loads(capsys.readouterr().out)["scene"]
    assert (scene["brushes"], scene["faces"], scene["entities"]) == (517, 3080, 133)
    original, round_trip = load_document(source), load_document(back)
    assert sorted(original.indexed_ids().tolist()) == sorted(round_trip.indexed_ids().tolist())
    for i in original.indexed_ids():
        assert original[int(i)] == round_trip[int(i)]


def test_demo_native_to_map_and_refusals(tmp_path, capsys):
    demo = tmp_path / "demo.json"
    from editor.model.loading import demo_document
    from editor.model.native import save_scene

    save_scene(demo_document(), demo)
    out = tmp_path / "demo.map"
    assert run_cli(["convert", str(demo), str(out)]) == 0
    before = out.read_bytes()
    assert run_cli(["convert", str(demo), str(out)]) == 2          # exists, no --force
    assert "exists" in capsys.readouterr().err
    assert run_cli(["convert", str(demo), str(tmp_path / "demo.xyz")]) == 2
    assert "no exporter" in capsys.readouterr().err
    assert not (tmp_path / "demo.xyz").exists()
    bad = tmp_path / "bad.map"
    bad.write_text('{\n"classname" "worldspawn"\n{\n( 0 0 0 ) ( 1 1 1 ) ( 2 2 2 ) T 0 0 0 1 1\n')
    assert run_cli(["convert", str(bad), str(out), "--force"]) == 2
    err = capsys.readouterr().err
    assert "bad.map:" in err and len(err.strip().splitlines()) == 1
    assert out.read_bytes() == before                                # nothing half-written
