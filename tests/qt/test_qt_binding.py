"""The installed Qt binding does not leak references to Python's singletons while painting.

PySide6-Essentials 6.12.0 on Python 3.11 drops a reference to ``None`` on every ``void``
``QPainter`` call; the editor would abort after seconds of painting. pyproject.toml excludes it;
this test catches any binding with the same defect.
"""
from __future__ import annotations

import sys

from PySide6.QtGui import QColor, QImage, QPainter, QPen


def test_painting_keeps_singleton_reference_counts(qapp):
    image = QImage(64, 64, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    pen = QPen(QColor(255, 0, 0))
    before = [sys.getrefcount(x) for x in (None, True, False)]
    for _ in range(2000):
        painter.setPen(pen)
        painter.drawLine(0, 0, 10, 10)
    after = [sys.getrefcount(x) for x in (None, True, False)]
    painter.end()
    for name, b, a in zip(("None", "True", "False"), before, after):
        assert a > b - 200, f"{name} lost {b - a} references over 4000 QPainter calls"
