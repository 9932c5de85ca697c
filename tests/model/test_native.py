"""Native scene files: exact round trip, atomic save, and errors naming the JSON field."""
from __future__ import annotations

import json
import os

import pytest

from editor.model import AddObjects, SetSettings, Transform
from editor.model.faces import Face
from editor.model.native import (
    FORMAT_VERSION,
    NativeFormatError,
    dumps_scene,
    load_scene,
    loads_scene,
    save_scene,
)
from editor.model.shapes import box_brush
from spatial.errors import PartitionStudioError

from .helpers import small_scene


def _odd_scene():
    """A scene with awkward numbers and every face attribute set."""
    scene, stack, ids = small_scene()
    stack.push(Transform([ids["ramp"], ids["player"]], delta=(0.1, -1 / 3, 1e-7)))
    w = ids["world"]
    oid = scene.allocate_ids(1)[0]
    brush = box_brush(w, (1.5, 2.25, -0.0), (9.75, 10, 3e5))
    faces = list(brush.faces)
    faces[0] = Face(faces[0].points, 'name with "quotes" and ünïcode', (0.5, -16), 22.5, (0.25, -1.0),
                    (0.0, 1.0, 0.0), (0.0, 0.0, -1.0), ("0", "1", "2.5"))
    from editor.model.brushes import Brush
    stack.push(AddObjects({oid: Brush(w, tuple(faces))}))
    stack.push(SetSettings(metadata={"map_format": "standard", "header": ["// Game: Quake"]}))
    return scene


def test_round_trip_is_exact(tmp_path):
    scene = _odd_scene()
    path = tmp_path / "level.json"
    save_scene(scene, path)
    again = load_scene(path)
    assert again.state()[0] == scene.state()[0]
    assert again.settings == scene.settings
    assert again.next_id == scene.next_id
    assert path.read_text(encoding="utf-8") == dumps_scene(again)


def test_file_is_diff_friendly():
    text = dumps_scene(_odd_scene())
    doc = json.loads(text)
    assert list(doc) == ["format", "version", "next_id", "settings", "entities", "brushes"]
    lines = text.splitlines()
    face_lines = [ln for ln in lines if ln.lstrip().startswith('{"points"')]
    assert len(face_lines) == sum(len(b["faces"]) for b in doc["brushes"])
    assert all(json.loads(ln.strip().rstrip(",")) for ln in face_lines)  # one face, one line
    assert "16.0" not in text and "-0.0" in text  # whole numbers plain, the sign of zero kept


def test_atomic_save_keeps_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    scene = _odd_scene()
    path = tmp_path / "level.json"
    save_scene(scene, path)
    old = path.read_bytes()
    scene2, stack, ids = small_scene()

    def broken_fsync(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space"):
        save_scene(scene2, path)
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["level.json"]  # no temporary file left behind

    def broken_replace(src, dst):
        raise OSError(13, "Permission denied")
    monkeypatch.undo()
    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="Permission"):
        save_scene(scene2, path)
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["level.json"]


def _valid_doc():
    scene, _, _ = small_scene()
    return json.loads(dumps_scene(scene))


def _error(doc_or_text) -> NativeFormatError:
    text = doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text)
    with pytest.raises(NativeFormatError) as info:
        loads_scene(text, "scene.json")
    assert isinstance(info.value, PartitionStudioError)
    return info.value


def _mutated(mutate):
    doc = _valid_doc()
    mutate(doc)
    return doc


@pytest.mark.parametrize("mutate,field,needle", [
    (lambda d: d["brushes"][3]["faces"][2]["points"].__setitem__(1, [1, 2]),
     "brushes[3].faces[2].points[1]", "expected 3 numbers"),
    (lambda d: d["brushes"][0]["faces"][0]["points"][0].__setitem__(2, "x"),
     "brushes[0].faces[0].points[0][2]", "expected a number"),
    (lambda d: d["brushes"][1].pop("faces"), "brushes[1].faces", "missing field"),
    (lambda d: d["brushes"][1].__setitem__("colour", 1), "brushes[1].colour", "unknown field"),
    (lambda d: d["brushes"][0].__setitem__("entity", 999), "brushes[0].entity", "no entity with id 999"),
    (lambda d: d["brushes"][0].__setitem__("id", 0), "brushes[0].id", "already used"),
    (lambda d: d["entities"][0].__setitem__("kind", "mesh"), "entities[0].kind", "expected one of"),
    (lambda d: d["entities"][2]["properties"].__setitem__(0, ["classname"]),
     "entities[2].properties[0]", "pair"),
    (lambda d: d["entities"][2]["properties"][1].__setitem__(1, "1 2"),
     "entities[2].properties[1][1]", "origin"),
    (lambda d: d["brushes"][2]["faces"].__setitem__(slice(3, None), []), "brushes[2].faces", "at least 4"),
    (lambda d: d["brushes"][0]["faces"][0].__setitem__("texture", 5), "brushes[0].faces[0].texture",
     "expected a string"),
    (lambda d: d["brushes"][0]["faces"][0].__setitem__("u_axis", [1, 0, 0]),
     "brushes[0].faces[0].v_axis", "missing field"),
    (lambda d: d["brushes"][0]["faces"][1].__setitem__("rotation", True),
     "brushes[0].faces[1].rotation", "expected a number"),
    (lambda d: d.__setitem__("next_id", 2), "next_id", "greater than every id"),
    (lambda d: d["entities"][1].__setitem__("id", 1 << 40), "entities[1].id", "too large"),
    (lambda d: d.pop("settings"), "settings", "missing field"),
    (lambda d: d.__setitem__("version", 0), "version", ">= 1"),
    (lambda d: d.__setitem__("format", "something-else"), "format", "partition-studio-scene"),
    (lambda d: d["settings"].__setitem__("params", []), "settings.params", "expected an object"),
    (lambda d: d["brushes"][0]["faces"].pop(), "brushes[0]", "open"),
])
def test_malformed_files_name_the_field(mutate, field, needle):
    err = _error(_mutated(mutate))
    assert err.field == field
    assert str(err).startswith(f"scene.json: {field}: ")
    assert needle in str(err)


def test_nan_and_infinity_are_refused_with_their_field():
    doc = _valid_doc()
    text = json.dumps(doc).replace('"rotation": 0', '"rotation": NaN', 1)
    err = _error(text)
    assert err.field == "brushes[0].faces[0].rotation" and "NaN" in str(err)
    text = json.dumps(doc).replace('"metadata": {}', '"metadata": {"a": [Infinity]}', 1)
    assert _error(text).field == "settings.metadata.a[0]"


def test_bad_json_reports_line_and_column():
    err = _error('{"format": "partition-studio-scene",\n  "version": 1,,}')
    assert str(err).startswith("scene.json:2:16: invalid JSON")


def test_future_version_is_refused_clearly():
    doc = _valid_doc()
    doc["version"] = FORMAT_VERSION + 1
    doc["brushes"] = "whatever a newer version writes"
    err = _error(doc)
    assert err.field == "version" and "newer" in str(err)


def test_an_unknown_backend_is_refused_naming_the_field_and_known_params_are_checked():
    doc = _valid_doc()
    doc["settings"] = {"backend": "from-a-plugin", "params": {"depth": 3}, "metadata": {}}
    err = _error(doc)
    assert err.field == "settings.backend"
    assert "unknown backend 'from-a-plugin' (known: brute, " in str(err)
    doc["settings"] = {"backend": "brute", "params": {"depth": 3}, "metadata": {}}
    err = _error(doc)
    assert err.field == "settings.params.depth"


def test_a_failed_load_builds_nothing(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xff\xfe not text")
    with pytest.raises(NativeFormatError, match="not UTF-8"):
        load_scene(path)
    with pytest.raises(NativeFormatError, match="cannot read"):
        load_scene(tmp_path / "missing.json")


def test_objects_the_format_cannot_store_are_refused_not_dropped(tmp_path):
    scene, stack, ids = small_scene()

    class Marker:  # some other kind of scene object
        pass
    scene._objects[scene.allocate_ids(1)[0]] = Marker()  # bypass the checks on purpose
    with pytest.raises(ValueError, match="Marker"):
        save_scene(scene, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()
