"""The right-hand dock column shows its panels whole on common window sizes.

Partition, Tree overlay and Statistics share one column. The first show (with no saved
layout) keeps them stacked when they fit and tabs Tree overlay onto Partition when they do
not; either way no panel on screen should need its scroll bar.
"""
from __future__ import annotations

import pytest

from tests.conftest import shared_file

E3M4 = "quake/librequake_e3m4_valve220.map"
COLUMN = ("partition", "overlay", "stats")


def _open(qtbot, settings, size, path=None):
    from editor.qt.main_window import MainWindow
    window = MainWindow(settings=settings, use_gl=False)
    window.ask_save = lambda: "discard"
    qtbot.addWidget(window)
    window.resize(*size)
    assert window.open_file(path, background=False)
    window.show()
    qtbot.waitExposed(window)
    window.state.flush()
    qtbot.wait(50)  # the docks' scroll areas lay out on the next turn of the event loop
    return window


def _shown_whole(window, name) -> bool:
    scroll = window.docks[name].widget()
    return scroll.verticalScrollBar().maximum() == 0


def _on_screen(window, name) -> bool:
    dock = window.docks[name]  # a tab behind another is moved out of the window, not hidden
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


@pytest.mark.parametrize("size", [(1600, 1000), (1280, 800)])
def test_every_panel_on_screen_in_the_column_is_whole(qtbot, settings, size):
    window = _open(qtbot, settings, size, str(shared_file(E3M4)))
    shown = [name for name in COLUMN if _on_screen(window, name)]
    assert "stats" in shown and "overlay" in shown, "the legend and the figures stay in front"
    for name in shown:
        assert _shown_whole(window, name), f"{name} scrolls at {size}"


def test_a_short_window_tabs_the_overlay_onto_the_partition(qtbot, settings):
    window = _open(qtbot, settings, (1280, 800), str(shared_file(E3M4)))
    assert window.docks["partition"] in window.tabifiedDockWidgets(window.docks["overlay"])
    assert not _on_screen(window, "partition")


def test_a_tall_window_keeps_the_three_stacked(qtbot, settings):
    window = _open(qtbot, settings, (1600, 1200))
    assert not window.tabifiedDockWidgets(window.docks["overlay"])
    assert all(_on_screen(window, name) and _shown_whole(window, name) for name in COLUMN)


def test_a_saved_layout_is_kept_as_the_user_left_it(qtbot, settings):
    window = _open(qtbot, settings, (1600, 1200))
    window.tabifyDockWidget(window.docks["stats"], window.docks["overlay"])  # the user's choice
    window.save_layout()
    again = _open(qtbot, settings, (1280, 800))
    assert again.docks["stats"] in again.tabifiedDockWidgets(again.docks["overlay"])
    assert again.docks["partition"] not in again.tabifiedDockWidgets(again.docks["overlay"])


def test_a_window_grown_after_its_first_show_stacks_the_column_again(qtbot, settings):
    """A desktop that maximises the window after the first show: the Partition panel comes out
    from behind the Tree overlay with its parameters whole, and a shrink tabs them again."""
    window = _open(qtbot, settings, (1280, 800), str(shared_file(E3M4)))
    assert not _on_screen(window, "partition")
    window.resize(1600, 1000)
    qtbot.waitUntil(lambda: all(_on_screen(window, name) and _shown_whole(window, name)
                                for name in COLUMN), timeout=5000)
    assert "max_depth" in window.params_panel.widgets
    assert not window.params_panel.widgets["out_of_bounds"].visibleRegion().isEmpty()
    window.resize(1280, 800)
    qtbot.waitUntil(lambda: not _on_screen(window, "partition"), timeout=5000)
    qtbot.wait(50)
    assert all(_shown_whole(window, name) for name in COLUMN if _on_screen(window, name))


@pytest.mark.parametrize("size", [(1600, 1000), (1280, 800)])
def test_dock_tab_titles_are_shown_whole(qtbot, settings, size):
    """Five panels tabbed in the right-hand column (Statistics … Pairs): every title whole,
    never "P…"."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTabBar

    window = _open(qtbot, settings, size, str(shared_file(E3M4)))
    bars = [bar for bar in window.findChildren(QTabBar) if bar.parent() is window and bar.isVisible()]
    titles = {bar.tabText(i): bar for bar in bars for i in range(bar.count())}
    assert {"Statistics", "Node", "Queries", "Hotspots", "Pairs"} <= set(titles)
    for title, bar in titles.items():
        assert bar.elideMode() == Qt.TextElideMode.ElideNone, title
        index = next(i for i in range(bar.count()) if bar.tabText(i) == title)
        assert bar.tabRect(index).width() >= bar.fontMetrics().horizontalAdvance(title), title


@pytest.mark.parametrize("size", [(1600, 1000), (1280, 800)])
@pytest.mark.parametrize("column", [("Entities", "Undo history", "Problems"),
                                    ("Statistics", "Node", "Queries", "Hotspots", "Pairs")],
                         ids=["left", "right"])
def test_each_columns_tab_row_is_shown_whole_not_scrolled(qtbot, settings, size, column):
    """Each column's tab row fits its column: no tab starts or ends outside its bar (a
    scrolled row cut its first title at the edge, or its last one: "Hotspo…" with Pairs out
    of sight at 1280x800)."""
    from PySide6.QtWidgets import QTabBar

    window = _open(qtbot, settings, size, str(shared_file(E3M4)))
    qtbot.wait(50)  # the row is fitted on the turn after the bar lays out
    bar = next(bar for bar in window.findChildren(QTabBar) if bar.parent() is window and
               bar.isVisible() and column[1] in [bar.tabText(i) for i in range(bar.count())])
    assert {bar.tabText(i) for i in range(bar.count())} == set(column)
    for i in range(bar.count()):
        rect = bar.tabRect(i)
        assert rect.left() >= 0 and rect.right() < bar.width(), bar.tabText(i)
