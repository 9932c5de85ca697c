"""Brushes bounding no solid are kept as written: listed, counted, not indexed, written back."""
from __future__ import annotations

import pytest

from editor.model.invalid_brushes import describe, invalid_brushes
from editor.model.loading import open_level, save_level
from spatial.errors import UnsupportedContentError
from spatial.registry import Registry
from tests.invalid_brush_maps import BROKEN, broken_map_text


@pytest.fixture()
def broken_map(tmp_path):
    path = tmp_path / "broken.map"
    path.write_text(broken_map_text())
    return path


def _texts(scene) -> list[str]:
    return [r["text"] for r in invalid_brushes(scene)]


def test_each_broken_brush_is_held_verbatim_with_its_line_and_reason(broken_map):
    loaded = open_level(broken_map)
    records = invalid_brushes(loaded.document)
    assert [r["text"].split("// ")[1].split("\n")[0] for r in records] == list(BROKEN)
    source = broken_map.read_text()
    for record in records:
        assert record["text"] in source  # verbatim, comments and spacing included
        line = source.splitlines()[record["line"] - 1]
        assert line.startswith("{  // "), line
        assert record["entity"] == 0 and record["reason"]
        assert str(broken_map) in describe(record)
    assert len(loaded.warnings) == len(BROKEN)
    # not objects of the scene: the index never sees them
    assert len(loaded.document.brush_ids()) == 1
    assert {r["id"] for r in records}.isdisjoint(loaded.document.indexed_ids().tolist())


def test_map_save_writes_them_back_unchanged_in_place(broken_map, tmp_path):
    scene = open_level(broken_map).document
    out = tmp_path / "out.map"
    save_level(scene, out)
    text = out.read_text()
    for brush in _texts(scene):
        assert brush in text
    # in file order, after the good brush and before the point entity
    positions = [text.index(b) for b in _texts(scene)]
    assert positions == sorted(positions)
    assert text.index("rock", 0) < positions[0] < text.index("info_player_start")
    again = open_level(out).document
    assert _texts(again) == _texts(scene)
    assert [r["position"] for r in invalid_brushes(again)] == [1, 2, 3, 4]


def test_native_json_keeps_them_for_a_later_map(broken_map, tmp_path):
    scene = open_level(broken_map).document
    native = tmp_path / "level.json"
    save_level(scene, native)
    back = open_level(native).document
    assert _texts(back) == _texts(scene)
    out = tmp_path / "again.map"
    save_level(back, out)
    assert _texts(open_level(out).document) == _texts(scene)


def test_an_exporter_that_cannot_hold_them_refuses_and_writes_nothing(broken_map, tmp_path):
    written = []
    registry = Registry()
    registry.add_exporter("boxes", ("*.box",), lambda scene, path: written.append(path),
                          kind="scene")
    scene = open_level(broken_map).document
    with pytest.raises(UnsupportedContentError, match=r"4 brush\(es\).*broken.map:\d+:1"):
        save_level(scene, tmp_path / "x.box", registry=registry)
    assert written == []


def test_stats_counts_them(broken_map):
    from editor.model.loading import document_source

    counts = document_source(open_level(broken_map).document, "x").counts
    assert counts["invalid_brushes"] == len(BROKEN) and counts["brushes"] == 1
