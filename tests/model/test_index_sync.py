"""The spatial index follows the scene incrementally and can switch backend at any time."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model import (
    AddObjects,
    IndexSync,
    RemoveObjects,
    SetProperties,
    SetSettings,
    Transform,
    point_entity,
    scene_split_planes,
)
from editor.model.shapes import box_brush
from spatial.registry import default_registry

from .helpers import assert_index_matches, private_registry, small_scene


def test_sync_builds_brushes_static_and_entities_dynamic():
    scene, stack, ids = small_scene()
    sync = IndexSync(scene, backend="brute", registry=private_registry())
    assert_index_matches(sync)
    assert len(sync.index) == 6


def test_only_touched_ids_reach_the_index():
    scene, stack, ids = small_scene()
    sync = IndexSync(scene, backend="brute", registry=private_registry())
    calls = []
    for name in ("insert", "remove", "update"):
        original = getattr(sync.index, name)

        def spy(*args, _name=name, _original=original, **kw):
            calls.append((_name, sorted(np.asarray(args[0]).tolist())))
            return _original(*args, **kw)
        setattr(sync.index, name, spy)
    stack.push(Transform([ids["ogre"], ids["ramp"]], delta=(0, 8, 0)))
    stack.push(SetProperties([ids["player"]], {"angle": "0"}))  # bounds unchanged: no update
    stack.push(SetProperties([ids["player"]], {"classname": "monster_shambler"}))  # hull grows
    stack.push(RemoveObjects([ids["door"]]))
    new = scene.allocate_ids(1)
    stack.push(AddObjects({new[0]: point_entity("light", (0, 0, 100))}))
    assert calls == [("update", sorted([ids["ogre"], ids["ramp"]])),
                     ("update", [ids["player"]]),
                     ("remove", [ids["door_brush"]]),
                     ("insert", new)]
    assert_index_matches(sync)


def test_backend_switch_and_params_rebuild_from_the_scene():
    scene, stack, ids = small_scene()
    registry = private_registry()
    sync = IndexSync(scene, backend="brute", registry=registry)
    notified = []
    sync.changed.connect(lambda touched, kind: notified.append(kind))
    sync.set_backend("tuned-brute", {"chunk": 64})
    assert sync.index.name == "tuned-brute" and sync.index.params.chunk == 64
    assert_index_matches(sync)
    sync.set_params({"chunk": 32})
    assert sync.index.params.chunk == 32
    assert_index_matches(sync)
    assert len(notified) == 2


def test_sync_follows_the_document_settings_through_undo():
    scene, stack, ids = small_scene()
    registry = private_registry()
    sync = IndexSync(scene, registry=registry)
    assert sync.index.name == "brute"
    stack.push(SetSettings(backend="tuned-brute", params={"chunk": 99}, registry=registry))
    assert sync.index.name == "tuned-brute" and sync.index.params.chunk == 99
    assert_index_matches(sync)
    stack.undo()
    assert sync.index.name == "brute"
    assert_index_matches(sync)


def test_unknown_document_backend_falls_back_to_brute_force():
    scene, stack, ids = small_scene()
    from editor.model.scene import Edit, Settings
    scene.apply(Edit(settings=Settings(backend="from-a-missing-plugin")))
    sync = IndexSync(scene, registry=private_registry())
    assert sync.index.name == "brute" and "from-a-missing-plugin" in sync.fallback
    assert_index_matches(sync)


def test_split_planes_are_the_unique_brush_face_planes():
    scene, stack, ids = small_scene()
    registry = private_registry()
    sync = IndexSync(scene, backend="tuned-brute", registry=registry)
    planes = scene_split_planes(scene)
    # floor box 6 + ramp 5 + pentagonal pillar 7 + door box 6 = 24 faces; shared planes:
    # z=0 (floor top, ramp/pillar/door bottoms), y=-256 (floor and door sides), the ramp's
    # x=128 side is unique, the floor's x=-256 ... are unique; pillar and ramp top differ.
    faces = sum(len(scene[b].faces) for b in scene.brush_ids())
    assert faces == 24
    assert len(planes) == 24 - 3 - 1  # three extra z=0 faces, one extra y=-256 face
    assert len(np.unique(planes, axis=0)) == len(planes)
    np.testing.assert_allclose(sync.index.split_planes, planes)
    # each plane is n.p + d = 0 through the brush's face points
    floor = scene[ids["floor"]]
    for face in floor.faces:
        p = np.array(face.points)
        hit = np.abs(planes[:, :3] @ p.T + planes[:, 3:4]).max(axis=1) < 1e-9
        assert hit.sum() == 1
    offered = sync.index.planes_offered
    stack.push(Transform([ids["ogre"]], delta=(1, 0, 0)))  # no brush touched
    assert sync.index.planes_offered == offered
    stack.push(Transform([ids["pillar"]], delta=(1, 0, 0)))
    assert sync.index.planes_offered == offered + 1


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(default_registry().backends))
def test_every_registered_backend_follows_edits(backend):
    scene, stack, ids = small_scene()
    sync = IndexSync(scene, backend=backend)
    assert_index_matches(sync)
    w = ids["world"]
    new = scene.allocate_ids(3)
    stack.push(AddObjects({new[0]: box_brush(w, (300, 300, 0), (340, 340, 40)),
                           new[1]: point_entity("monster_army", (310, 310, 24)),
                           new[2]: point_entity("light", (-500, -500, 300))}))
    assert_index_matches(sync)
    for _ in range(5):
        stack.push(Transform([new[1], ids["ogre"]], delta=(-40, -30, 0), merge_id="drag"))
        assert_index_matches(sync)
    stack.push(Transform.resize(scene, [ids["floor"]], (-300, -300, -32), (300, 280, 0)))
    stack.push(RemoveObjects([ids["door"], new[2]]))
    assert_index_matches(sync)
    while stack.can_undo():
        stack.undo()
        assert_index_matches(sync)


def test_backends_ignoring_split_planes_get_them_at_rebuild_only():
    scene, stack, ids = small_scene()
    sync = IndexSync(scene, backend="brute", registry=private_registry())
    assert not sync.uses_split_planes
    np.testing.assert_allclose(sync.index.split_planes, scene_split_planes(scene), atol=1e-12)
    stack.push(Transform([ids["pillar"]], delta=(5, 0, 0)))
    assert sync.split_planes_stale
    sync.offer_split_planes()
    assert not sync.split_planes_stale
    np.testing.assert_allclose(sync.index.split_planes, scene_split_planes(scene), atol=1e-12)


def test_manual_plane_offers_wait_for_the_caller():
    scene, stack, ids = small_scene()
    sync = IndexSync(scene, backend="tuned-brute", registry=private_registry(), eager_planes=False)
    assert sync.uses_split_planes
    offered = sync.index.planes_offered
    for _ in range(3):  # a drag
        stack.push(Transform([ids["pillar"]], delta=(5, 0, 0), merge_id="drag"))
    assert sync.index.planes_offered == offered and sync.split_planes_stale
    sync.offer_split_planes()  # the drag ended
    assert sync.index.planes_offered == offered + 1
    np.testing.assert_allclose(sync.index.split_planes, scene_split_planes(scene), atol=1e-12)


def test_switching_back_to_the_document_backend_takes_its_params():
    scene, stack, ids = small_scene()
    registry = private_registry()
    stack.push(SetSettings(backend="tuned-brute", params={"chunk": 7}, registry=registry))
    sync = IndexSync(scene, registry=registry)
    assert sync.index.params.chunk == 7
    sync.set_backend("brute")
    sync.set_backend("tuned-brute")
    assert sync.index.params.chunk == 7
    sync.set_backend("tuned-brute", {"chunk": 9})
    assert sync.index.params.chunk == 9
    assert_index_matches(sync)


def test_a_backend_failing_mid_edit_is_rebuilt_in_step():
    scene, stack, ids = small_scene()
    sync = IndexSync(scene, backend="brute", registry=private_registry())
    errors = []
    scene.listener_error_handler = errors.append
    original = sync.index.update

    def flaky_update(*args, **kw):
        sync.index.update = original  # fail once, as a buggy backend might
        raise RuntimeError("backend bug")
    sync.index.update = flaky_update
    stack.push(Transform([ids["ogre"]], delta=(40, 0, 0)))
    assert [str(e) for e in errors] == ["backend bug"] and stack.index == 1
    assert_index_matches(sync)  # rebuilt from the scene


def test_sync_offers_exact_wall_segments_to_the_convex_bsp():
    """The Doom-style BSP in the editor cuts real walls, as it does on the command line."""
    from pathlib import Path

    from editor.model.loading import load_document

    wad = Path("/usr/share/games/doom/freedoom1.wad")
    if not wad.exists():
        pytest.skip(f"{wad} is absent (Debian package freedoom)")
    scene = load_document(f"{wad}:E1M1")
    sync = IndexSync(scene, backend="bsp", params={"space": "2d", "leaf": "convex", "max_depth": 64})
    stats = sync.index.stats()
    assert stats["segments"] >= len(scene.segment_ids()) > 0  # two-sided walls count each way
    assert stats["splits"] > 0 and stats["nonconvex_leaves"] == 0
    sync.index.validate()
