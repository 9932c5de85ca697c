"""A label that shows the longest of several forms of its text that fits its width.

A status bar shares one line among its permanent widgets: a long sentence (the live link's
figures) was cut off at 1280 pixels wide. :class:`FittingLabel` is given the same text in
several forms, longest first, asks for the longest one's width, takes what the bar can give
(down to the start of the shortest one) and shows the longest form that fits, the full one in its
tooltip; the shortest form is elided only when even it does not fit.
"""
from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QLabel

#: characters of the shortest form a label is never narrower than (then elided)
MIN_CHARS = 12


class FittingLabel(QLabel):
    """A one-line label showing the longest of :meth:`set_forms`'s forms that fits."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._forms: list[str] = [""]

    @property
    def forms(self) -> list[str]:
        return list(self._forms)

    def set_forms(self, forms: Sequence[str]) -> None:
        """Show ``forms`` (longest first; at least one) from now on."""
        forms = [str(form) for form in forms] or [""]
        if forms == self._forms:
            return
        widths_changed = [len(f) for f in forms] != [len(f) for f in self._forms]
        self._forms = forms
        self.setToolTip(forms[0])
        if widths_changed:
            self.updateGeometry()
        self._fit()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return self._size_for(self._forms[0])

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        # the start of the shortest form: a label never makes its window wider than the screen
        return self._size_for(self._forms[-1][:MIN_CHARS] + "…")

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit()

    def _size_for(self, text: str) -> QSize:
        margins = self.contentsMargins()
        extra = margins.left() + margins.right() + 2 * self.margin() + 2
        return QSize(self.fontMetrics().horizontalAdvance(text) + extra,
                     super().sizeHint().height())

    def _fit(self) -> None:
        metrics, width = self.fontMetrics(), self.contentsRect().width() - 2 * self.margin()
        shown = next((form for form in self._forms if metrics.horizontalAdvance(form) <= width),
                     None)
        if shown is None:
            shown = metrics.elidedText(self._forms[-1], Qt.TextElideMode.ElideRight, max(0, width))
        if shown != self.text():
            self.setText(shown)
