"""Hotspots: the cells with the most pair tests over the sliding window, and who causes them.

Each top-level row is a cell of the tree (keyed by its core bounds, see
:mod:`editor.model.hotspots`) with its pair tests over the window; its children are the objects
of the displayed frame that overlap the cell, found with a box query on that frame's index.
Clicking a row selects the level's objects among them through the model's undoable selection
command and frames the cell in every view; projectiles are not part of the level, so they are
listed but cannot be selected.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTreeWidget, QTreeWidgetItem

from editor.model.hotspots import Hotspot

from ..panels.base import Panel, PlaybackRefresh
from ..tools.edit_ops import select
from .live_view import frame_box

#: hotspots listed
TOP = 10
#: objects listed under a hotspot
MAX_OBJECTS = 40
#: the ranking is recomputed at most this often while playing (ms)
REFRESH_MS = 250

_IDS = Qt.ItemDataRole.UserRole
_BOX = Qt.ItemDataRole.UserRole + 1


class HotspotPanel(PlaybackRefresh, Panel):
    """See the module docstring."""

    def __init__(self, window, controller, parent=None) -> None:
        super().__init__("hotspot_panel", parent, margins=(4, 4, 4, 4))
        self.main_window = window  # not `window`: that would shadow QWidget.window()
        self.state = window.state
        self.controller = controller
        layout = self.body
        self.summary = QLabel("Play the simulation to rank the cells where pair tests pile up.")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.tree = QTreeWidget()
        self.tree.setObjectName("hotspot_tree")
        self.tree.setColumnCount(4)
        self.tree.setHeaderLabels(["cell / object", "tests", "frames", "depth"])
        self.tree.setColumnWidth(0, 175)
        for column in (1, 2, 3):
            self.tree.setColumnWidth(column, 46)
        self.tree.headerItem().setToolTip(1, "pair tests made in the cell over the window")
        self.tree.headerItem().setToolTip(2, "frames of the window with tests in the cell")
        self.tree.itemClicked.connect(self._on_item_clicked)
        layout.addWidget(self.tree)
        self.hotspots: list[Hotspot] = []
        self.follow_playback(controller, REFRESH_MS)

    # ------------------------------------------------------------------ content
    def refresh(self) -> None:
        """Rebuild the list from the window's ranking and the displayed frame's index."""
        self._timer.stop()
        self.tree.clear()
        window = self.controller.hotspots
        index = self.controller.shown_index()
        if window is None or index is None:
            self.hotspots = []
            self.summary.setText("Play the simulation to rank the cells where pair tests pile up.")
            return
        self.hotspots = window.ranking(TOP)
        scene = self.state.document.scene
        self.summary.setText(f"Frame {self.controller.frame}: the {len(self.hotspots)} cells with the "
                             f"most pair tests over the last {window.window} frames.")
        for rank, spot in enumerate(self.hotspots, 1):
            lo, hi = np.array(spot.lo), np.array(spot.hi)
            size = hi - lo
            ids = index.query_box(lo, hi).ids
            shape = f"{size[0]:.0f}³" if np.all(size == size[0]) else "×".join(f"{s:.0f}" for s in size)
            item = QTreeWidgetItem([f"#{rank} {shape} @ {lo[0]:.0f},{lo[1]:.0f},{lo[2]:.0f}",
                                    str(spot.pair_tests), str(spot.frames), str(spot.depth)])
            item.setData(0, _IDS, [int(i) for i in ids])
            item.setData(0, _BOX, (lo.tolist(), hi.tolist()))
            item.setToolTip(0, f"cell {lo.tolist()} .. {hi.tolist()}: {len(ids)} objects overlap it now")
            for oid in ids[:MAX_OBJECTS].tolist():
                obj = scene.get(oid)
                label = f"{oid}  {getattr(obj, 'classname', '') or 'brush'}" if obj is not None \
                    else f"{oid}  projectile"
                child = QTreeWidgetItem([label, "", "", ""])
                child.setData(0, _IDS, [oid] if obj is not None else [])
                child.setData(0, _BOX, (lo.tolist(), hi.tolist()))
                if obj is None:
                    child.setForeground(0, Qt.GlobalColor.gray)
                item.addChild(child)
            if len(ids) > MAX_OBJECTS:
                item.addChild(QTreeWidgetItem([f"… {len(ids) - MAX_OBJECTS} more", "", "", ""]))
            self.tree.addTopLevelItem(item)

    # ------------------------------------------------------------------ selection
    def select_row(self, row: int) -> bool:
        """Select the level objects of hotspot ``row`` and frame its cell (True if any)."""
        return self._select_item(self.tree.topLevelItem(row))

    def _on_item_clicked(self, item, column) -> None:
        self._select_item(item)

    def _select_item(self, item) -> bool:
        if item is None:
            return False
        doc = self.state.document
        ids = [i for i in (item.data(0, _IDS) or []) if i in doc.scene]
        box = item.data(0, _BOX)
        if box is not None:
            frame_box(self.main_window, *box)
        if not ids:
            return False
        return select(doc, ids, f"Select hotspot objects ({len(ids)})")
