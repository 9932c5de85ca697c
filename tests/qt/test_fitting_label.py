"""A status-bar label shows the longest form of its text that fits, never a cut-off one."""
from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QWidget

from editor.qt.fitting_label import FittingLabel

FORMS = ["Live link: connected to 127.0.0.1:7878 · 1,200 frames received (60/s), 1,199 processed",
         "Live: connected · 1,200 in · 1,199 processed",
         "Live: connected at 60/s"]


_HOLDERS: list[QWidget] = []  # alive until the test's widgets are closed


def _label_in(qtbot, width: int) -> FittingLabel:
    holder = QWidget()
    _HOLDERS.append(holder)
    qtbot.addWidget(holder)
    layout = QHBoxLayout(holder)
    label = FittingLabel()
    label.set_forms(FORMS)
    layout.addWidget(label)
    holder.resize(width, 40)
    holder.show()
    qtbot.waitExposed(holder)
    return label


def _fits(label: FittingLabel) -> bool:
    return label.fontMetrics().horizontalAdvance(label.text()) <= label.contentsRect().width()


def test_each_width_shows_the_longest_form_that_fits(qtbot):
    wide = _label_in(qtbot, 2000)
    assert wide.text() == FORMS[0] and wide.toolTip() == FORMS[0]
    middle_width = wide.fontMetrics().horizontalAdvance(FORMS[1]) + 60
    middle = _label_in(qtbot, middle_width)
    assert middle.text() == FORMS[1] and _fits(middle) and middle.toolTip() == FORMS[0]
    # narrower than every form: the shortest, elided, still inside the label
    tiny = _label_in(qtbot, 30)
    assert tiny.text() not in FORMS and _fits(tiny)


def test_new_figures_refit_and_a_resize_shows_more(qtbot):
    label = _label_in(qtbot, 2000)
    holder = label.parentWidget()
    holder.resize(label.fontMetrics().horizontalAdvance(FORMS[2]) + 60, 40)
    qtbot.waitUntil(lambda: label.text() == FORMS[2])
    label.set_forms(["a sentence far too long to fit in this narrow label at all, surely", "short"])
    assert label.text() == "short" and label.toolTip().startswith("a sentence")
    holder.resize(2000, 40)
    qtbot.waitUntil(lambda: label.text().startswith("a sentence"))
