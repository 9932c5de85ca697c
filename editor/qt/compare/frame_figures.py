"""The per-frame figures of compare mode: A and B on the timeline's frame, and over the frames.

Shown while the sides follow a timeline frame (:mod:`.timeline_follow`): a small table of the
frame's active pair tests, overlapping pairs and update time of A and B with B / A, and a line
plot of one of those figures for A and B over every frame shown since the timeline's source
changed, with a line at the current frame.
"""
from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QGraphicsItem,
    QHBoxLayout,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from editor.model.compare.frames import FRAME_FIGURES, FrameFigures, FrameHistory

from .table import cell_text

HEADERS = ("this frame", "A", "B", "B / A")
SIDE_COLOURS = {"a": (90, 200, 255), "b": (255, 170, 60)}
#: fewer frames than this are plotted with a dot on each
FEW_FRAMES = 40
#: the plot redraws at most this often while the timeline plays (ms): a trend, not the frame
REFRESH_MS = 250


class FrameFiguresPanel(QWidget):
    """See the module docstring. Hidden while the sides show the edited level."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("compare_frame_figures")
        self.figures: FrameFigures | None = None
        self.history: FrameHistory | None = None
        self.names = ("A", "B")
        self.title = QLabel()
        self.title.setObjectName("compare_frame_title")
        self.table = QTableWidget(len(FRAME_FIGURES), len(HEADERS))
        self.table.setObjectName("compare_frame_table")
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setMinimumWidth(360)
        self.table.setFixedHeight(self.table.horizontalHeader().sizeHint().height()
                                  + len(FRAME_FIGURES) * (self.fontMetrics().height() + 6) + 4)
        self.plotted = QComboBox()
        self.plotted.setObjectName("compare_frame_plotted")
        for key, label in FRAME_FIGURES:
            self.plotted.addItem(label, key)
        self.plotted.currentIndexChanged.connect(lambda _i: self.refresh_plot())
        self.plot = pg.PlotWidget(background=(24, 26, 31))
        self.plot.setObjectName("compare_frame_plot")
        self.plot.setMinimumSize(240, 110)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        for axis in ("bottom", "left"):  # the moving cursor must not replay the axes
            self.plot.getAxis(axis).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.plot.setLabel("bottom", "frame")
        self.plot.addLegend(offset=(6, 4), labelTextSize="8pt")
        self.curves = {key: self.plot.plot([], [], pen=pg.mkPen(colour, width=1.5), name=key.upper())
                       for key, colour in SIDE_COLOURS.items()}
        self.frame_line = pg.InfiniteLine(angle=90, pen=pg.mkPen((255, 255, 255, 90)))
        self.plot.addItem(self.frame_line, ignoreBounds=True)
        left = QVBoxLayout()
        left.setContentsMargins(0, 0, 0, 0)
        left.addWidget(self.title)
        left.addWidget(self.table)
        chooser = QHBoxLayout()
        chooser.addWidget(QLabel("plotted over the frames:"))
        chooser.addWidget(self.plotted, 1)
        left.addLayout(chooser)
        left.addStretch(1)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addLayout(left, 0)
        row.addWidget(self.plot, 1)
        self._plot_timer = QTimer(self)
        self._plot_timer.setSingleShot(True)
        self._plot_timer.setInterval(REFRESH_MS)
        self._plot_timer.timeout.connect(self.refresh_plot)
        self.setVisible(False)

    def set_names(self, a: str, b: str) -> None:
        """The sides' labels (``octree``, ``bvh max_leaf=4``) for the legend."""
        self.names = (a, b)
        for (key, curve), name in zip(self.curves.items(), self.names):
            self.plot.plotItem.legend.getLabel(curve).setText(f"{key.upper()}: {name}")

    def show_figures(self, figures: FrameFigures | None, history: FrameHistory) -> None:
        """Show one frame's figures (None: the sides show the edited level; hide)."""
        self.figures, self.history = figures, history
        self.setVisible(figures is not None)
        if figures is None:
            return
        self.title.setText(f"Timeline frame {figures.frame}: A {self.names[0]}, "
                           f"B {self.names[1]}")
        for r, (key, label, a, b, ratio) in enumerate(figures.rows()):
            name = QTableWidgetItem(label)
            name.setData(Qt.ItemDataRole.UserRole, key)
            self.table.setItem(r, 0, name)
            for c, value in enumerate((a, b, ratio), start=1):
                shown = round(value, 3) if isinstance(value, float) and key.endswith("_ms") else value
                item = QTableWidgetItem(cell_text(shown))
                item.setData(Qt.ItemDataRole.UserRole, value)
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        if not self._plot_timer.isActive():
            self._plot_timer.start()

    def refresh_plot(self) -> None:
        """Redraw the plot of the chosen figure over the frames shown."""
        self._plot_timer.stop()
        if self.history is None:
            return
        frames, a, b = self.history.columns(self.plotted.currentData())
        # a few frames seen (the timeline just opened, or scrubbed): dots, so one shows at all
        dots = "o" if len(frames) < FEW_FRAMES else None
        for key, values in (("a", a), ("b", b)):
            self.curves[key].setData(frames, values, symbol=dots, symbolSize=5,
                                     symbolBrush=SIDE_COLOURS[key], symbolPen=None)
        self.frame_line.setValue(self.figures.frame if self.figures is not None else 0)

    def values(self) -> dict[str, tuple]:
        """``key -> (A, B, B/A)`` as shown (read back from the cells)."""
        out = {}
        for r in range(self.table.rowCount()):
            cells = [self.table.item(r, c) for c in range(4)]
            values = [cell.data(Qt.ItemDataRole.UserRole) for cell in cells if cell is not None]
            if len(values) == 4:  # a row filled by show_figures
                out[values[0]] = tuple(values[1:])
        return out
