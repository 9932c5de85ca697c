"""Opening a big level: the draw arrays and 2D hulls come from level-wide numpy passes (no
step per brush), they equal what a brush edited alone gets, and the window's thread only
hands the prepared chunks to a fixed number of items in each view."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from benchmarks.big_map import write_map
from tests.conftest import shared_file


@pytest.fixture(scope="module")
def box_map(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "boxes.map"
    write_map(str(path), 1500)
    return str(path)


def _open_in_background(window, qtbot, path) -> None:
    """Open ``path`` as File → Open does for a big file (on the loading thread) and wait for
    it to become the window's document."""
    old = window.document
    assert window.files.open_file(path, background=True)
    qtbot.waitUntil(lambda: window.document is not old, timeout=120_000)


def test_hulls_of_many_point_sets_equal_one_at_a_time():
    from editor.qt.scene_geometry import convex_hull, convex_hulls
    rng = np.random.default_rng(7)
    sets = [rng.integers(-5, 5, size=(int(rng.integers(1, 20)), 2)) * rng.choice([1.0, 1 / 3])
            for _ in range(2000)]
    offsets = np.cumsum([0] + [len(s) for s in sets])
    points, hull_offsets = convex_hulls(np.concatenate(sets), offsets)
    for k, s in enumerate(sets):
        np.testing.assert_array_equal(points[hull_offsets[k]:hull_offsets[k + 1]], convex_hull(s))


def test_preparing_a_level_makes_no_per_brush_tessellation_or_hull(box_map, monkeypatch):
    from editor.model.loading import open_level
    from editor.qt import scene_geometry
    from editor.qt.views import brush_outlines

    scene = open_level(box_map).document
    calls = {"pieces": 0, "hull": 0}
    real_pieces, real_hull = scene_geometry._pieces, scene_geometry.convex_hull

    def pieces(brush):
        calls["pieces"] += 1
        return real_pieces(brush)

    def hull(points):
        calls["hull"] += 1
        return real_hull(points)

    monkeypatch.setattr(scene_geometry, "_pieces", pieces)
    monkeypatch.setattr(brush_outlines, "convex_hull", hull)
    geometry = scene_geometry.prepare_geometry(scene)
    arrays = geometry._arrays
    assert len(arrays.brush_ids) == len(scene.brush_ids()) == 1500
    assert calls == {"pieces": 0, "hull": 0}, "one pass over the level, not a call per brush"
    for outlines in arrays.outlines.values():
        assert set(outlines.outline_segments()) == set(scene.brush_ids())


def test_level_pass_equals_each_brush_alone():
    """Brushes of a real map (not boxes): the level-wide pass gives each brush exactly what
    the one-brush path of an edit gives it, so a patched range equals a fresh build."""
    from editor.model.loading import open_level
    from editor.qt.scene_geometry import SceneGeometry, _pieces, convex_hull

    scene = open_level(str(shared_file("quake", "quake_id1_e1m1.map"))).document
    arrays = SceneGeometry().build(scene)
    assert len(arrays.brush_ids) == len(scene.brush_ids())
    for oid in arrays.brush_ids.tolist()[::7]:
        batch, alone = arrays.brush_pieces[oid], _pieces(scene.brush(oid))
        for a, b in zip((batch.vertices, batch.triangles, batch.tri_normals, batch.edges),
                        (alone.vertices, alone.triangles, alone.tri_normals, alone.edges)):
            np.testing.assert_array_equal(a, b)
        solid = scene.brush(oid).solid
        np.testing.assert_array_equal(batch.triangles, solid.triangles())
        np.testing.assert_array_equal(batch.edges, solid.edges())
        assert convex_hull(batch.vertices[:, :2]).shape[1] == 2


def test_showing_a_prepared_level_adds_a_fixed_number_of_items(window, box_map, monkeypatch):
    """The chunks' items hang under two group items per view: the window's thread adds
    those to the view boxes, not two pyqtgraph items per chunk (thousands on a big level)."""
    import pyqtgraph as pg

    added = []
    real = pg.ViewBox.addItem

    def add_item(self, item, *args, **kwargs):
        added.append(threading.current_thread() is threading.main_thread())
        return real(self, item, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pg.ViewBox, "addItem", add_item)
        old = window.document
        assert window.open_file(box_map, background=True)
        import time
        deadline = time.monotonic() + 60
        from PySide6.QtWidgets import QApplication
        while window.document is old and time.monotonic() < deadline:
            QApplication.processEvents()
            time.sleep(0.01)
        window.state.flush()
    chunks = sum(len([c for c in v.outlines.chunks if c.ids]) for v in window.views2d.values())
    assert chunks > 30
    assert len(added) <= 8 * len(window.views2d), (len(added), chunks)
    for view in window.views2d.values():
        assert len(view.brushes.items()) == 2 * len([c for c in view.outlines.chunks if c.ids])


def test_a_level_read_in_the_background_comes_with_its_index(window, qtbot, box_map):
    """The loading thread builds the level's index for its settings too, so the window's
    thread builds none when the level arrives; the index is the one a sync builds itself."""
    from editor.model import IndexSync
    from editor.model.index_input import IndexInput
    from editor.model.loading import open_level

    builds = []
    real = IndexInput.build

    def build(self, index):
        builds.append(threading.current_thread() is threading.main_thread())
        return real(self, index)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(IndexInput, "build", build)
        _open_in_background(window, qtbot, box_map)
    doc = window.document
    assert builds and not any(builds), "built on the window's thread"
    assert doc.sync.follows_document and not doc.rebuilding
    alone = IndexSync(open_level(box_map).document, doc.index.name)
    assert doc.index.stats()["nodes"] == alone.index.stats()["nodes"]
    assert doc.index.objects.count == alone.index.objects.count
    # and it follows the document's settings from there, as any document's index does
    combo = window.params_panel.backend_combo
    combo.setCurrentIndex(combo.findText("bvh"))
    qtbot.waitUntil(lambda: doc.index.name == "bvh" and not doc.rebuilding, timeout=120_000)


def test_the_first_overlay_takes_the_node_table_read_with_the_level(window, qtbot, box_map):
    """The loading thread reads the index's node table with the level: the window's thread
    reads it neither for the first overlay, nor for the tree diff's first snapshot, nor for
    the Statistics panel's sizes (on a 2,000,000-triangle mesh each read took seconds)."""
    import sys

    from spatial.contract import SpatialIndex

    callers = []
    real = SpatialIndex.nodes

    def nodes(self):
        if threading.current_thread() is threading.main_thread():
            callers.append(sys._getframe(1).f_code.co_name)
        return real(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SpatialIndex, "nodes", nodes)
        _open_in_background(window, qtbot, box_map)
        window.state.flush()
        panel = window.stats_panel
        qtbot.waitUntil(lambda: panel.values["nodes"].text() == str(len(window.state.node_table)),
                        timeout=10_000)  # the Statistics panel shows the new tree's sizes
    doc = window.document
    assert panel.isVisible()
    assert not {"_fetch_table", "_snapshot", "stats"} & set(callers), callers
    # and what the window shows is that index's own table
    fresh = doc.index.nodes()
    assert len(window.state.node_table) == len(fresh)
    np.testing.assert_array_equal(window.state.node_table.lo, fresh.lo)
    assert window.state.overlay is not None and window.state.overlay.count > 0


def test_an_overlay_setting_draws_the_tree_again_without_reading_it(window, qtbot, box_map):
    """A change of the overlay's settings alone (the panel's "Leaves only") redraws the
    overlay from the node table already read; an edit of the level reads it again."""
    from editor.model import SetSelection, Transform
    from spatial.contract import SpatialIndex

    _open_in_background(window, qtbot, box_map)
    qtbot.waitUntil(window.tools.ready, timeout=300_000)
    window.state.flush()
    reads = []
    real = SpatialIndex.nodes

    def nodes(self):
        reads.append(threading.current_thread() is threading.main_thread())
        return real(self)

    state, doc = window.state, window.document
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SpatialIndex, "nodes", nodes)
        shown = state.overlay
        window.overlay_panel.leaves.setChecked(not window.overlay_panel.leaves.isChecked())
        state.flush()
        assert state.overlay is not shown and state.overlay_settings.leaves_only
        assert not any(reads), "the tree was read again for a setting"
        table = state.node_table
        oid = int(doc.scene.brush_ids()[0])
        doc.push(SetSelection([oid]))
        doc.push(Transform([oid], delta=np.array([64.0, 0.0, 0.0]), text="Move"))
        state.flush()
        assert state.node_table is not table, "an edit changes the tree: it is read again"
    np.testing.assert_array_equal(state.node_table.lo, doc.index.nodes().lo)


def test_the_first_pair_count_runs_on_a_copy_made_with_the_level(window, qtbot, box_map):
    """The Statistics panel counts pairs on a copy of the index; a level read in the
    background brings one made on the loading thread, so the window's thread copies nothing
    (copying a 2,000,000-triangle index there held the window 1.5 s)."""
    import copy

    from spatial.contract import SpatialIndex

    copied_here = []
    real = copy.deepcopy

    def deepcopy(value, memo=None):
        if isinstance(value, SpatialIndex) and threading.current_thread() is threading.main_thread():
            copied_here.append(value)
        return real(value, memo)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(copy, "deepcopy", deepcopy)
        _open_in_background(window, qtbot, box_map)
        panel = window.stats_panel
        panel.stats = {}
        window.state.flush()
        qtbot.waitUntil(lambda: "candidates" in panel.stats, timeout=60_000)
    # (the demo level the window started with, opened on the window's thread, may have its
    # own first count meanwhile: the loading thread no longer holds the lock to stop it)
    assert not any(index is window.document.index for index in copied_here)
    pairs = window.document.index.count_pairs("all")
    assert (panel.stats["candidates"], panel.stats["overlapping"]) == (pairs.tests, pairs.overlapping)
