"""Opening files by kind, and the scene description the headless commands use."""
from __future__ import annotations

import os

import numpy as np
import pytest

from editor.model.demo import DEMO_PATH, build_demo_scene
from editor.model.loading import demo_document, document_source, load_document
from editor.model.stats import scene_counts
from spatial.errors import PartitionStudioError
from tests.conftest import shared_file


def test_native_and_demo_documents_agree():
    assert load_document(DEMO_PATH).state() == demo_document().state()


def test_a_map_file_goes_through_the_registered_importer():
    path = shared_file("quake", "quake_id1_dm1.map")
    scene = load_document(path)
    assert scene_counts(scene)["brushes"] == 517


def test_unknown_kinds_and_missing_files_name_the_file(tmp_path):
    (tmp_path / "level.xyz").write_text("?")
    with pytest.raises(PartitionStudioError, match=r"level\.xyz: no importer.*\*\.json"):
        load_document(tmp_path / "level.xyz")
    with pytest.raises(PartitionStudioError, match="missing.map: no such file"):
        load_document(tmp_path / "missing.map")
    with pytest.raises(PartitionStudioError, match="missing.xyz: no such file"):
        load_document(tmp_path / "missing.xyz")


def test_a_missing_multi_level_file_is_named_as_missing(tmp_path):
    """`stats freedoom1.wad:E1M1` in a folder without the WAD: the WAD is named as missing."""
    with pytest.raises(PartitionStudioError) as caught:
        load_document(tmp_path / "freedoom1.wad:E1M1")
    assert str(caught.value) == f"{tmp_path / 'freedoom1.wad'}: no such file (asked for its level E1M1)"


def test_document_source_describes_the_indexed_objects():
    scene = build_demo_scene()
    src = document_source(scene, "demo")
    counts = scene_counts(scene)
    assert src.counts["objects"] == counts["objects"] == len(src.ids)
    assert src.counts["triangles"] == 0 and src.counts["segments"] == 0
    np.testing.assert_array_equal(src.ids, scene.indexed_ids())
    assert src.dynamic.sum() == len(scene.point_entity_ids())
    assert (src.lo <= src.hi).all() and len(src.split_planes) > 0
    assert src.backend == scene.settings.backend and src.document is scene


@pytest.mark.parametrize("name", ["level.map", "level.json", "level.obj", "level.wad"])
def test_a_folder_given_as_a_level_is_one_line(tmp_path, name):
    folder = tmp_path / name
    folder.mkdir()
    with pytest.raises(PartitionStudioError) as caught:
        load_document(folder)
    assert str(caught.value) == f"{folder}: is a folder, not a level file"


def test_a_pipe_given_as_a_level_is_refused_without_reading_it(tmp_path):
    pipe = tmp_path / "level.map"
    os.mkfifo(pipe)  # opening it for reading would wait for a writer forever
    with pytest.raises(PartitionStudioError, match="is not a regular file"):
        load_document(pipe)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_an_unreadable_file_is_one_line(tmp_path):
    path = tmp_path / "secret.map"
    path.write_text("{\n}\n")
    path.chmod(0)
    with pytest.raises(PartitionStudioError, match=r"secret.map: cannot read: Permission denied"):
        load_document(path)
