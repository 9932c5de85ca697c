"""Dock tab titles shown whole.

When docks are tabbed together, Qt's main window makes each tab bar elide its titles on the
right; in the right-hand column at 1280×800 five tabs (Statistics, Node, Queries, Hotspots,
Pairs) became "Statis…", "Que…", "P…" — unreadable, and "P…" names nothing. The
main window creates those tab bars itself whenever docks are tabbed (and sets their eliding
then), so a filter on the window gives every tab bar it polishes whole titles and scroll
arrows instead: each title stays readable, and a row too long for the column scrolls.

A short row is fitted instead of scrolled: when a bar's tabs need at most
:data:`FIT_ROW_WIDTH` pixels, its docks are given that as their minimum width, so the row is
shown whole (the left column's Entities, Undo history and Problems would otherwise scroll,
the first title cut at the edge, once the column is narrower than they are; the right
column's five tabs, the last one cut, when a style's tabs come out wider than here).
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabBar

#: tab rows up to this wide (pixels) widen their docks to show whole; longer ones scroll
#: (the right-hand column is 360 pixels wide: its Partition panel's minimum and frame)
FIT_ROW_WIDTH = 360


def show_whole(bar: QTabBar) -> None:
    """``bar`` shows every title whole, with scroll arrows when the row is too long."""
    bar.setElideMode(Qt.TextElideMode.ElideNone)
    bar.setUsesScrollButtons(True)


def fit_row(window: QMainWindow, bar: QTabBar) -> None:
    """Give the docks tabbed in ``bar`` the row's width as their minimum when it is at most
    :data:`FIT_ROW_WIDTH`, so the row shows whole rather than scrolling."""
    need = bar.sizeHint().width()
    if not bar.count() or need > FIT_ROW_WIDTH:
        return
    titles = {bar.tabText(i) for i in range(bar.count())}
    for dock in window.findChildren(QDockWidget):
        if dock.windowTitle() in titles and dock.minimumWidth() < need:
            dock.setMinimumWidth(need)


class WholeDockTabTitles(QObject):
    """Installed on a main window: every dock tab bar it polishes shows whole titles, and a
    short row is fitted (:func:`fit_row`) each time the bar is laid out again."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.window = window
        # one deferred pass over the window's bars (a bar may be gone by the time it runs)
        self._fit = QTimer(self)
        self._fit.setSingleShot(True)
        self._fit.setInterval(0)
        self._fit.timeout.connect(self.fit_rows)
        for bar in window.findChildren(QTabBar):
            if bar.parent() is window:
                self._watch(bar)
        window.installEventFilter(self)

    def _watch(self, bar: QTabBar) -> None:
        show_whole(bar)
        bar.removeEventFilter(self)
        bar.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.ChildPolished and watched is self.window:
            child = event.child()  # type: ignore[attr-defined]
            if isinstance(child, QTabBar):
                self._watch(child)
        elif isinstance(watched, QTabBar) and kind in (QEvent.Type.Show, QEvent.Type.LayoutRequest):
            # now, before the window's first layout is shown; and once more after the bar's
            # tabs are set (a new tab, a title with a count)
            fit_row(self.window, watched)
            self._fit.start()
        return False

    def fit_rows(self) -> None:
        """Fit every short tab row of the window (its docks built, before it is first shown,
        so its first layout already has the columns' widths)."""
        for bar in self.window.findChildren(QTabBar):
            if bar.parent() is self.window:
                fit_row(self.window, bar)
