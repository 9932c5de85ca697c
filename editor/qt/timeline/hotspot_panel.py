"""Hotspots: the cells with the most pair tests over the sliding window, and who causes them.

Each top-level row is a cell of the tree (keyed by its core bounds, see
:mod:`editor.model.hotspots`) with its pair tests over the window; its children are the objects
the displayed frame's tree **stores in that cell**, heaviest first, each with the tests it causes
("brush 1234 straddles the root: up to 3,412 tests a frame", :mod:`editor.model.hotspot_pairs`),
then the overlapping pairs found there. Clicking a cell selects its stored objects, an object
selects it, a pair selects both — through the model's undoable selection command — and the cell
is framed in every view. Objects the level does not hold (projectiles, a live game's movers)
are listed, by the name a game sent when it sent one, but cannot be selected.
"""
from __future__ import annotations

import time

import numpy as np
import shiboken6
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QTreeWidget, QTreeWidgetItem

from editor.model.hotspot_pairs import describe_cell, hot_cells, object_label
from editor.model.hotspots import Hotspot
from editor.model.live.source import LiveSource

from ..panels.base import Panel, PlaybackRefresh
from ..tools.edit_ops import select
from ..workers import CallWorker
from .live_view import frame_box

#: hotspots listed
TOP = 10
#: objects listed under a hotspot
MAX_OBJECTS = 40
#: overlapping pairs listed under a hotspot
MAX_PAIRS = 20
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
        self._finding: CallWorker | None = None  # a live frame's cells being found
        self._find_again = False
        self.follow_playback(controller, REFRESH_MS)

    # ------------------------------------------------------------------ content
    def refresh(self) -> None:
        """Rebuild the list from the window's ranking and the displayed frame's index.

        While a live game plays, the cells' objects and pairs are found on a worker (the frame
        handed over is the display's own copy, which nothing changes any more) and the list is
        filled when they arrive: on a deep live octree that search took the window's thread
        100-200 ms at each refresh. Otherwise (a step, a seek, a pause, a simulation whose
        index the window's thread steps) the list is filled at once.
        """
        self._timer.stop()
        if self._live_and_playing():
            self._find_live()
            return
        self._finding = None
        window = self.controller.hotspots
        index = self.controller.shown_index()
        if window is None or index is None:
            self.tree.clear()
            self.hotspots = []
            self.summary.setText("Play the simulation to rank the cells where pair tests pile up.")
            return
        frame = self.controller.frame
        nodes = self.controller.shown_nodes()
        shown = self.controller.shown_pairs()
        pairs = shown.pairs if shown is not None else None
        self._fill(frame, window.window, hot_cells(window, TOP, index, nodes, pairs))

    def _find_live(self) -> None:
        """The newest live frame's hot cells, found on a worker, which also reads the frame's
        index and hotspot window (brought over from the processing process on first read)."""
        shown = self.controller.simulation.newest
        if shown is None:
            return
        if self._finding is not None:
            self._find_again = True  # one search at a time: the newest frame's comes next
            return
        frame = shown.record.frame
        pairs = shown.pairs.pairs if shown.pairs is not None else None

        def find() -> tuple[list, int, float]:
            began = time.thread_time()
            window = shown.hotspots
            cells = hot_cells(window, TOP, shown.index, shown.nodes, pairs)
            return cells, window.window, (time.thread_time() - began) * 1e3

        worker = CallWorker(find)
        worker.result.connect(lambda found, ms: self._on_found(worker, frame, found[1], found[0], found[2]))
        worker.failed.connect(lambda message: self._on_found(worker, frame, 0, None, 0.0))
        self._finding = worker
        self._find_again = False
        worker.start()

    def _live_and_playing(self) -> bool:
        c = self.controller
        return isinstance(c.simulation, LiveSource) and c.play_state == c.PLAYING and c.live

    def _on_found(self, worker, frame: int, span: int, cells, cpu_ms: float) -> None:
        if not shiboken6.isValid(self.tree):
            return  # the window closed while the worker searched
        if worker is not self._finding:
            return  # superseded (a step, a seek, a stop filled the list since)
        self._finding = None
        began = time.perf_counter()
        if cells is not None:
            self._fill(frame, span, cells)
        # the next refresh waits COST_FACTOR times what this one cost: the search's CPU time
        # (it shares the machine with the game's frames) and the filling. Not the search's
        # wall time, which counts its waits for the interpreter beside the window and the
        # processing thread: timed so, the list showed frame 43 while the game was at 299 (a
        # 1,000-mover stream on the octree), frame 296 at 349 timed by CPU
        self._refresh_ms = cpu_ms + (time.perf_counter() - began) * 1e3
        if self._find_again:
            self.refresh()

    def _fill(self, frame: int, span: int, cells: list) -> None:
        self.tree.clear()
        self.hotspots = [spot for spot, _ in cells]
        self.summary.setText(f"Frame {frame}: the {len(self.hotspots)} cells with the "
                             f"most pair tests over the last {span} frames, and the objects "
                             "stored in each.")
        names = self.controller.shown_names()
        scene = self.state.document.scene

        def label(oid: int) -> str:
            return object_label(oid, scene, names)

        for rank, (spot, cell) in enumerate(cells, 1):
            self.tree.addTopLevelItem(self._cell_item(rank, spot, cell, label))

    def _cell_item(self, rank, spot, cell, label) -> QTreeWidgetItem:
        lo, hi = np.array(spot.lo), np.array(spot.hi)
        size = hi - lo
        shape = f"{size[0]:.0f}³" if np.all(size == size[0]) else "×".join(f"{s:.0f}" for s in size)
        item = QTreeWidgetItem([f"#{rank} {shape} @ {lo[0]:.0f},{lo[1]:.0f},{lo[2]:.0f}",
                                str(spot.pair_tests), str(spot.frames), str(spot.depth)])
        box = (lo.tolist(), hi.tolist())
        item.setData(0, _BOX, box)
        if cell is None:  # the cell is gone from the displayed frame's tree
            item.setData(0, _IDS, [])
            item.setToolTip(0, f"cell {box[0]} .. {box[1]}: not in the displayed frame's tree")
            return item
        item.setData(0, _IDS, [int(i) for i in cell.held])
        item.setToolTip(0, f"cell {box[0]} .. {box[1]}: {len(cell.held)} objects stored in it, "
                           f"{cell.cell_tests:,} tests this frame, {len(cell.pairs)} overlapping pairs")
        scene = self.state.document.scene
        lines = describe_cell(cell, label)
        for oid, tests, line in zip(cell.held[:MAX_OBJECTS].tolist(), cell.tests.tolist(), lines):
            item.addChild(self._leaf(line, [oid], box, str(tests), oid in scene))
        if len(cell.held) > MAX_OBJECTS:
            item.addChild(QTreeWidgetItem([f"… {len(cell.held) - MAX_OBJECTS} more stored here", "", "", ""]))
        for a, b in cell.pairs[:MAX_PAIRS].tolist():
            item.addChild(self._leaf(f"pair {label(a)} × {label(b)} (overlap)", [a, b], box, "",
                                     a in scene or b in scene))
        if len(cell.pairs) > MAX_PAIRS:
            item.addChild(QTreeWidgetItem([f"… {len(cell.pairs) - MAX_PAIRS} more pairs", "", "", ""]))
        return item

    @staticmethod
    def _leaf(text: str, ids: list[int], box, tests: str, selectable: bool) -> QTreeWidgetItem:
        child = QTreeWidgetItem([text, tests, "", ""])
        child.setData(0, _IDS, ids)
        child.setData(0, _BOX, box)
        child.setToolTip(0, text)
        if not selectable:
            child.setForeground(0, Qt.GlobalColor.gray)
        return child

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
