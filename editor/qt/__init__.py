"""The Qt editor GUI of Partition Studio (PySide6 + pyqtgraph + PyOpenGL).

Entry point: :func:`editor.qt.app_main.run_gui`. Nothing outside this package imports Qt.

PySide6-Essentials is held below 6.12 in ``pyproject.toml``: 6.12.0 on Python 3.11 releases a
reference to ``None`` it never took on every ``void`` ``QPainter`` call (``setPen``,
``drawLine``...), so a busy view aborts the process with "none_dealloc" after a few seconds of
painting. ``tests/qt/test_qt_binding.py`` fails if an installed binding has that leak.
"""
