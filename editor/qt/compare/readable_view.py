"""Readable big trees in the editor: a focused subtree and an automatic depth limit.

* **Focus** (View → Focus on inspected node): the node picked with the inspector tool and its
  subtree keep their colours, the rest of the tree is dimmed, and a BSP's split planes are
  drawn for that subtree only (:attr:`~editor.qt.overlay.OverlaySettings.focus`). Inspecting
  another node moves the focus.
* **Depth limit**: when a tree has more nodes than :data:`READABLE_NODES`, the overlay's
  *Max depth* is set to the deepest level that keeps the drawn count under it
  (:func:`~editor.model.compare.readable.auto_depth_limit`), through the Overlay panel's own
  box, so it is changed there like any depth range; while a limit is in force the legend says
  which, and whether it was chosen automatically or by hand. Split planes follow the depth range.
"""
from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel

from editor.model.compare.readable import READABLE_NODES, auto_depth_limit

#: the Overlay panel's own default maximum depth (no limit)
NO_LIMIT = 64


class ReadableTrees(QObject):
    """See the module docstring."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.state = window.state
        self.auto_limit: int | None = None
        self.by_hand = False
        self._tree_key: tuple[int, int] | None = None  # (id of the index, node count)
        panel = window.overlay_panel
        self.legend = QLabel()
        self.legend.setObjectName("depth_limit_legend")
        self.legend.setWordWrap(True)
        self.legend.setVisible(False)
        panel.body.insertWidget(panel.body.indexOf(panel.summary) + 1, self.legend)
        self.act_focus = window._action("&Focus on inspected node", self.set_focus,
                                        checkable=True,
                                        tip="Dim all but the inspected node's subtree; split "
                                            "planes of that subtree only")
        self.act_focus.setObjectName("act_focus_subtree")
        self.state.inspected_node_changed.connect(self._on_inspected)
        self.state.node_table_read.connect(self._on_table_read)
        self.state.overlay_changed.connect(self._on_overlay_changed)

    # ------------------------------------------------------------------ focus
    def set_focus(self, on: bool) -> None:
        """Focus on the inspected node's subtree (``on``), or show the whole tree again."""
        row = self.state.inspected_node if on else -1
        self.state.set_overlay_settings(focus=row)

    def _on_inspected(self, row: int) -> None:
        if self.act_focus.isChecked():
            self.state.set_overlay_settings(focus=row)

    # ------------------------------------------------------------------ depth limit
    def _on_table_read(self, table) -> bool:
        """A node table was read: for another tree, set its automatic limit before the
        overlay is built from it (an overlay of all 2,000,000 nodes of a mesh's tree took a
        fifth of a second, only to be built again with the limit). True when it changed."""
        if table is None:
            return False
        settings = self.state.overlay_settings
        key = (self.state.node_table_origin, len(table))
        if key == self._tree_key:
            return False
        self._tree_key = key  # another tree (a level, a backend, a rebuild that grew it)
        limit = auto_depth_limit(table.depth, READABLE_NODES)
        if not self.by_hand and limit != self.auto_limit and \
                settings.max_depth in (NO_LIMIT, self.auto_limit):
            self.auto_limit = limit
            self.window.overlay_panel.max_depth.setValue(NO_LIMIT if limit is None else limit)
            return True
        return False

    def _on_overlay_changed(self, geom) -> None:
        table = self.state.node_table
        if table is None:
            return
        settings = self.state.overlay_settings
        if self._on_table_read(table):  # a tree whose table was not announced (a frame's)
            return  # the overlay is rebuilt with the limit and comes back here
        if settings.max_depth not in (NO_LIMIT, self.auto_limit):
            self.by_hand = True
        self._say(settings.max_depth, geom)

    def _say(self, max_depth: int, geom) -> None:
        # the whole tree on show: nothing to say (the panel's column keeps its room)
        self.legend.setVisible(max_depth < NO_LIMIT)
        if max_depth >= NO_LIMIT:
            text = ""
        elif self.by_hand:
            text = f"Depth limit: {max_depth}, set by hand (Depth from/to above)."
        else:
            # the counts are in the summary line above; this line says only why the cut
            text = (f"Depth limit: {max_depth}, automatic, to stay readable (at most "
                    f"{READABLE_NODES:,} nodes); change it with Depth from/to.")
        self.legend.setText(text)
