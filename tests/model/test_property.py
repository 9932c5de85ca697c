"""Random command sequences: undo all returns the initial scene, redo all the final one, and
the live index is valid and equal to a fresh build after every step."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from editor.model import (
    AddObjects,
    IndexSync,
    RemoveObjects,
    Reparent,
    SetProperties,
    SetSelection,
    SetSettings,
    Transform,
    point_entity,
)
from editor.model.entities import Entity
from editor.model.native import dumps_scene, loads_scene
from editor.model.scene import Edit, Settings
from editor.model.shapes import box_brush, prism_brush

from .helpers import assert_index_matches, private_registry, small_scene

CLASSES = ["light", "monster_ogre", "monster_army", "info_player_start", "item_health", "my_thing"]
coord = st.integers(-300, 300)
delta = st.tuples(st.integers(-64, 64), st.integers(-64, 64), st.integers(-32, 32))


def _draw_command(data, scene, registry):
    """One random command valid (mostly) for the current scene."""
    indexed = scene.indexed_ids().tolist()
    entities = scene.entity_ids()
    brushes = scene.brush_ids()
    containers = [e for e in entities if not scene[e].is_point]
    kind = data.draw(st.sampled_from(
        ["move", "drag", "resize", "add_brush", "add_entity", "remove", "props", "select",
         "reparent", "settings", "transaction"]))
    if kind == "move" and indexed:
        ids = data.draw(st.lists(st.sampled_from(indexed + containers), min_size=1, max_size=3, unique=True))
        return [Transform(ids, delta=data.draw(delta))]
    if kind == "drag" and indexed:
        # a mouse drag: several moves with one merge id, sometimes touching more objects later
        ids = data.draw(st.lists(st.sampled_from(indexed), min_size=1, max_size=2, unique=True))
        merge = data.draw(st.sampled_from(["drag-a", "drag-b"]))
        moves = []
        for _ in range(data.draw(st.integers(2, 4))):
            extra = data.draw(st.lists(st.sampled_from(indexed), max_size=1))
            moves.append(Transform(sorted(set(ids + extra)), delta=data.draw(delta), merge_id=merge))
        return moves
    if kind == "resize" and brushes:
        oid = data.draw(st.sampled_from(brushes))
        lo = np.array(data.draw(st.tuples(coord, coord, coord)), dtype=float)
        size = np.array(data.draw(st.tuples(st.integers(8, 200), st.integers(8, 200), st.integers(8, 100))), float)
        return [Transform.resize(scene, [oid], lo, lo + size)]
    if kind == "add_brush" and containers:
        owner = data.draw(st.sampled_from(containers))
        x, y, z = data.draw(st.tuples(coord, coord, st.integers(0, 100)))
        oid = scene.allocate_ids(1)[0]
        if data.draw(st.booleans()):
            brush = box_brush(owner, (x, y, z), (x + 32, y + 48, z + 16), "box")
        else:
            brush = prism_brush(owner, (x, y), 20, (z, z + 40), sides=data.draw(st.integers(3, 7)),
                                angle_deg=data.draw(st.integers(0, 90)))
        return [AddObjects({oid: brush}, select=data.draw(st.booleans()))]
    if kind == "add_entity":
        oid = scene.allocate_ids(1)[0]
        origin = data.draw(st.tuples(coord, coord, st.integers(0, 100)))
        return [AddObjects({oid: point_entity(data.draw(st.sampled_from(CLASSES)), origin)})]
    if kind == "remove" and scene.objects:
        ids = data.draw(st.lists(st.sampled_from(sorted(scene.objects)), min_size=1, max_size=2, unique=True))
        return [RemoveObjects(ids)]
    if kind == "props" and entities:
        ids = data.draw(st.lists(st.sampled_from(entities), min_size=1, max_size=2, unique=True))
        key = data.draw(st.sampled_from(["classname", "angle", "target", "spawnflags"]))
        value = data.draw(st.sampled_from(CLASSES) if key == "classname" else st.sampled_from([None, "1", "90"]))
        return [SetProperties(ids, {key: value})]
    if kind == "select" and scene.objects:
        return [SetSelection(data.draw(st.lists(st.sampled_from(sorted(scene.objects)), max_size=3)))]
    if kind == "reparent" and brushes and containers:
        return [Reparent(data.draw(st.lists(st.sampled_from(brushes), min_size=1, max_size=2, unique=True)),
                         data.draw(st.sampled_from(containers)))]
    if kind == "settings":
        backend = data.draw(st.sampled_from(["brute", "tuned-brute"]))
        params = {"chunk": data.draw(st.integers(1, 4096))} if backend == "tuned-brute" else {}
        return [SetSettings(backend=backend, params=params, registry=registry)]
    if kind == "transaction" and indexed:
        first = data.draw(st.sampled_from(indexed))
        return [("transaction", [Transform([first], delta=data.draw(delta)),
                                 SetSelection([first])])]
    return []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_edits_undo_and_redo_exactly(data):
    scene, stack, ids = small_scene()
    registry = private_registry()
    # the document starts on a backend of the private registry (the default octree is not in it),
    # so the native round trip below can check the backend against that registry
    scene.apply(Edit(settings=Settings(backend="brute")))
    sync = IndexSync(scene, registry=registry)
    initial = scene.state()
    steps = data.draw(st.integers(1, 12))
    for _ in range(steps):
        for command in _draw_command(data, scene, registry):
            try:
                if isinstance(command, tuple):
                    with stack.transaction("Group"):
                        for child in command[1]:
                            stack.push(child)
                else:
                    stack.push(command)
            except (ValueError, KeyError):
                pass  # refused edits (degenerate brush, orphaned owner) must leave no trace
            assert_index_matches(sync)
            _check_consistent(scene)
    final = scene.state()
    saved = loads_scene(dumps_scene(scene), registry=registry)  # the native file holds the same document
    assert saved.state()[0] == final[0] and saved.settings == final[2]
    history = []
    while stack.can_undo():
        stack.undo()
        assert_index_matches(sync)
        history.append(scene.state())
    assert scene.state() == initial
    assert stack.is_clean()
    while stack.can_redo():
        stack.redo()
        assert_index_matches(sync)
    assert scene.state() == final
    # stepping through the history visits the same states again
    for k, state in enumerate(history):
        stack.set_index(len(stack) - 1 - k)
        assert scene.state() == state


def _check_consistent(scene):
    for oid in scene.brush_ids():
        owner = scene[scene[oid].entity]
        assert isinstance(owner, Entity) and not owner.is_point
        assert oid in scene.brushes_of(scene[oid].entity)
    assert all(oid in scene for oid in scene.selection)
