"""Fit the right-hand dock column again when the window changes size.

:func:`editor.qt.dock_fit.fit_column` lays the column out on the first show, for the size the
window has then. A window that is then maximised or resized (a desktop that restores its last
size after the first show) kept a layout made for another height: Tree overlay tabbed over
Partition on a window tall enough for both, the backend's parameters out of sight. So while
the layout is still the product's own (nothing saved by the user), a resize lays the column out
again, once the size has settled: the pair is stacked again first and tabbed only if it still
does not fit.
"""
from __future__ import annotations

from PySide6.QtCore import QTimer

from .dock_fit import fit_column

#: wait this long after the last resize before laying out again (resizes come in bursts)
SETTLE_MS = 150


class ColumnRefit:
    """Lays ``window``'s right-hand column out again after each burst of resizes.

    ``stacked`` is the window's state (``saveState()``) with the column's three docks stacked,
    taken before the first fit: a tab group cannot be split back in place, so a refit restores
    that state and fits it anew. Only the product's own layout is refitted this way.
    """

    def __init__(self, window, stacked) -> None:
        self.window = window
        self.stacked = stacked
        self.timer = QTimer(window)
        self.timer.setSingleShot(True)
        self.timer.setInterval(SETTLE_MS)
        self.timer.timeout.connect(self.refit)

    def resized(self) -> None:
        """The window changed size: lay the column out once the size settles."""
        self.timer.start()

    def refit(self) -> None:
        window = self.window
        if window.docks["overlay"] in window.tabifiedDockWidgets(window.docks["partition"]):
            window.restoreState(self.stacked)
            QTimer.singleShot(0, self._fit)  # once the stacked column is laid out
        else:
            self._fit()

    def _fit(self) -> None:
        docks = self.window.docks
        fit_column(self.window, [docks["partition"], docks["overlay"], docks["stats"]],
                   stretching=docks["stats"], tab_under=docks["partition"], tab_over=docks["overlay"])
