"""The tree overlay, parameter panel, ray and frustum tools against the index's own answers."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from plugins.brute import BruteForce
from spatial.registry import default_registry

from .conftest import click, drag, switch_backend


def _brute(doc):
    scene = doc.scene
    ids = scene.indexed_ids()
    lo, hi = scene.bounds_of(ids)
    brute = BruteForce()
    brute.build(ids, lo, hi)
    return brute


def test_backend_chooser_lists_every_registered_backend_that_suits_the_level(window):
    combo = window.params_panel.backend_combo
    listed = {combo.itemData(i) for i in range(combo.count())}
    backends = default_registry().backends
    assert listed == {name for name, cls in backends.items() if not cls.source_formats}
    assert "shipped_bsp" not in listed, "the demo level ships no tree of its own"


def test_changing_a_parameter_changes_the_overlay_node_count(window, qtbot):
    doc, st = window.document, window.state
    window.params_panel.choose_backend("octree")
    st.flush()
    assert doc.index.name == "octree"
    before = st.overlay.total
    assert before == len(doc.index.nodes()) > 1
    spin = window.params_panel.widgets["max_depth"]
    spin.setValue(1)  # a root and at most one level of children
    st.flush()
    assert doc.index.params.max_depth == 1
    assert doc.scene.settings.params["max_depth"] == 1, "the change is recorded in the document"
    after = st.overlay.total
    assert after == len(doc.index.nodes())
    assert after < before
    assert int(st.node_table.depth.max()) <= 1
    drawn_3d = len(st.overlay.lines3d) // 24
    assert drawn_3d == st.overlay.count
    doc.stack.undo()  # the parameter change is one undoable step
    st.flush()
    assert st.overlay.total == before
    assert spin.value() == 16, "the widget follows the model"


def test_overlay_filters_and_metric(window):
    st = window.state
    window.params_panel.choose_backend("octree")
    st.set_overlay_settings(leaves_only=True)
    st.flush()
    table = st.node_table
    assert st.overlay.count == int(table.is_leaf.sum())
    st.set_overlay_settings(leaves_only=False, min_depth=1, max_depth=1)
    st.flush()
    assert st.overlay.count == int((table.depth == 1).sum())
    window.overlay_panel.set_metric("own_count")
    st.flush()
    geom = st.overlay
    assert geom.metric == "own_count"
    assert geom.vmax == table.own_count[geom.rows].max()
    assert "Objects in node" in window.overlay_panel.legend_title.text()


def test_object_counts_are_written_only_where_legible(window):
    st = window.state
    top = window.views2d["Top"]
    window.params_panel.choose_backend("quadtree")
    st.flush()
    top._update_labels()
    shown = top.visible_label_count()
    assert shown > 0
    # zoomed far out, no cell is big enough for a number
    top.vb.setRange(xRange=(-200000, 200000), yRange=(-200000, 200000), padding=0)
    top._update_labels()
    assert top.visible_label_count() == 0


def test_ray_tool_reports_the_hits_of_query_ray(window):
    doc, st = window.document, window.state
    window.params_panel.choose_backend("kdtree")
    st.set_tool("ray")
    top = window.views2d["Top"]
    drag(top, (-480, -300), (480, 300))
    ray = st.ray
    assert ray is not None and ray.result is not None
    expect = doc.index.query_ray(ray.origin, ray.direction)
    np.testing.assert_array_equal(ray.result.ids, expect.ids)
    np.testing.assert_allclose(ray.result.t, expect.t)
    assert len(expect.ids) > 0
    brute = _brute(doc).query_ray(ray.origin, ray.direction)
    np.testing.assert_array_equal(np.sort(ray.result.ids), np.sort(brute.ids))
    panel = window.query_panel
    listed = [panel.hits.item(i).data(Qt.UserRole) for i in range(panel.hits.count())]
    assert listed == expect.ids.tolist()
    assert f"{expect.nodes_visited} nodes visited" in panel.ray_info.text()
    assert f"brute force tests {doc.index.objects.count}" in panel.ray_info.text()
    # clicking a hit selects it
    panel.hits.itemClicked.emit(panel.hits.item(0))
    assert doc.selection == {listed[0]}
    # the visited nodes are highlighted in the views
    assert window.views2d["Top"].query.layer_count() > 0


def test_frustum_tool_reports_the_objects_of_query_frustum(window):
    doc, st = window.document, window.state
    window.params_panel.choose_backend("octree")
    st.set_tool("frustum")
    top = window.views2d["Top"]
    drag(top, (0, -450), (0, 300))
    fr = st.frustum
    assert fr is not None and fr.result is not None
    planes = fr.shot.planes()
    expect = doc.index.query_frustum(planes, trace=True)
    np.testing.assert_array_equal(fr.result.ids, expect.ids)
    np.testing.assert_array_equal(np.sort(fr.result.ids), _brute(doc).query_frustum(planes).ids)
    assert 0 < len(expect.ids) < doc.index.objects.count
    assert f"{len(expect.ids)} objects inside" in window.query_panel.frustum_info.text()
    visits = st.query_visits()
    assert (visits == 2).sum() == len(np.unique(expect.visited))
    window.query_panel.select_inside.click()
    assert doc.selection == set(expect.ids.tolist())


def test_node_inspector_shows_the_clicked_node_and_selects_its_objects(window):
    doc, st = window.document, window.state
    window.params_panel.choose_backend("quadtree")
    st.flush()
    st.set_tool("inspect")
    top = window.views2d["Top"]
    click(top, (300, 300))
    row = st.inspected_node
    assert row >= 0
    table = st.node_table
    assert table.lo[row, 0] <= 300 <= table.hi[row, 0] and table.lo[row, 1] <= 300 <= table.hi[row, 1]
    panel = window.inspector_panel
    # the answer comes to the front: the Node tab is raised over Statistics
    assert not window.docks["inspector"].visibleRegion().isEmpty()
    objs = doc.index.node_objects(row).tolist()
    assert panel.objects.count() == len(objs)
    assert f"depth {table.depth[row]}" in panel.info.text()
    if objs:
        panel._select([panel.objects.item(0)])
        assert doc.selection == {objs[0]}


def test_loose_octree_shows_loose_bounds_and_dimmer_core_cells(window):
    st = window.state
    window.params_panel.choose_backend("octree")
    window.params_panel.widgets["looseness"].setValue(2.0)
    st.flush()
    geom = st.overlay
    assert geom.has_loose
    assert len(geom.core_lines3d) == len(geom.lines3d)
    assert geom.core_colours3d[:, :3].max() < geom.colours3d[:, :3].max(), "core cells are dimmer"
    table = st.node_table
    assert (table.hi - table.lo >= table.core_hi - table.core_lo).all()
    assert "loose bounds" in window.overlay_panel.summary.text()
    window.params_panel.widgets["looseness"].setValue(1.0)
    st.flush()
    assert not st.overlay.has_loose


def test_statistics_panel_reports_the_live_index(window):
    doc, st = window.document, window.state
    window.params_panel.choose_backend("quadtree")
    st.flush()
    panel = window.stats_panel
    panel.refresh(force=True)
    stats = doc.index.stats()
    pairs = doc.index.pairs("all")
    assert panel.values["nodes"].text() == str(stats["nodes"])
    assert panel.values["leaves"].text() == str(stats["leaves"])
    assert panel.stats["overlapping"] == len(pairs.pairs)
    assert panel.stats["candidates"] == pairs.tests
    assert f"ideal {stats['ideal_depth']}" in panel.values["depth"].text()
    # quadtree leaves store straddlers in every leaf they overlap: references exceed objects
    assert stats["references"] > doc.index.objects.count
    bars = [i for i in panel.per_leaf.getPlotItem().items if hasattr(i, "opts") and "height" in i.opts]
    assert bars and bars[0].opts["height"].sum() == stats["leaves"]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n, cls in default_registry().backends.items()
                                         if not cls.source_formats))
def test_every_registered_backend_draws_queries_and_reports(window, name):
    doc, st = window.document, window.state
    window.params_panel.choose_backend(name)
    st.flush()
    assert doc.index.name == name
    table = doc.index.nodes()
    assert st.overlay.total == len(table)
    assert np.isfinite(st.overlay.lines3d).all(), "every drawn box has finite corners"
    assert window.params_panel.backend_combo.currentData() == name
    ray = st.cast_ray((-500, -20, 40), (1, 0, 0))
    np.testing.assert_array_equal(ray.result.ids, doc.index.query_ray(ray.origin, ray.direction).ids)
    window.stats_panel.refresh(force=True)
    assert window.stats_panel.values["nodes"].text() == str(len(table))
    st.set_overlay_settings(metric="query_visits")
    st.flush()
    assert st.overlay.metric == "query_visits"


def test_split_planes_get_a_legend_line_only_while_drawn(window, qtbot):
    st, panel = window.state, window.overlay_panel
    switch_backend(window, qtbot, "bsp")
    assert panel.planes.isEnabled()
    assert not panel.planes_key.isVisibleTo(panel), "no planes drawn yet: no key for them"
    qtbot.mouseClick(panel.planes, Qt.LeftButton, pos=panel.planes.rect().center())
    st.flush()
    assert st.overlay_settings.show_planes
    assert len(st.overlay.plane_lines3d) > 0
    assert panel.planes_key.isVisibleTo(panel)
    assert "split plane" in panel.planes_key.text()
    switch_backend(window, qtbot, "octree")  # no planes in an octree: the key goes
    assert not panel.planes_key.isVisibleTo(panel)
