"""Undo stack rules (QUndoStack's): merging, clean state, no-ops, transactions, selection."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model import (
    AddObjects,
    RemoveObjects,
    SetProperties,
    SetSelection,
    SetSettings,
    Transform,
    UndoStack,
    point_entity,
)
from editor.model.scene import SceneEditError

from .helpers import private_registry, small_scene


def test_a_drag_of_ten_moves_is_one_undo_step():
    scene, stack, ids = small_scene()
    before = scene.state()
    start = scene[ids["pillar"]].lo
    for _ in range(10):
        stack.push(Transform([ids["pillar"]], delta=(4, 0, 0), merge_id="drag-1"))
    assert len(stack) == 1 and stack.index == 1
    np.testing.assert_allclose(scene[ids["pillar"]].lo, start + [40, 0, 0])
    stack.undo()
    assert scene.state() == before
    stack.redo()
    np.testing.assert_allclose(scene[ids["pillar"]].lo, start + [40, 0, 0])


def test_different_merge_ids_or_none_do_not_merge():
    scene, stack, ids = small_scene()
    stack.push(Transform([ids["pillar"]], delta=(4, 0, 0), merge_id="drag-1"))
    stack.push(Transform([ids["pillar"]], delta=(4, 0, 0), merge_id="drag-2"))
    stack.push(Transform([ids["pillar"]], delta=(4, 0, 0)))
    stack.push(Transform([ids["pillar"]], delta=(4, 0, 0)))
    assert len(stack) == 4


def test_no_merge_across_the_clean_state():
    scene, stack, ids = small_scene()
    stack.push(Transform([ids["pillar"]], delta=(4, 0, 0), merge_id="drag"))
    stack.set_clean()
    saved = scene.state()
    stack.push(Transform([ids["pillar"]], delta=(4, 0, 0), merge_id="drag"))
    assert len(stack) == 2
    assert not stack.is_clean()
    stack.undo()
    assert stack.is_clean() and scene.state() == saved


def test_a_merge_that_cancels_out_removes_the_step():
    scene, stack, ids = small_scene()
    stack.push(Transform([ids["ogre"]], delta=(16, 0, 0), merge_id="drag"))
    stack.push(Transform([ids["ogre"]], delta=(-16, 0, 0), merge_id="drag"))
    assert len(stack) == 0 and not stack.can_undo()


def test_a_command_that_changes_nothing_is_dropped():
    scene, stack, ids = small_scene()
    calls = []
    stack.changed.connect(lambda s: calls.append(s.index))
    assert not stack.push(Transform([ids["floor"]], delta=(0, 0, 0)))
    assert not stack.push(SetProperties([ids["player"]], {"angle": "90"}))
    assert not stack.push(SetSelection([]))
    assert len(stack) == 0 and calls == []
    assert stack.push(SetProperties([ids["player"]], {"angle": "45"}))
    assert calls == [1]


def test_transaction_groups_commands_into_one_step():
    scene, stack, ids = small_scene()
    before = scene.state()
    with stack.transaction("Paste"):
        new = scene.allocate_ids(2)
        stack.push(AddObjects({new[0]: point_entity("light", (0, 0, 64)),
                               new[1]: point_entity("light", (64, 0, 64))}))
        stack.push(Transform(new, delta=(0, 32, 0)))
        stack.push(SetSelection(new))
    assert stack.history == ["Paste"] and stack.undo_text() == "Paste"
    after = scene.state()
    stack.undo()
    assert scene.state() == before
    assert stack.redo_text() == "Paste"
    stack.redo()
    assert scene.state() == after


def test_transaction_rolls_back_on_error():
    scene, stack, ids = small_scene()
    before = scene.state()
    calls = []
    stack.changed.connect(lambda s: calls.append(s.index))
    with pytest.raises(SceneEditError):
        with stack.transaction("Broken paste"):
            stack.push(Transform([ids["floor"]], delta=(0, 0, 8)))
            stack.push(SetProperties([ids["player"]], {"angle": "0"}))
            stack.push(SetProperties([ids["floor"]], {"angle": "0"}))  # a brush: refused
    assert scene.state() == before
    assert len(stack) == 0 and calls == []
    with pytest.raises(RuntimeError):
        with stack.transaction("Interrupted"):
            stack.push(Transform([ids["floor"]], delta=(0, 0, 8)))
            raise RuntimeError("user code failed")
    assert scene.state() == before


def test_nested_transactions_join_the_outer_one():
    scene, stack, ids = small_scene()
    with stack.transaction("Outer"):
        stack.push(Transform([ids["floor"]], delta=(0, 0, 8)))
        with stack.transaction("Inner"):
            stack.push(Transform([ids["ramp"]], delta=(0, 0, 8)))
    assert stack.history == ["Outer"]


def test_selection_is_undoable_but_never_dirty():
    scene, stack, ids = small_scene()
    assert stack.is_clean()
    stack.push(SetSelection([ids["floor"], ids["ogre"]]))
    assert scene.selection == {ids["floor"], ids["ogre"]}
    assert stack.can_undo() and stack.undo_text() == "Select"
    assert stack.is_clean()
    stack.undo()
    assert scene.selection == frozenset() and stack.is_clean()
    stack.redo()
    stack.push(Transform([ids["floor"]], delta=(1, 0, 0)))
    assert not stack.is_clean()
    stack.set_clean()
    stack.push(SetSelection([ids["ramp"]]))
    stack.undo()
    stack.undo()  # past the save point: the move is undone, the document differs
    assert not stack.is_clean()


def test_clean_state_lost_when_its_redo_branch_is_discarded():
    scene, stack, ids = small_scene()
    stack.push(Transform([ids["floor"]], delta=(1, 0, 0)))
    stack.set_clean()
    stack.undo()
    assert not stack.is_clean()
    stack.push(Transform([ids["floor"]], delta=(2, 0, 0)))
    assert stack.clean_index is None and not stack.is_clean()
    assert not stack.can_redo()


def test_history_texts_index_and_listeners():
    scene, stack, ids = small_scene()
    seen = []
    stack.changed.connect(lambda s: seen.append((s.index, s.can_undo(), s.can_redo())))
    stack.push(Transform([ids["floor"]], delta=(1, 0, 0), text="Move floor"))
    stack.push(SetProperties([ids["ogre"]], {"spawnflags": "1"}, text="Set spawnflags"))
    stack.push(RemoveObjects([ids["player"]]))
    assert stack.history == ["Move floor", "Set spawnflags", "Delete"]
    stack.set_index(1)
    assert stack.index == 1 and stack.redo_text() == "Set spawnflags" and stack.undo_text() == "Move floor"
    assert ids["player"] in scene and scene[ids["ogre"]].get("spawnflags") is None
    assert seen == [(1, True, False), (2, True, False), (3, True, False), (2, True, True), (1, True, True)]


def test_settings_are_a_document_change():
    scene, stack, ids = small_scene()
    registry = private_registry()
    stack.push(SetSettings(backend="tuned-brute", params={"chunk": 128}, registry=registry))
    assert scene.settings.backend == "tuned-brute"
    assert scene.settings.params == {"chunk": 128} and not stack.is_clean()
    from spatial.errors import ParamError, PluginError
    with pytest.raises(ParamError):
        stack.push(SetSettings(params={"chunk": -1}, registry=registry))
    with pytest.raises(PluginError):
        stack.push(SetSettings(backend="no-such-backend", registry=registry))
    stack.undo()
    assert scene.settings.params == {} and stack.is_clean()


def test_limit_forgets_the_oldest_steps():
    scene = small_scene()[0]
    stack = UndoStack(scene, limit=3)
    ids = scene.indexed_ids()[:1].tolist()
    for _ in range(5):
        stack.push(Transform(ids, delta=(1, 0, 0)))
    assert len(stack) == 3 and stack.index == 3 and stack.clean_index is None
