"""Fit a column of docks to the window on its first show.

The right-hand column stacks three docks whose contents all matter at once (the partition's
parameters, the overlay's legend, the statistics with their histograms). On a short window
(1280x800) they cannot all be shown whole, and each scroll area then hid part of its panel:
the histograms' lower halves, the overlay's switches. So, before any layout the user saved,
the first show checks whether the column holds every dock at its content's minimum height and,
when it does not, tabs the least-needed pair together instead of clipping all three.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QScrollArea


def content_need(dock: QDockWidget, at_least_minimum: bool = False) -> int:
    """Height in pixels ``dock`` needs to show its content without scrolling: the content's
    size hint (its minimum size hint with ``at_least_minimum``, for content that stretches,
    such as plots) plus the dock's own frame and title bar."""
    widget = dock.widget()
    inner = widget.widget() if isinstance(widget, QScrollArea) else widget
    if widget is None or inner is None:
        return 0  # an empty dock needs no room for content
    hint = inner.minimumSizeHint() if at_least_minimum else inner.sizeHint()
    chrome = max(0, dock.height() - widget.height())
    return hint.height() + chrome


def fit_column(window, stacked: list[QDockWidget], stretching: QDockWidget,
               tab_under: QDockWidget, tab_over: QDockWidget) -> bool:
    """Lay out the docks ``stacked`` in one column, each whole, ``stretching`` taking what is
    left; when the column is too short for that, tab ``tab_over`` onto ``tab_under`` (raising
    ``tab_over``) first. Returns whether it tabbed."""
    def need(dock):
        return content_need(dock, at_least_minimum=dock is stretching)

    # the docks' own heights: the column less its separators and any tab bar under a group
    room = sum(d.height() for d in stacked)
    if sum(need(d) for d in stacked) > room:
        window.tabifyDockWidget(tab_under, tab_over)
        tab_over.raise_()
        stacked = [d for d in stacked if d is not tab_over]
        fixed = max(need(tab_under), need(tab_over))
    else:
        fixed = None
    sizes = [fixed if fixed is not None and d is tab_under else need(d) for d in stacked]
    spare = room - sum(sizes)
    sizes[stacked.index(stretching)] += max(0, spare)
    window.resizeDocks(stacked, sizes, Qt.Orientation.Vertical)
    return fixed is not None
