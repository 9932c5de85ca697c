"""A level opened in the background is tessellated once, on the loading thread: the window's
thread shows those arrays (2D hulls included) instead of building them again."""
from __future__ import annotations

import threading


def test_a_background_open_builds_the_geometry_off_the_window_thread(qtbot, settings,
                                                                      monkeypatch):
    from editor.qt import scene_geometry
    from editor.qt.main_window import MainWindow
    from editor.qt.views import brush_outlines

    built_on, hulls_on = [], []
    real_build, real_hull = scene_geometry.SceneGeometry.build, scene_geometry.convex_hull
    real_hulls = brush_outlines.convex_hulls

    def build(self, scene):
        built_on.append(threading.current_thread() is threading.main_thread())
        return real_build(self, scene)

    def hull(points):
        hulls_on.append(threading.current_thread() is threading.main_thread())
        return real_hull(points)

    def hulls(points, offsets):  # many at once (the level's)
        hulls_on.append(threading.current_thread() is threading.main_thread())
        return real_hulls(points, offsets)

    monkeypatch.setattr(scene_geometry.SceneGeometry, "build", build)
    monkeypatch.setattr(scene_geometry, "convex_hull", hull)
    monkeypatch.setattr(brush_outlines, "convex_hull", hull)
    monkeypatch.setattr(brush_outlines, "convex_hulls", hulls)
    window = MainWindow(settings=settings, use_gl=False)
    window.ask_save = lambda: "discard"
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.state.document_replaced, timeout=60000):
        assert window.open_file(None, background=True)
    window.show()
    qtbot.waitExposed(window)
    window.state.flush()
    assert built_on == [False], "built once, on the loading thread"
    assert hulls_on and not any(hulls_on), "2D hulls computed on the loading thread only"
    assert len(window.state.scene_arrays.brush_ids) == len(window.document.scene.brush_ids())


def test_a_background_open_builds_the_2d_outline_paths_off_the_window_thread(qtbot, settings,
                                                                            monkeypatch):
    from editor.qt.main_window import MainWindow
    from editor.qt.views import brush_outlines

    rebuilt_on = []
    real = brush_outlines.BrushOutlines._rebuild

    def rebuild(self, chunk):
        rebuilt_on.append(threading.current_thread() is threading.main_thread())
        return real(self, chunk)

    monkeypatch.setattr(brush_outlines.BrushOutlines, "_rebuild", rebuild)
    window = MainWindow(settings=settings, use_gl=False)
    window.ask_save = lambda: "discard"
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.state.document_replaced, timeout=60000):
        assert window.open_file(None, background=True)
    window.show()
    qtbot.waitExposed(window)
    window.state.flush()
    assert rebuilt_on and not any(rebuilt_on), "outline paths built on the loading thread"
    brushes = set(window.document.scene.brush_ids())
    for view in window.views2d.values():  # every view shows every brush, in its chunks
        assert {oid for c in view.outlines.chunks for oid in c.ids} == brushes
        assert view.brushes.items() and all(c.fill.elementCount() for c in view.outlines.chunks
                                            if c.ids)
