"""Hot cells name the objects stored in them and the pairs found there (e1m1 and small scenes)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from editor.model.hotspot_pairs import cell_objects, describe_cell, find_cell, hot_cells, object_label
from spatial.registry import default_registry

E1M1 = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "quake" / "quake_id1_e1m1.map"


def _random_octree(rng, count: int, extent: float, size: float):
    """``(index, pairs result, node table, lo)``: an octree over ``count`` cubes of side
    ``size`` placed by ``rng`` in ``[0, extent)``."""
    index = default_registry().backend("octree")()
    lo = rng.uniform(0, extent, (count, 3))
    index.build(np.arange(count), lo, lo + size)
    return index, index.pairs("all"), index.nodes(), lo


def test_a_leaf_lists_its_objects_and_each_tests_the_others_there():
    index, result, nodes, _ = _random_octree(np.random.default_rng(4), 300, extent=100, size=3)
    leaf = int(np.flatnonzero(nodes.is_leaf & (nodes.own_count > 1))[0])
    cell = cell_objects(index, nodes, leaf, result.pairs)
    assert sorted(cell.held.tolist()) == index.node_objects(leaf).tolist() and not cell.straddling
    assert (cell.tests == nodes.own_count[leaf] - 1).all()
    assert all(np.isin(pair, cell.held).any() for pair in cell.pairs)
    others = result.pairs[~np.isin(result.pairs, cell.held).any(axis=1)]
    assert len(others) + len(cell.pairs) == len(result.pairs)
    assert find_cell(nodes, nodes.core_lo[leaf], nodes.core_hi[leaf]) == leaf
    assert find_cell(nodes, [1e9] * 3, [2e9] * 3) == -1


@pytest.mark.parametrize("backend", ["octree", "bvh", "kdtree"])
def test_every_cell_s_tests_and_overlaps_match_a_walk_of_its_subtree(backend):
    """For every cell: each held object's tests are the references in the cell and its
    descendants whose bounds meet the object's box (less itself), found by walking the
    parent links one row at a time; its overlaps are its pairs of the frame."""
    index = default_registry().backend(backend)()
    rng = np.random.default_rng(5)
    lo = rng.uniform(0, 400, (600, 3))
    index.build(np.arange(600), lo, lo + rng.uniform(1, 60, (600, 3)))
    pairs = index.pairs("all").pairs
    nodes = index.nodes()
    checked = 0
    for row in range(len(nodes)):
        cell = cell_objects(index, nodes, row, pairs)
        if not len(cell.held):
            continue
        inside = np.zeros(len(nodes), dtype=bool)
        inside[row] = True
        for r in range(row + 1, len(nodes)):
            p = nodes.parent[r]
            inside[r] = p >= 0 and inside[p]
        for oid, tests in zip(cell.held.tolist(), cell.tests.tolist()):
            k = index.objects.slots_of(np.array([oid]))[0]
            box_lo, box_hi = index.objects.lo[k], index.objects.hi[k]
            meets = inside & np.all((nodes.lo <= box_hi) & (nodes.hi >= box_lo), axis=1)
            assert tests == max(int(nodes.own_count[meets].sum()) - 1, 0)
        overlaps = [int((pairs == oid).sum()) for oid in cell.held.tolist()]
        order = sorted(zip((-cell.tests).tolist(), [-n for n in overlaps], cell.held.tolist()))
        assert [oid for _, _, oid in order] == cell.held.tolist()  # heaviest first
        checked += 1
    assert checked > 5


@pytest.mark.slow
def test_e1m1s_hottest_cell_names_the_brushes_straddling_the_root_not_the_whole_level():
    if not E1M1.exists():
        pytest.skip(f"{E1M1} is not here")
    from editor.model.loading import open_level
    from editor.model.simulation import Simulation

    scene = open_level(str(E1M1)).document
    sim = Simulation(scene, "octree", seed=1)
    for _ in range(60):
        sim.step()
    top = sim.hotspots.ranking(1)[0]
    nodes = sim.index.nodes()
    row = find_cell(nodes, top.lo, top.hi)
    assert row == top.row
    cell = cell_objects(sim.index, nodes, row, sim.last_pairs.pairs)
    total = sim.index.objects.count
    assert 0 < len(cell.held) < total // 2  # what the cell stores, not all 1,568 inside its box
    assert sorted(cell.held.tolist()) == sim.index.node_objects(row).tolist()
    assert (np.diff(cell.tests) <= 0).all() and cell.tests[0] <= total - 1
    lines = describe_cell(cell, lambda oid: object_label(oid, scene))
    if nodes.depth[row] == 0:
        assert "straddles the root: up to" in lines[0]
    assert lines[0].split()[0] in ("brush", "wall") or "_" in lines[0].split()[0]


def test_the_hot_cells_are_the_rankings_cells_found_in_the_table_given():
    """hot_cells takes each cell's row from the ranking when the table given has the cell
    there, and searches it otherwise: the same cells either way, None for one gone."""
    from editor.model.hotspots import HotspotWindow

    rng = np.random.default_rng(6)
    index, result, nodes, lo = _random_octree(rng, 400, extent=200, size=6)
    window = HotspotWindow(4)
    window.push(1, nodes, result.node_tests, result.pairs)
    cells = hot_cells(window, 5, index, nodes, result.pairs)
    assert [spot for spot, _ in cells] == window.ranking(5)
    for spot, cell in cells:
        assert cell is not None and cell.row == spot.row == find_cell(nodes, spot.lo, spot.hi)
    # the same tree's table in another row order: each cell is searched, the same cells found
    order = rng.permutation(len(nodes))
    shuffled = type(nodes)(**{name: getattr(nodes, name)[order] if isinstance(getattr(nodes, name), np.ndarray)
                              and len(getattr(nodes, name)) == len(nodes) else getattr(nodes, name)
                              for name in nodes.__dataclass_fields__})
    for (_, cell), (_, moved) in zip(cells, hot_cells(window, 5, index, shuffled, None)):
        assert moved is not None and order[moved.row] == cell.row
    # a table without those cells
    other = default_registry().backend("octree")()
    other.build(np.arange(3), lo[:3] + 1e4, lo[:3] + 1e4 + 1)
    assert all(cell is None for _, cell in hot_cells(window, 5, other, other.nodes(), None))


def test_labels_prefer_a_games_names_then_the_levels_kinds():
    assert object_label(7, None, {7: "ogre"}) == "ogre 7"
    assert object_label(8, None, {7: "ogre"}) == "object 8"


def test_doom_walls_are_named_as_walls():
    wad = Path("/usr/share/games/doom/freedoom1.wad")
    if not wad.exists():
        pytest.skip(f"{wad} is not here (the freedoom package)")
    from editor.model.loading import open_level

    scene = open_level(f"{wad}:E1M1").document
    wall = next(oid for oid in scene.segment_ids())
    assert object_label(wall, scene) == f"wall {wall}"


@pytest.mark.parametrize("backend", ["octree", "bvh", "kdtree", "bsp", "grid"])
def test_the_subtree_of_every_cell_is_its_descendants(backend):
    """The cells below a hot cell, found a generation at a time, are exactly those whose chain
    of parents reaches it."""
    from editor.model.hotspot_pairs import _subtree

    index = default_registry().backend(backend)()
    rng = np.random.default_rng(9)
    lo = rng.uniform(0, 200, (400, 3))
    index.build(np.arange(400), lo, lo + rng.uniform(1, 12, (400, 3)))
    nodes = index.nodes()
    parent = np.asarray(nodes.parent)
    for row in range(len(nodes)):
        expected = np.zeros(len(nodes), dtype=bool)
        for r in range(len(nodes)):
            up = r
            while up >= 0 and up != row:
                up = parent[up]
            expected[r] = up == row
        assert (_subtree(nodes, row) == expected).all(), (backend, row)
