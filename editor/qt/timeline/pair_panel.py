"""Pairs: the pairs of the displayed frame, one row each, and the node whose test compared them.

Two lists (:mod:`editor.model.pair_browser`), chosen at the top:

* **Overlapping pairs of the frame** — every pair found this frame, the pairs of the nodes with
  the most tests first: the two objects, the node that tested them (depth and its tests this
  frame) and in how many frames of the hotspot window the pair overlapped;
* **Pairs the hot cell compares** — for the cell chosen in the Hotspots list, what it compares,
  overlapping or not: the objects it stores against those in it and below it that their boxes
  reach.

The lists are made for a still frame (paused, stepped, scrubbed or stopped at the end): while
the timeline plays they wait, as finding the node of each pair walks the whole tree. Clicking a
row selects the pair's level objects through the undoable selection command and frames them.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QTreeWidget, QTreeWidgetItem

from editor.model.hotspot_pairs import find_cell, object_label
from editor.model.pair_browser import PairList, cell_pairs, frame_pairs

from ..panels.base import Panel, PlaybackRefresh
from ..tools.edit_ops import select
from .live_view import frame_box

#: rows listed at most
LIMIT = 200
#: how often a playing timeline is looked at (the lists themselves wait for a still frame)
REFRESH_MS = 500

FRAME, CELL = "frame", "cell"
_IDS = Qt.ItemDataRole.UserRole
_BOX = Qt.ItemDataRole.UserRole + 1


class PairPanel(PlaybackRefresh, Panel):
    """See the module docstring."""

    def __init__(self, window, controller, hotspots, parent=None) -> None:
        super().__init__("pair_panel", parent, margins=(4, 4, 4, 4))
        self.main_window = window
        self.state = window.state
        self.controller = controller
        self.hotspot_panel = hotspots
        self.cell_box: tuple[list, list] | None = None
        self.listed = PairList([], 0)
        self.mode = QComboBox()
        self.mode.setObjectName("pair_mode")
        self.mode.addItem("Overlapping pairs of the frame", FRAME)
        self.mode.addItem("Pairs the chosen hot cell compares", CELL)
        self.mode.currentIndexChanged.connect(lambda _i: self.refresh())
        self.body.addWidget(self.mode)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.body.addWidget(self.summary)
        self.tree = QTreeWidget()
        self.tree.setObjectName("pair_tree")
        self.tree.setRootIsDecorated(False)
        self.tree.setHeaderLabels(["pair", "overlap", "node", "tests", "frames"])
        self.tree.setColumnWidth(0, 190)
        for column in (1, 2, 3, 4):
            self.tree.setColumnWidth(column, 52)
        header = self.tree.headerItem()
        header.setToolTip(2, "depth of the node whose test compared the pair")
        header.setToolTip(3, "pair tests made in that node this frame")
        header.setToolTip(4, "frames of the hotspot window in which the pair overlapped")
        self.tree.itemClicked.connect(lambda item, column: self._select_item(item))
        self.body.addWidget(self.tree, 1)
        hotspots.tree.currentItemChanged.connect(self._on_hot_cell)
        self.follow_playback(controller, REFRESH_MS)
        self.refresh()

    # ------------------------------------------------------------------ content
    def _on_hot_cell(self, item, _previous) -> None:
        if item is None:  # the list was remade: the chosen cell stays chosen
            return
        while item.parent() is not None:
            item = item.parent()  # an object or pair row belongs to its cell
        self.cell_box = item.data(0, _BOX)
        if self.mode.currentData() == CELL:
            self.refresh()
        else:
            self.mode.setCurrentIndex(self.mode.findData(CELL))  # refreshes

    def refresh(self) -> None:
        """Make the chosen list for the displayed frame (waits while the timeline plays)."""
        self._timer.stop()
        # the index is read last: a live game's frame brings it over when first read
        nodes = self.controller.shown_nodes()
        if not self.controller.shows_frame_index() or nodes is None:
            self._show(PairList([], 0), None, "Play or load a recording, then pause on a frame to "
                                        "browse its pairs.")
            return
        if self.controller.play_state == self.controller.PLAYING:
            self.summary.setText(f"Frame {self.controller.frame}: pause to browse its pairs.")
            return
        index = self.controller.shown_index()
        window = self.controller.hotspots
        if self.mode.currentData() == CELL:
            self._refresh_cell(index, nodes, window)
            return
        shown = self.controller.shown_pairs()
        listed = frame_pairs(index, nodes, shown.pairs if shown is not None else None, window, LIMIT)
        self._show(listed, index, f"Frame {self.controller.frame}: {listed.total:,} overlapping pairs"
                           + (f", the {len(listed.rows)} in the busiest nodes listed"
                              if listed.total > len(listed.rows) else "") + ".")

    def _refresh_cell(self, index, nodes, window) -> None:
        if self.cell_box is None:
            self._show(PairList([], 0), None, "Choose a cell in the Hotspots list.")
            return
        lo, hi = self.cell_box
        row = find_cell(nodes, np.array(lo), np.array(hi))
        if row < 0:
            self._show(PairList([], 0), None, "The chosen cell is not in this frame's tree.")
            return
        listed = cell_pairs(index, nodes, row, window, LIMIT)
        count = f"up to {listed.total:,}" if listed.bound else f"{listed.total:,}"
        where = "the root" if nodes.depth[row] == 0 else f"a cell at depth {int(nodes.depth[row])}"
        self._show(listed, index, f"Frame {self.controller.frame}: {where} compares {count} pairs "
                           f"({int(nodes.pair_tests[row]):,} tests this frame); its stored "
                           "objects that cause the most first, overlapping partners first.")

    def _show(self, listed: PairList, index, text: str) -> None:
        self.listed = listed
        self.summary.setText(text)
        self.tree.clear()
        names = getattr(self.controller.simulation, "names", None)
        doc = self.state.document
        scene = doc.scene if doc is not None else None
        items = []
        for pair in listed.rows if index is not None else []:
            objects = index.objects
            text = f"{object_label(pair.a, scene, names)} × {object_label(pair.b, scene, names)}"
            node = "—" if pair.node < 0 else str(pair.depth)
            item = QTreeWidgetItem([text, "yes" if pair.overlap else "no", node,
                                    f"{pair.node_tests:,}", str(pair.frames)])
            ids = [pair.a, pair.b]
            item.setData(0, _IDS, ids)
            slots = objects.slots_of(np.array(ids, dtype=np.int64))
            item.setData(0, _BOX, (objects.lo[slots].min(axis=0).tolist(),
                                   objects.hi[slots].max(axis=0).tolist()))
            item.setToolTip(0, text)
            if scene is None or not any(i in scene for i in ids):
                item.setForeground(0, Qt.GlobalColor.gray)
            items.append(item)
        self.tree.addTopLevelItems(items)

    # ------------------------------------------------------------------ selection
    def select_row(self, row: int) -> bool:
        """Select the level objects of row ``row`` and frame the pair (True if any)."""
        return self._select_item(self.tree.topLevelItem(row))

    def _select_item(self, item) -> bool:
        if item is None:
            return False
        frame_box(self.main_window, *item.data(0, _BOX))
        doc = self.state.document
        ids = [i for i in (item.data(0, _IDS) or []) if i in doc.scene]
        if not ids:
            return False
        return select(doc, ids, f"Select pair ({len(ids)})")
