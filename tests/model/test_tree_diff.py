"""Tree diff: the nodes an edit created, split, merged or removed, and undo reverses it."""
from __future__ import annotations

from editor.model.commands import AddObjects, RemoveObjects
from editor.model.compare.tree_diff import tree_diff
from editor.model.demo import build_demo_scene
from editor.model.entities import point_entity
from editor.model.index_sync import IndexSync
from editor.model.undo import UndoStack


def crowd(scene, at, count: int):
    """``count`` point entities on a small grid around ``at`` (enough to split a leaf)."""
    ids = scene.allocate_ids(count)
    return AddObjects({oid: point_entity("info_null", (at[0] + 40 * (k % 6), at[1] + 40 * (k // 6),
                                                       at[2]))
                       for k, oid in enumerate(ids)})


def test_unchanged_tree_has_no_diff():
    table = IndexSync(build_demo_scene(), "octree").index.nodes()
    diff = tree_diff(table, table)
    assert diff.empty and diff.summary() == "tree unchanged"


def test_crowding_a_leaf_splits_it_and_undo_merges_it_back():
    scene = build_demo_scene()
    sync = IndexSync(scene, "octree", {"max_depth": 12})
    stack = UndoStack(scene)
    before = sync.index.nodes()
    stack.push(crowd(scene, (-300.0, -300.0, 40.0), 36))
    after = sync.index.nodes()
    diff = tree_diff(before, after)
    assert len(diff.split) >= 1 and len(diff.created) >= 8
    assert not after.is_leaf[diff.split].any()
    assert diff.summary().startswith("tree: ") and "split" in diff.summary()
    stack.undo()
    sync.index.step(10_000)  # past every lifespan: the emptied nodes are pruned
    now = sync.index.nodes()
    back = tree_diff(after, now)
    assert len(back.removed) > 0 and len(back.merged) >= 1 and not len(back.created)
    # the removed nodes are among those the edit had created
    assert set(_boxes(after, back.removed)) <= set(_boxes(after, diff.created))
    assert "merged" in back.summary() and "removed" in back.summary()


def _boxes(table, rows):
    return [tuple(table.lo[r]) + tuple(table.hi[r]) for r in rows]


def test_removing_objects_reports_removed_nodes():
    scene = build_demo_scene()
    sync = IndexSync(scene, "bvh")
    before = sync.index.nodes()
    UndoStack(scene).push(RemoveObjects(scene.point_entity_ids()[:3]))
    diff = tree_diff(before, sync.index.nodes())
    assert len(diff.removed) > 0 and "removed" in diff.summary()
