"""Scene invariants: ids, ownership, atomic edits, batched change events."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model import (
    AddObjects,
    ChangeKind,
    Edit,
    RemoveObjects,
    Reparent,
    SceneEditError,
    SetProperties,
    SetSelection,
    Transform,
    brush_entity,
    point_entity,
)
from editor.model.shapes import box_brush
from spatial.errors import GeometryError

from .helpers import small_scene


def test_ids_are_sequential_and_never_reused():
    scene, stack, ids = small_scene()
    assert sorted(ids.values()) == list(range(len(ids)))
    stack.push(RemoveObjects([ids["ogre"]]))
    new = scene.allocate_ids(1)[0]
    assert new == len(ids)  # the removed id is not handed out again
    stack.undo()
    assert ids["ogre"] in scene


def test_indexed_objects_are_brushes_and_point_entities():
    scene, _, ids = small_scene()
    expected = sorted(ids[k] for k in ("floor", "ramp", "pillar", "door_brush", "player", "ogre"))
    assert scene.indexed_ids().tolist() == expected
    assert scene.brushes_of(ids["door"]) == [ids["door_brush"]]
    assert scene.brushes_of(ids["world"]) == [ids["floor"], ids["ramp"], ids["pillar"]]


def test_point_entity_bounds_come_from_its_class_hull():
    scene, _, ids = small_scene()
    player, ogre = scene[ids["player"]], scene[ids["ogre"]]
    np.testing.assert_array_equal(player.lo, [-16, -128 - 16, 0])
    np.testing.assert_array_equal(player.hi, [16, -128 + 16, 56])
    np.testing.assert_array_equal(ogre.hi - ogre.lo, [64, 64, 88])
    odd = point_entity("my_mod_thing", (1, 2, 3))
    np.testing.assert_array_equal(odd.hi - odd.lo, [16, 16, 16])


def test_removing_an_entity_removes_its_brushes_and_undo_restores_them():
    scene, stack, ids = small_scene()
    before = scene.state()
    stack.push(RemoveObjects([ids["door"]]))
    assert ids["door"] not in scene and ids["door_brush"] not in scene
    stack.undo()
    assert scene.state() == before


def test_an_invalid_edit_changes_nothing():
    scene, stack, ids = small_scene()
    before = scene.state()
    # an orphan brush: its owner is a point entity
    oid = scene.allocate_ids(1)[0]
    with pytest.raises(SceneEditError, match="not a brush entity"):
        stack.push(AddObjects({oid: box_brush(ids["player"], (0, 0, 0), (8, 8, 8))}))
    # a resize that flattens brushes is refused before anything moves
    with pytest.raises(GeometryError):
        stack.push(Transform([ids["floor"], ids["ramp"]], factors=(1, 1, 0)))
    # removing an entity without its brushes
    with pytest.raises(SceneEditError, match="owns brush"):
        scene.apply(Edit({ids["door"]: None}))
    with pytest.raises(SceneEditError, match="never allocated"):
        scene.apply(Edit({10_000: brush_entity("func_wall")}))
    assert scene.state() == before
    assert stack.index == 0


def test_events_are_batched_once_per_command():
    scene, stack, ids = small_scene()
    log = []
    scene.will_change.connect(lambda touched: log.append(("will", touched)))
    scene.did_change.connect(lambda touched, kind: log.append(("did", touched, kind)))
    moved = [ids["floor"], ids["ramp"], ids["player"]]
    stack.push(Transform(moved, delta=(8, 0, 0)))
    assert log == [("will", frozenset(moved)), ("did", frozenset(moved), ChangeKind.GEOMETRY | ChangeKind.PROPERTIES)]
    log.clear()
    stack.push(SetSelection([ids["ogre"]]))
    assert log == [("will", frozenset([ids["ogre"]])), ("did", frozenset([ids["ogre"]]), ChangeKind.SELECTION)]
    log.clear()
    stack.push(RemoveObjects([ids["ogre"]]))  # also leaves the selection
    assert log[-1] == ("did", frozenset([ids["ogre"]]), ChangeKind.REMOVED | ChangeKind.SELECTION)
    assert scene.selection == frozenset()
    log.clear()
    stack.undo()
    assert log[-1] == ("did", frozenset([ids["ogre"]]), ChangeKind.ADDED | ChangeKind.SELECTION)
    assert scene.selection == {ids["ogre"]}


def test_brush_entity_in_a_transform_moves_its_brushes():
    scene, stack, ids = small_scene()
    lo = scene[ids["door_brush"]].lo
    stack.push(Transform([ids["door"]], delta=(0, 0, 32)))
    np.testing.assert_array_equal(scene[ids["door_brush"]].lo, lo + [0, 0, 32])


def test_set_properties_keeps_file_order_and_can_delete():
    scene, stack, ids = small_scene()
    stack.push(SetProperties([ids["player"]], {"angle": "180", "target": "t1"}))
    assert scene[ids["player"]].properties == (
        ("classname", "info_player_start"), ("origin", "0 -128 24"), ("angle", "180"), ("target", "t1"))
    stack.push(SetProperties([ids["player"]], {"angle": None}))
    assert "angle" not in scene[ids["player"]]
    with pytest.raises(SceneEditError, match="brush"):
        stack.push(SetProperties([ids["floor"]], {"x": "1"}))


def test_reparent_moves_brushes_between_entities():
    scene, stack, ids = small_scene()
    stack.push(Reparent([ids["ramp"]], ids["door"]))
    assert scene.brushes_of(ids["door"]) == [ids["ramp"], ids["door_brush"]]
    stack.undo()
    assert scene.brushes_of(ids["door"]) == [ids["door_brush"]]


def test_moving_an_entity_rewrites_only_its_origin():
    scene, stack, ids = small_scene()
    stack.push(Transform([ids["player"]], delta=(0.5, 0, -8)))
    assert scene[ids["player"]].get("origin") == "0.5 -128 16"
    assert scene[ids["player"]].get("angle") == "90"


def test_a_failing_listener_cannot_break_the_history():
    scene, stack, ids = small_scene()
    seen, errors = [], []
    scene.listener_error_handler = errors.append

    def broken(touched, kind):
        raise RuntimeError("view bug")
    scene.did_change.connect(broken)
    scene.did_change.connect(lambda touched, kind: seen.append(kind))
    before = scene.state()
    stack.push(Transform([ids["ogre"]], delta=(8, 0, 0)))
    assert stack.index == 1 and len(seen) == 1  # recorded, and later listeners still ran
    assert [str(e) for e in errors] == ["view bug"]
    stack.undo()
    assert scene.state() == before and len(errors) == 2
    # a will_change listener that raises stops the edit before anything changes
    scene.will_change.connect(lambda touched: (_ for _ in ()).throw(RuntimeError("veto")))
    with pytest.raises(RuntimeError, match="veto"):
        stack.push(Transform([ids["ogre"]], delta=(8, 0, 0)))
    assert scene.state() == before and stack.index == 0


def test_typed_lookups_return_the_object_of_their_kind():
    from editor.model.level_geometry import Segment

    scene, stack, ids = small_scene()
    wall = Segment((0, 0), (64, 0), floor=0, ceiling=128)
    (wall_id,) = scene.allocate_ids(1)
    scene.apply(Edit({wall_id: wall}))
    assert scene.brush(ids["floor"]) is scene[ids["floor"]]
    assert scene.entity(ids["ogre"]).classname == "monster_ogre"
    assert scene.entity(ids["door"]) is scene[ids["door"]]  # brush entities are entities too
    assert scene.segment(wall_id) == wall


@pytest.mark.parametrize("lookup, key, found", [
    ("brush", "ogre", "Entity"),
    ("entity", "floor", "Brush"),
    ("segment", "world", "Entity"),
])
def test_typed_lookup_of_the_wrong_kind_names_the_id_and_what_it_is(lookup, key, found):
    scene, _, ids = small_scene()
    with pytest.raises(TypeError, match=rf"id {ids[key]} is a {found}, not a "):
        getattr(scene, lookup)(ids[key])


@pytest.mark.parametrize("lookup", ["brush", "entity", "segment"])
def test_typed_lookup_of_a_missing_id_names_it(lookup):
    scene, stack, ids = small_scene()
    stack.push(RemoveObjects([ids["ogre"]]))
    with pytest.raises(KeyError, match=rf"no object with id {ids['ogre']}"):
        getattr(scene, lookup)(ids["ogre"])


def test_a_move_leaves_level_geometry_in_place_and_moves_the_rest():
    from editor.model.level_geometry import Segment

    scene, stack, ids = small_scene()
    wall = Segment((0, 0), (64, 0), floor=0, ceiling=128)
    (wall_id,) = scene.allocate_ids(1)
    stack.push(AddObjects({wall_id: wall}))
    before = scene.entity(ids["ogre"]).origin
    stack.push(Transform([wall_id, ids["ogre"]], delta=(8, 0, 0)))
    assert scene.segment(wall_id) == wall
    np.testing.assert_array_equal(scene.entity(ids["ogre"]).origin, before + [8, 0, 0])
    assert stack.push(Transform([wall_id], delta=(8, 0, 0))) is False  # nothing to move


def test_a_command_cannot_be_undone_before_it_was_done():
    scene, _, ids = small_scene()
    with pytest.raises(SceneEditError, match="cannot be undone before it was done"):
        RemoveObjects([ids["ogre"]]).undo(scene)
