"""GUI test fixtures: a window on the demo level with its settings in a temporary file.

``Qt.AA_ShareOpenGLContexts`` must be set before the QApplication exists (pytest-qt creates
it lazily), so it is set at configure time. Non-GL tests build the window without the OpenGL
view, so they also run on the ``offscreen`` platform; GL tests are marked ``gl`` and skip
cleanly when no context can be made.
"""
from __future__ import annotations

import pytest


def pytest_configure(config):
    from PySide6.QtCore import QCoreApplication, Qt
    QCoreApplication.setAttribute(Qt.AA_ShareOpenGLContexts)


@pytest.fixture
def settings(tmp_path):
    from PySide6.QtCore import QSettings
    return QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)


def _make_window(qtbot, settings, use_gl: bool):
    from editor.qt.main_window import MainWindow
    window = MainWindow(settings=settings, use_gl=use_gl)
    window.ask_save = lambda: "discard"
    qtbot.addWidget(window)
    window.resize(1400, 900)
    assert window.open_file(None, background=False)
    window.show()
    qtbot.waitExposed(window)
    window.state.flush()
    return window


@pytest.fixture
def window(qtbot, settings):
    """The editor on the demo level, without the GL view."""
    return _make_window(qtbot, settings, use_gl=False)


@pytest.fixture
def gl_window(qtbot, settings, qapp):
    from editor.qt.glcheck import gl_status
    ok, reason = gl_status()
    if not ok:
        pytest.skip(f"no OpenGL: {reason}")
    return _make_window(qtbot, settings, use_gl=True)


# --------------------------------------------------------------------------- input helpers
def view_pos(view, u: float, v: float):
    """Viewport pixel of world point (u, v) in a 2D view."""
    from PySide6.QtCore import QPointF
    scene_pt = view.vb.mapViewToScene(QPointF(u, v))
    return view.mapFromScene(scene_pt)


def _send(view, kind, pos, button, buttons, modifiers):
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QMouseEvent
    from PySide6.QtWidgets import QApplication
    target = view.viewport()
    local = QPointF(pos)
    ev = QMouseEvent(kind, local, target.mapToGlobal(local), button, buttons, modifiers)
    QApplication.sendEvent(target, ev)


def drag(view, start, end, modifiers=None, steps: int = 6):
    """Press at world ``start``, move in steps, release at world ``end`` (left button)."""
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication
    mods = modifiers if modifiers is not None else Qt.NoModifier
    p0 = view_pos(view, *start)
    p1 = view_pos(view, *end)
    _send(view, QEvent.MouseButtonPress, p0, Qt.LeftButton, Qt.LeftButton, mods)
    for k in range(1, steps + 1):
        f = k / steps
        p = p0 + (p1 - p0) * f
        # pyqtgraph drops mouse moves closer than 10 ms apart (its 'mouseRateLimit', 100 per
        # second): a drag whose moves arrive faster than that is not seen as a drag at all
        QTest.qWait(11)
        _send(view, QEvent.MouseMove, p, Qt.NoButton, Qt.LeftButton, mods)
        QApplication.processEvents()
    _send(view, QEvent.MouseButtonRelease, p1, Qt.LeftButton, Qt.NoButton, mods)
    QApplication.processEvents()


def click(view, at, modifiers=None):
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtWidgets import QApplication
    mods = modifiers if modifiers is not None else Qt.NoModifier
    p = view_pos(view, *at)
    _send(view, QEvent.MouseButtonPress, p, Qt.LeftButton, Qt.LeftButton, mods)
    _send(view, QEvent.MouseButtonRelease, p, Qt.LeftButton, Qt.NoButton, mods)
    QApplication.processEvents()


@pytest.fixture(autouse=True)
def _no_worker_outlives_its_test():
    """A worker thread still running when its window is destroyed would abort the process."""
    yield
    from editor.qt.workers import wait_for_workers
    wait_for_workers()


def switch_backend(window, qtbot, name: str, timeout_ms: int = 600_000) -> None:
    """Choose ``name`` in the Partition panel's backend box, as a person does, and wait until
    its tree is the one shown: with a cold kernel cache a first switch compiles in the
    background for a while."""
    combo = window.params_panel.backend_combo
    combo.setCurrentIndex(combo.findData(name))
    doc = window.document
    qtbot.waitUntil(lambda: doc.index.name == name and not doc.rebuilding, timeout=timeout_ms)
    window.state.flush()
