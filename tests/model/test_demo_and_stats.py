"""The demo level: committed file equals a fresh build and shows every feature; statistics."""
from __future__ import annotations

import numpy as np

from editor.model import IndexSync
from editor.model.demo import DEMO_PATH, build_demo_scene
from editor.model.native import dumps_scene, load_scene
from editor.model.stats import scene_counts

from .helpers import private_registry, small_scene


def test_committed_demo_file_equals_a_fresh_build():
    assert DEMO_PATH.read_text(encoding="utf-8") == dumps_scene(build_demo_scene()), \
        "resources/demo_level.json is stale: run `python -m editor.model.demo`"
    assert load_scene(DEMO_PATH).state() == build_demo_scene().state()


def test_demo_shows_every_feature():
    scene = build_demo_scene()
    classes = [scene[e].classname for e in scene.entity_ids()]
    assert classes[0] == "worldspawn"
    for wanted in ("info_player_start", "info_player_deathmatch", "light", "func_door", "func_group"):
        assert wanted in classes
    assert any(c.startswith("monster_") for c in classes)
    assert any(c.startswith("item_") for c in classes) and any(c.startswith("weapon_") for c in classes)
    tb = {scene[e].get("_tb_type") for e in scene.entity_ids()}
    assert {"_tb_layer", "_tb_group"} <= tb
    assert scene.find_entities(_tb_layer="1")  # members refer to the layer by id
    normals = np.concatenate([scene[b].planes()[0] for b in scene.brush_ids()])
    non_axial = ~np.isclose(np.abs(normals).max(axis=1), 1.0)
    assert non_axial.sum() >= 10
    assert all(f.u_axis is not None for b in scene.brush_ids() for f in scene[b].faces)
    for b in scene.brush_ids():  # every brush a real solid
        assert scene[b].solid.volume() > 0
    assert scene.selection == frozenset()


def test_scene_counts_follow_their_definitions():
    scene, stack, ids = small_scene()
    counts = scene_counts(scene)
    assert counts == {
        "brushes": 4, "entities": 4, "brush_entities": 2, "faces": 6 + 5 + 7 + 6,
        "objects": 6, "invalid_brushes": 0, "bounds": [[-256.0, -256.0, -16.0], [256.0, 256.0, 128.0]]}
    sync = IndexSync(scene, registry=private_registry())
    assert counts["objects"] == len(sync.index)


def test_demo_counts_are_consistent():
    scene = build_demo_scene()
    counts = scene_counts(scene)
    assert counts["objects"] == counts["brushes"] + len(scene.point_entity_ids())
    assert counts["entities"] == len(scene.point_entity_ids()) + 5  # world, layer, group, door, trigger
    assert counts["brush_entities"] == 5
    assert counts["bounds"] == [[-512.0, -512.0, -16.0], [512.0, 512.0, 256.0]]
