"""Statistics of the live index: size, depth against the ideal, duplicates, pairs, timings,
and histograms of objects per leaf and leaves per depth."""
from __future__ import annotations

import copy
import time
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel

from .base import StatePanel, single_shot_timer

if TYPE_CHECKING:  # for the annotation only: the panel imports it where a count starts
    from ..workers import CallWorker

#: the panel refreshes this long after the last index change
SETTLE_MS = 250


class HistogramPlot(pg.PlotWidget):
    """A plot that asks for a small height and stretches into whatever its dock has left.

    A plot's default preferred height (480 px) made the Statistics dock's scroll area size its
    panel for it, which scrolled the histograms' axes out of sight in any window.
    """

    PREFERRED_HEIGHT = 130

    def __init__(self, title: str, bottom_label: str) -> None:
        super().__init__(background=(30, 32, 38))
        self.setTitle(title, size="9pt")
        self.setLabel("bottom", bottom_label)
        self.setLabel("left", "leaves")
        self.setMinimumSize(140, self.PREFERRED_HEIGHT)
        self.setMouseEnabled(False, False)
        self.hideButtons()

    def sizeHint(self):
        hint = super().sizeHint()
        hint.setHeight(self.PREFERRED_HEIGHT)
        return hint


class StatsPanel(StatePanel):
    def __init__(self, state, parent=None) -> None:
        super().__init__(state, "stats_panel", parent)
        layout = self.body
        grid = QGridLayout()
        self.values: dict[str, QLabel] = {}
        rows = [("nodes", "Nodes"), ("leaves", "Leaves"), ("depth", "Max depth (ideal)"),
                ("references", "References (duplicates)"), ("pairs", "Pairs: candidates / overlapping"),
                ("build", "Build / update"), ("memory", "Memory")]
        for r, (key, text) in enumerate(rows):
            name = QLabel(text)
            value = QLabel("–")
            value.setObjectName(f"stat_{key}")
            for label in (name, value):  # wrap rather than clip in a narrow dock (1280x800)
                label.setWordWrap(True)
            grid.addWidget(name, r, 0)
            grid.addWidget(value, r, 1)
            self.values[key] = value
        grid.setColumnStretch(1, 1)
        layout.addLayout(grid)
        self.per_leaf = HistogramPlot("Objects per leaf", "objects")
        self.per_depth = HistogramPlot("Leaves per depth", "depth")
        # side by side: the Statistics dock shares its column with two others, and stacked
        # plots left each histogram's lower half scrolled out of sight at 1600x1000
        plots = QHBoxLayout()
        plots.setSpacing(4)
        for plot in (self.per_leaf, self.per_depth):
            plots.addWidget(plot, 1)
        layout.addLayout(plots, 1)
        self.stats: dict = {}
        self.on_hold = False
        self._counter: CallWorker | None = None  # the pair count running on a worker thread
        self._count_again = False
        # figures follow the edits once they pause: a burst of edits (key repeat, a drag)
        # restarts the wait instead of repainting the panel between its frames
        self._timer = single_shot_timer(self, SETTLE_MS, self.refresh)
        state.overlay_changed.connect(lambda geom: self._timer.start())

    def showEvent(self, ev) -> None:
        super().showEvent(ev)
        self._timer.start()  # it skipped updates while hidden

    def hold(self) -> None:
        """Skip automatic refreshes until :meth:`release` (the window's first frame comes first)."""
        self.on_hold = True

    def release(self) -> None:
        """Resume automatic refreshes, starting with one now."""
        self.on_hold = False
        self._timer.start()

    def refresh(self, force: bool = False) -> None:
        """Recompute from the live index (the overlay already fetched the node table).

        Sizes and histograms are read at once; the pair count, which can take a second on a
        huge level, runs on a worker thread over a snapshot of the index and fills in when it
        arrives (a count for an index edited meanwhile is dropped and counted again). A hidden
        panel does none of it, nor one on hold. ``force`` refreshes all the same and counts the
        pairs here and now (a screenshot or a script wants the figures on return).
        """
        doc, table = self.state.document, self.state.node_table
        if doc is None or table is None or not (force or (self.isVisible() and not self.on_hold)):
            return
        index = doc.index
        # the sizes from the table the window read for its overlay, when it is this index's
        # as it is now (reading a 2,000,000-triangle tree again took seconds)
        current = self.state.table_is_current() and self.state.node_table_index is index
        stats = self.state.take_stats(index, doc.index_version) if current else None
        if stats is None:  # none made with the level, or the index changed since
            stats = index.stats(table) if current else index.stats()
        self._show_sizes(stats)
        self._show_histograms(table, stats)
        if force:
            self._cancel_count()
            start = time.perf_counter()
            pairs = index.count_pairs("all")
            self._show_pairs(stats, pairs, (time.perf_counter() - start) * 1e3)
            return
        self._count_pairs(doc, index, stats)

    def _show_sizes(self, stats: dict) -> None:
        objects = stats.get("objects", 0)
        refs = stats["references"]
        self.values["nodes"].setText(f"{stats['nodes']}")
        self.values["leaves"].setText(f"{stats['leaves']}")
        self.values["depth"].setText(f"{stats['max_depth']} (ideal {stats['ideal_depth']})")
        dup = refs - objects
        self.values["references"].setText(f"{refs} for {objects} objects ({dup:+d})")
        self.values["build"].setText(f"{stats['build_ms']:.2f} ms / {stats['update_ms']:.2f} ms")
        self.values["memory"].setText(f"{stats['memory_bytes'] / 1024:.1f} KiB")

    def _show_pairs(self, stats: dict, pairs, ms: float) -> None:
        self.values["pairs"].setText(f"{pairs.tests} / {pairs.overlapping}  ({ms:.1f} ms)")
        self.stats = dict(stats, candidates=int(pairs.tests), overlapping=int(pairs.overlapping))

    # ------------------------------------------------------------------ pair count worker
    def _count_pairs(self, doc, index, stats: dict) -> None:
        if self._counter is not None:
            self._count_again = True  # one count at a time: the latest index follows
            return
        # the worker owns the snapshot, so edits go on meanwhile; a level read in the
        # background comes with one made on the loading thread
        snapshot = self.state.take_index_copy(index, doc.index_version)
        if snapshot is None:
            try:
                snapshot = copy.deepcopy(index)
            except Exception:
                snapshot = None
        if snapshot is None:  # a backend that cannot be copied is counted here
            start = time.perf_counter()
            self._show_pairs(stats, index.count_pairs("all"), (time.perf_counter() - start) * 1e3)
            return
        from ..workers import CallWorker
        version = (id(index), doc.index_version)
        worker = CallWorker(lambda: snapshot.count_pairs("all"))
        worker.result.connect(lambda pairs, ms: self._on_counted(version, stats, pairs, ms))
        worker.failed.connect(self._on_count_failed)
        self._counter = worker
        self._count_again = False
        if not self.values["pairs"].text().endswith("…"):
            self.values["pairs"].setText(self.values["pairs"].text() + "  …")
        worker.start()

    def _on_counted(self, version, stats, pairs, ms: float) -> None:
        self._counter = None
        doc = self.state.document
        current = doc is not None and (id(doc.index), doc.index_version) == version
        if current:
            self._show_pairs(stats, pairs, ms)
        if self._count_again or not current:
            self._count_again = False
            self._timer.start()

    def _on_count_failed(self, message: str) -> None:
        self._counter = None
        self.values["pairs"].setText(f"not counted ({message})")

    def _cancel_count(self) -> None:
        if self._counter is not None:
            self._counter.cancel()
            self._counter = None

    def pair_count_pending(self) -> bool:
        """True while a pair count runs on the worker thread."""
        return self._counter is not None

    def _show_histograms(self, table, stats: dict) -> None:
        leaves = table.is_leaf
        self.per_leaf.clear()
        self.per_depth.clear()
        if leaves.any():
            counts = np.bincount(table.own_count[leaves].astype(np.int64))
            self.per_leaf.addItem(pg.BarGraphItem(x=np.arange(len(counts)), height=counts, width=0.8,
                                                  brush=(90, 160, 230)))
            depths = np.bincount(table.depth[leaves].astype(np.int64))
            self.per_depth.addItem(pg.BarGraphItem(x=np.arange(len(depths)), height=depths, width=0.8,
                                                   brush=(120, 200, 120)))
            ideal = stats["ideal_depth"]
            pen = pg.mkPen((255, 200, 60), style=pg.QtCore.Qt.DashLine)
            self.per_depth.addItem(pg.InfiniteLine(ideal, angle=90, pen=pen,
                                                   label="ideal", labelOpts={"color": (255, 200, 60)}))
