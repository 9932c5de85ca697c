"""Overlay controls: metric, depth range, leaves only, box cap, loose bounds, and the legend.

The legend is a colour bar with the metric's meaning and its range, plus how many nodes are
drawn out of how many (and how many the cap left out), so a heatmap always says what it shows.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QLinearGradient, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QWidget,
)

from editor.model.heatmap_metrics import METRICS
from editor.model.heatmap_metrics import metric as heatmap_metric

from ..colors import SPLIT_LINE, colormap
from ..quiet import set_checked_quietly, signals_blocked
from .base import StatePanel


class LegendBar(QWidget):
    """A horizontal colour bar labelled with the range it stands for."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("legend_bar")
        self.setMinimumHeight(34)
        self.vmin, self.vmax, self.integer = 0.0, 1.0, True
        self.value_at = lambda t: self.vmin + t * (self.vmax - self.vmin)
        self.log_scale = False

    def set_range(self, vmin: float, vmax: float, integer: bool = True, value_at=None,
                  log_scale: bool = False) -> None:
        self.vmin, self.vmax, self.integer = vmin, vmax, integer
        if value_at is not None:
            self.value_at = value_at
        self.log_scale = log_scale
        self.update()

    def _fmt(self, x: float) -> str:
        return f"{int(round(x))}" if self.integer else f"{x:.3g}"

    def paintEvent(self, ev) -> None:
        p = QPainter(self)
        bar = self.rect().adjusted(4, 2, -4, -18)
        grad = QLinearGradient(bar.left(), 0, bar.right(), 0)
        for t in np.linspace(0, 1, 9):
            r, g, b = colormap(np.array([t]))[0]
            grad.setColorAt(float(t), QColor.fromRgbF(r, g, b))
        p.fillRect(bar, grad)
        p.setPen(QPen(self.palette().color(QPalette.ColorRole.WindowText)))
        p.drawText(bar.left(), bar.bottom() + 14, self._fmt(self.vmin))
        hi = self._fmt(self.vmax)
        p.drawText(bar.right() - p.fontMetrics().horizontalAdvance(hi), bar.bottom() + 14, hi)
        if self.vmax > self.vmin:
            mid = self._fmt(self.value_at(0.5)) + (" (log scale)" if self.log_scale else "")
            p.drawText(bar.center().x() - p.fontMetrics().horizontalAdvance(mid) // 2, bar.bottom() + 14, mid)
        p.end()


class OverlayPanel(StatePanel):
    """The overlay's switch, metric (from :data:`editor.model.heatmap_metrics.METRICS`),
    legend and filters."""

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, "overlay_panel", parent)
        self._build_metric_row(state)
        self._build_legend()
        self._build_filters(state)
        self.body.addStretch(1)
        state.overlay_changed.connect(self._on_overlay_changed)

    def _build_metric_row(self, state) -> None:
        form = QFormLayout()
        # the switch and the metric share a row: the dock shares its column with two others
        self.visible = QCheckBox("Show, colour by")
        self.visible.setObjectName("overlay_visible_box")
        self.visible.setToolTip("Show the tree overlay (as the toolbar's Tree overlay button does)")
        self.visible.setChecked(state.overlay_visible)
        self.visible.toggled.connect(state.set_overlay_visible)
        state.overlay_visible_changed.connect(lambda on: set_checked_quietly(self.visible, on))
        self.metric_combo = QComboBox()
        self.metric_combo.setObjectName("metric_combo")
        for metric in METRICS.values():  # every registered heatmap metric, in the table's order
            self.metric_combo.addItem(metric.label, metric.key)
            self.metric_combo.setItemData(self.metric_combo.count() - 1, metric.legend, Qt.ItemDataRole.ToolTipRole)
        self.metric_combo.currentIndexChanged.connect(
            lambda i: state.set_overlay_settings(metric=self.metric_combo.itemData(i)))
        form.addRow(self.visible, self.metric_combo)
        self.body.addLayout(form)

    def _build_legend(self) -> None:
        layout = self.body
        self.legend_title = QLabel()
        self.legend_title.setObjectName("legend_title")
        self.legend_title.setWordWrap(True)
        layout.addWidget(self.legend_title)
        self.legend = LegendBar()
        layout.addWidget(self.legend)
        self.summary = QLabel()
        self.summary.setObjectName("overlay_summary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        # the split planes are drawn in one colour over the heatmap: their own legend line
        self.planes_key = QLabel(_split_plane_key())
        self.planes_key.setObjectName("planes_key")
        self.planes_key.setWordWrap(True)
        self.planes_key.setVisible(False)
        layout.addWidget(self.planes_key)

    def _build_filters(self, state) -> None:
        form = QFormLayout()
        depth_row = QHBoxLayout()
        self.min_depth = QSpinBox()
        self.min_depth.setRange(0, 64)
        self.max_depth = QSpinBox()
        self.max_depth.setRange(0, 64)
        self.max_depth.setValue(64)
        for w, key in ((self.min_depth, "min_depth"), (self.max_depth, "max_depth")):
            w.setToolTip("Draw only nodes within this depth range (level of detail)")
            w.valueChanged.connect(lambda v, k=key: state.set_overlay_settings(**{k: v}))
            depth_row.addWidget(w)
        form.addRow("Depth from/to", depth_row)
        self.leaves = QCheckBox("Leaves only")
        self.leaves.toggled.connect(lambda on: state.set_overlay_settings(leaves_only=on))
        self.loose = QCheckBox("Loose bounds + core cells")
        self.loose.setChecked(True)
        self.loose.setToolTip("Loose octree: draw the loose bounds, and the core cell dimmer")
        self.loose.toggled.connect(lambda on: state.set_overlay_settings(show_loose=on))
        self.planes = QCheckBox("Split planes (BSP)")
        self.planes.setObjectName("show_planes_box")
        self.planes.setChecked(state.overlay_settings.show_planes)
        self.planes.setToolTip("BSP trees (bsp, shipped_bsp): draw each node's split plane in its "
                               "box (3D) and its split line (2D views)")
        self.planes.toggled.connect(lambda on: state.set_overlay_settings(show_planes=on))
        # the three switches two to a row: the dock shares its column with two others
        switches = QGridLayout()
        switches.setContentsMargins(0, 0, 0, 0)
        switches.addWidget(self.leaves, 0, 0)
        switches.addWidget(self.planes, 0, 1)
        switches.addWidget(self.loose, 1, 0, 1, 2)
        form.addRow(switches)
        self.cap = QSpinBox()
        self.cap.setRange(100, 1_000_000)
        self.cap.setSingleStep(5000)
        self.cap.setValue(state.overlay_settings.max_boxes)
        self.cap.setToolTip("Most boxes drawn; beyond it the shallowest levels win")
        self.cap.valueChanged.connect(lambda v: state.set_overlay_settings(max_boxes=v))
        form.addRow("Box cap", self.cap)
        self.body.addLayout(form)

    def set_metric(self, key: str) -> None:
        self.metric_combo.setCurrentIndex(self.metric_combo.findData(key))

    def _on_overlay_changed(self, geom) -> None:
        metric = heatmap_metric(geom.metric)
        with signals_blocked(self.metric_combo):
            self.metric_combo.setCurrentIndex(self.metric_combo.findData(geom.metric))
        self.legend_title.setText(f"<b>{metric.label}</b>: {metric.legend}")
        self.legend.set_range(geom.vmin, geom.vmax, integer=metric.integer, value_at=geom.value_at,
                              log_scale=geom.log_scale)
        cut = f"; {geom.truncated} over the cap not drawn" if geom.truncated else ""
        loose = "; loose bounds (core cells dimmer)" if geom.has_loose else ""
        self.summary.setText(f"{geom.count} of {geom.total} nodes drawn{cut}{loose}. "
                             f"Range {geom.vmin:g} – {geom.vmax:g}.")
        # the key shows only when planes are on screen (a BSP with the box ticked)
        self.planes_key.setVisible(len(geom.plane_lines3d) > 0)


def _split_plane_key() -> str:
    """Rich text: a swatch in the split planes' colour and what it marks."""
    hex_colour = QColor.fromRgbF(*SPLIT_LINE).name()
    return (f'<span style="color:{hex_colour}; font-weight:bold">━━</span> '
            "split plane of each drawn node, clipped to its box (3D); its trace in the 2D views")
