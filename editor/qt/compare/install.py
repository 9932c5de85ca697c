"""What compare mode adds to the editor's window, in one call from its constructor."""
from __future__ import annotations

from .readable_view import ReadableTrees
from .tree_diff_view import TreeDiffTracker


def install_compare(window) -> None:
    """View → Compare…, Focus on inspected node, the automatic depth limit and the tree diff
    of every edit."""
    from .window import open_compare

    window.tree_diff = TreeDiffTracker(window)
    window.readable_trees = ReadableTrees(window)
    window.act_compare = window._action("&Compare…", lambda: open_compare(window),
                                        tip="Two partitions of this level side by side, measured")
    window.act_compare.setObjectName("act_compare")
    view_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    first_panel_entry = next(a for a in view_menu.actions() if a.menu() is not None)
    view_menu.insertAction(first_panel_entry, window.act_compare)
    view_menu.insertAction(first_panel_entry, window.readable_trees.act_focus)
    view_menu.insertSeparator(first_panel_entry)
