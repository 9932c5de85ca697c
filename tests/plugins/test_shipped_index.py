"""The ``shipped_bsp`` backend: a Doom map's own node tree behind the backend contract."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model import IndexSync, Transform
from editor.model.loading import load_document
from plugins.brute import BruteForce
from plugins.doom_wad.shipped_bsp import load_shipped_bsp
from plugins.doom_wad.shipped_index import ShippedBSPIndex
from spatial.registry import default_registry

from ..spatial.oracle import assert_matches
from .test_doom_wad import freedoom


def _oracle(index) -> BruteForce:
    obj = index.objects
    slots = obj.alive_slots()
    brute = BruteForce()
    brute.build(obj.ids[slots], obj.lo[slots], obj.hi[slots], obj.dynamic[slots], obj.awake[slots])
    return brute


@pytest.mark.parametrize("member", ["E1M1", "E1M2"])
def test_the_map_s_own_tree_answers_like_brute_force(member):
    wad = freedoom("freedoom1.wad")
    scene = load_document(f"{wad}:{member}")
    sync = IndexSync(scene, backend="shipped_bsp")
    index = sync.index
    assert isinstance(index, ShippedBSPIndex)
    shipped = load_shipped_bsp(wad, member)
    table = index.nodes()
    assert len(table) == len(shipped.record), "one node per NODES record and subsector"
    np.testing.assert_array_equal(table.parent, shipped.parent)
    np.testing.assert_array_equal(table.is_leaf, shipped.is_leaf)
    assert index.stats()["shipped"] is True and index.stats()["splits"] == shipped.splits()
    assert table.own_count.sum() == index.objects.count, "every object stored once"
    index.validate()
    assert_matches(index, _oracle(index), np.random.default_rng(7), n_queries=30)


def test_objects_that_move_are_placed_again_in_the_fixed_tree():
    scene = load_document(f"{freedoom('freedoom1.wad')}:E1M1")
    sync = IndexSync(scene, backend="shipped_bsp")
    before = len(sync.index.nodes())
    things = scene.point_entity_ids()[:20]
    from editor.model import UndoStack
    stack = UndoStack(scene)
    stack.push(Transform(things, delta=(300, -200, 0)))
    index = sync.index
    assert len(index.nodes()) == before, "the shipped tree never changes shape"
    index.validate()
    assert_matches(index, _oracle(index), np.random.default_rng(3), n_queries=12)


def test_without_a_doom_source_one_root_holds_everything():
    index = ShippedBSPIndex()
    rng = np.random.default_rng(1)
    lo = rng.uniform(0, 100, (50, 3))
    index.build(np.arange(50), lo, lo + 5)
    assert len(index.nodes()) == 1 and index.stats()["shipped"] is False
    index.set_source({"source_format": "quake-map"})
    assert len(index.nodes()) == 1
    with pytest.raises(IndexError, match="node row 3 does not exist"):
        index.node_objects(3)


def test_offered_only_for_doom_documents():
    cls = default_registry().backend("shipped_bsp")
    assert cls.suits_source({"source_format": "doom-wad", "wad": "x.wad", "map": "E1M1"})
    assert not cls.suits_source({"source_format": "quake-map"})
    assert not cls.suits_source({})
    assert default_registry().backend("octree").suits_source({})


def test_a_missing_wad_leaves_the_single_root_and_says_why(tmp_path):
    index = ShippedBSPIndex()
    index.set_source({"source_format": "doom-wad", "wad": str(tmp_path / "gone.wad"), "map": "E1M1"})
    index.build([1, 2], np.zeros((2, 3)), np.ones((2, 3)))
    stats = index.stats()
    assert stats["shipped"] is False and "gone.wad" in stats["source_error"]


def test_partition_lines_as_planes_pass_through_their_node_box():
    scene = load_document(f"{freedoom('freedoom1.wad')}:E1M1")
    index = IndexSync(scene, backend="shipped_bsp").index
    planes, table = index.node_planes(), index.nodes()
    inner = ~table.is_leaf
    assert np.isnan(planes[~inner]).all() and np.isfinite(planes[inner]).all()
    np.testing.assert_allclose(np.linalg.norm(planes[inner, :3], axis=1), 1.0)
    # the line splits its node: the box has corners on both sides (or on the line)
    lo, hi = table.lo[inner], table.hi[inner]
    corners = [(lo[:, 0], lo[:, 1]), (hi[:, 0], hi[:, 1]), (lo[:, 0], hi[:, 1]), (hi[:, 0], lo[:, 1])]
    side = np.stack([planes[inner, 0] * x + planes[inner, 1] * y + planes[inner, 3] for x, y in corners])
    assert ((side.min(axis=0) <= 1e-6) & (side.max(axis=0) >= -1e-6)).all()
