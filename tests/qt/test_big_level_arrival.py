"""A big level arrives in the window in pieces, each painted in a frame of its own.

Opening 50,000 brushes used to freeze the window for most of a second in one go: the window's
thread wrapped every outline chunk of the three 2D views in items, then the first frame
rasterised all of them, drew the 3D view and built the overlay. Now the loading thread also
computes the level's bounds, the walls' and mesh's 2D paths and the Statistics panel's sizes;
the 2D views wrap their chunks in items a slice per event-loop turn (after the 3D view's first
full frame), a big mesh is stroked one view per frame, and the first overlay of a big tree is
built once, with its readable depth limit. These tests count that work per thread and per turn.
"""
from __future__ import annotations

import math
import sys
import threading
from pathlib import Path

import pytest

from benchmarks.big_map import write_map


@pytest.fixture(scope="module")
def box_map(tmp_path_factory):
    path = tmp_path_factory.mktemp("arrival") / "boxes.map"
    write_map(str(path), 1500)
    return str(path)


@pytest.fixture(scope="module")
def terrain(tmp_path_factory):
    from benchmarks.big_mesh import write_terrain
    path = tmp_path_factory.mktemp("arrival") / "terrain.obj"
    write_terrain(Path(path), 40)  # 3,042 triangles
    return str(path)


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _open_and_wait(window, qtbot, path) -> None:
    old = window.document
    assert window.files.open_file(path, background=True)
    qtbot.waitUntil(lambda: window.document is not old, timeout=120_000)


def _all_drawn(window) -> bool:
    return all(view.arrival_pending() == 0 for view in window.views2d.values())


def test_brush_chunks_arrive_a_slice_per_turn(window, qtbot, box_map, monkeypatch):
    from editor.qt.editor_state import EditorState
    from editor.qt.views import brush_layer

    monkeypatch.setattr(brush_layer, "ARRIVAL_SLICE", 10)
    made_at_arrival = {}
    slices = []
    real_set_document, real_add = EditorState.set_document, brush_layer.BrushLayer._add_items

    def set_document(self, document, geometry=None):
        real_set_document(self, document, geometry)
        for name, view in window.views2d.items():
            made_at_arrival[name] = len(view.brushes.items())

    def add_items(self, chunks):
        chunks = list(chunks)
        slices.append((len(chunks), _on_main_thread()))
        return real_add(self, chunks)

    monkeypatch.setattr(EditorState, "set_document", set_document)
    monkeypatch.setattr(brush_layer.BrushLayer, "_add_items", add_items)
    _open_and_wait(window, qtbot, box_map)
    assert made_at_arrival == {name: 0 for name in window.views2d}, \
        "the window's thread wrapped chunks in items while the level arrived"
    qtbot.waitUntil(lambda: _all_drawn(window), timeout=60_000)
    for view in window.views2d.values():
        chunks = len([c for c in view.outlines.chunks if c.ids])
        assert chunks > 10
        assert len(view.brushes.items()) == 2 * chunks
        assert view.brushes.arrival_slices >= math.ceil(chunks / 10)
    assert slices and max(n for n, _ in slices) <= 10
    assert all(main for _, main in slices)


def test_slices_wait_for_a_heavier_frame_due(window, qtbot, box_map, monkeypatch):
    """While ``wait_for()`` says a heavier frame is due (the 3D view's first full frame of
    the level), no slice is made; once it is drawn, the slices come."""
    from editor.qt.views import brush_layer

    monkeypatch.setattr(brush_layer, "ARRIVAL_SLICE", 10)
    due = [True]
    for view in window.views2d.values():
        view.brushes.wait_for = lambda: due[0]
    _open_and_wait(window, qtbot, box_map)
    qtbot.wait(300)  # several pauses
    assert all(len(view.brushes.items()) == 0 for view in window.views2d.values())
    due[0] = False
    qtbot.waitUntil(lambda: _all_drawn(window), timeout=60_000)
    assert all(len(view.brushes.items()) > 0 for view in window.views2d.values())


def test_the_window_thread_walks_no_bounds_builds_no_level_paths_nor_stats(window, qtbot, terrain,
                                                                            monkeypatch):
    """A mesh read in the background brings its bounds, the 2D views' triangle paths and
    the Statistics panel's sizes, all made on the loading thread."""
    from editor.model.scene import Scene
    from editor.qt.views import level_paths, view2d
    from spatial.contract import SpatialIndex

    calls = {"bounds": [], "paths": [], "stats": []}

    def counted(kind, real):
        def call(*args, **kwargs):
            calls[kind].append(_on_main_thread())
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(Scene, "_walk_bounds", counted("bounds", Scene._walk_bounds))
    monkeypatch.setattr(level_paths, "level_paths", counted("paths", level_paths.level_paths))
    monkeypatch.setattr(view2d, "level_paths", counted("paths", view2d.level_paths))
    monkeypatch.setattr(SpatialIndex, "stats", counted("stats", SpatialIndex.stats))
    _open_and_wait(window, qtbot, terrain)
    window.state.flush()
    panel = window.stats_panel
    qtbot.waitUntil(lambda: panel.values["nodes"].text() == str(len(window.state.node_table)),
                    timeout=10_000)
    qtbot.waitUntil(lambda: _all_drawn(window), timeout=10_000)
    for kind, threads in calls.items():
        assert threads, f"{kind}: never made"
        assert not any(threads), f"{kind}: made on the window's thread"
    for view in window.views2d.values():
        assert view.drawn["triangles"] == 3042 and view.mesh.layer_count() == 1


def test_a_big_mesh_is_stroked_one_view_per_frame(window, qtbot, terrain, monkeypatch):
    from PySide6.QtCore import QEvent, QObject

    from editor.qt.editor_state import EditorState
    from editor.qt.views import view2d

    monkeypatch.setattr(view2d, "LEVEL_ARRIVAL_SEGMENTS", 100)
    events = []
    real_draw, real_set_document = view2d.View2D._draw_level, EditorState.set_document

    def draw(self, level, built=None):
        events.append(("draw", tuple(self.axes)))
        return real_draw(self, level, built)

    def set_document(self, document, geometry=None):
        real_set_document(self, document, geometry)
        events.append(("arrived", None))

    class PaintLog(QObject):
        def __init__(self, axes):
            super().__init__()
            self.axes = axes

        def eventFilter(self, watched, event):  # noqa: N802 (Qt's name)
            if event.type() == QEvent.Type.Paint:
                events.append(("paint", self.axes))
            return False

    logs = [PaintLog(tuple(view.axes)) for view in window.views2d.values()]
    for log, view in zip(logs, window.views2d.values()):
        view.viewport().installEventFilter(log)
    monkeypatch.setattr(view2d.View2D, "_draw_level", draw)
    monkeypatch.setattr(EditorState, "set_document", set_document)
    _open_and_wait(window, qtbot, terrain)
    qtbot.waitUntil(lambda: _all_drawn(window), timeout=10_000)
    qtbot.wait(100)
    after = events[events.index(("arrived", None)):]
    draws = [k for k, (kind, _) in enumerate(after) if kind == "draw"]
    assert len(draws) == 3, after
    for first, second in zip(draws, draws[1:]):
        drawn_view = after[first][1]
        assert ("paint", drawn_view) in after[first:second], \
            "a second view stroked the mesh before the first one had painted it"
    # each waited for the paint, not for its pauses to run out
    assert all(view._level_waits < view2d.ARRIVAL_MAX_WAITS for view in window.views2d.values())


def test_the_first_overlay_of_a_big_tree_is_built_with_its_depth_limit(window, qtbot, box_map,
                                                                      monkeypatch):
    """The readable depth limit is chosen when the tree's table is read, so the overlay is
    not built first for the whole tree (all 2,000,000 nodes of a mesh's octree: 0.2 s) and
    then again with the limit."""
    from editor.qt import editor_state
    from editor.qt.compare import readable_view

    monkeypatch.setattr(readable_view, "READABLE_NODES", 50)
    depths = []
    real = editor_state.build_overlay

    def build(table, settings, *args, **kwargs):
        depths.append(settings.max_depth)
        return real(table, settings, *args, **kwargs)

    monkeypatch.setattr(editor_state, "build_overlay", build)
    _open_and_wait(window, qtbot, box_map)
    window.state.flush()
    limit = window.readable_trees.auto_limit
    assert limit is not None and limit < readable_view.NO_LIMIT
    assert depths and set(depths) == {limit}, depths


def test_opening_a_level_does_not_resize_the_views(qtbot, settings, box_map):
    """A level opened into an empty window must not relayout it: a wider Properties title
    widened its dock, which resized every view and painted the whole level a second time."""
    from editor.qt.main_window import MainWindow

    window = MainWindow(settings=settings, use_gl=False)
    window.ask_save = lambda: "discard"
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    sizes = {name: view.size() for name, view in window.views2d.items()}
    assert window.files.open_file(box_map, background=True)
    qtbot.waitUntil(lambda: window.document is not None, timeout=120_000)
    qtbot.waitUntil(lambda: _all_drawn(window), timeout=60_000)
    qtbot.wait(100)
    assert {name: view.size() for name, view in window.views2d.items()} == sizes


@pytest.mark.gl
def test_skipped_faces_are_uploaded_before_the_frame_that_draws_them(gl_window, qtbot, box_map,
                                                                     monkeypatch):
    """The first frame of a big level leaves the brush faces out (its camera just moved); they
    are uploaded in a turn of their own, so the frame that draws them only draws."""
    from editor.qt.views import gl_ranges, view3d

    monkeypatch.setattr(view3d, "MOTION_LOD_VERTICES", 100)
    view = gl_window.view3d
    uploads = []
    real_upload = gl_ranges.RangeUploads.upload
    paint_code = gl_ranges.RangeTrianglesItem.paint.__code__

    def in_paint() -> bool:
        frame = sys._getframe(2)
        while frame is not None and frame.f_code is not paint_code:
            frame = frame.f_back
        return frame is not None

    turns = []  # the turn (call of the upload handler) each whole buffer went up in
    real_turn = view._upload_skipped_faces

    def upload(self, vbo, array):
        if self is view.faces.position_uploads and array is not None and len(array):
            uploads.append((self.everything, in_paint()))
        if self in (view.faces.position_uploads, view.faces.colour_uploads) and \
                array is not None and len(array) and self.everything and not in_paint():
            turns.append((self is view.faces.colour_uploads, len(calls)))
        return real_upload(self, vbo, array)

    calls = []

    def turn():
        calls.append(1)
        real_turn()

    monkeypatch.setattr(view, "_upload_skipped_faces", turn)
    view._face_upload.timeout.disconnect()
    view._face_upload.timeout.connect(turn)

    monkeypatch.setattr(gl_ranges.RangeUploads, "upload", upload)
    old = gl_window.document
    assert gl_window.files.open_file(box_map, background=True)
    qtbot.waitUntil(lambda: gl_window.document is not old, timeout=120_000)
    drawn = view.faces.frames_drawn
    qtbot.waitUntil(lambda: view.faces.frames_drawn > drawn, timeout=10_000)
    whole = [in_paint for everything, in_paint in uploads if everything]
    assert whole == [False], uploads
    # positions and colours (22 and 29 MB on 50,000 brushes) each in a turn of their own
    assert sorted(colour for colour, _ in turns) == [False, True], turns
    assert len({turn for _, turn in turns}) == 2, turns
