"""Dock tab titles shown whole.

When docks are tabbed together, Qt's main window makes each tab bar elide its titles on the
right; in the right-hand column at 1280×800 five tabs (Statistics, Node inspector, Queries,
Hotspots, Pairs) became "Statis…", "Que…", "P…" — unreadable, and "P…" names nothing. The
main window creates those tab bars itself whenever docks are tabbed (and sets their eliding
then), so a filter on the window gives every tab bar it polishes whole titles and scroll
arrows instead: each title stays readable, and a row too long for the column scrolls.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QMainWindow, QTabBar


def show_whole(bar: QTabBar) -> None:
    """``bar`` shows every title whole, with scroll arrows when the row is too long."""
    bar.setElideMode(Qt.TextElideMode.ElideNone)
    bar.setUsesScrollButtons(True)


class WholeDockTabTitles(QObject):
    """Installed on a main window: every dock tab bar it polishes shows whole titles."""

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        for bar in window.findChildren(QTabBar):
            if bar.parent() is window:
                show_whole(bar)
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ChildPolished:
            child = event.child()  # type: ignore[attr-defined]
            if isinstance(child, QTabBar):
                show_whole(child)
        return False
