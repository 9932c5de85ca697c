"""Ray and frustum results: hits by distance (click to select), work done against brute force."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
)

from editor.model.hotspot_pairs import object_label

from ..colors import CULLED, QUERY_HIT, QUERY_RAY, VISITED
from ..quiet import set_checked_quietly, signals_blocked
from ..tools.edit_ops import select
from .base import StatePanel

if TYPE_CHECKING:
    from ..views.camera import CameraShot

#: widest level coordinate the ray height box accepts
_HEIGHT_LIMIT = 1e6


def _swatch(rgb, text: str) -> str:
    r, g, b = (int(c * 255) for c in rgb)
    return f'<span style="color:#{r:02x}{g:02x}{b:02x}">■</span> {text}'


class QueryPanel(StatePanel):
    def __init__(self, state, parent=None) -> None:
        super().__init__(state, "query_panel", parent)
        #: the 3D view's camera, when there is one (the "use camera" frustum)
        self.camera_source: Callable[[], CameraShot] | None = None
        layout = self.body
        top = QHBoxLayout()
        self.layer_box = QCheckBox("Show query results")
        self.layer_box.setObjectName("query_layer_box")
        self.layer_box.setChecked(state.query_layer_visible)
        self.layer_box.toggled.connect(state.set_query_layer_visible)
        state.query_layer_visible_changed.connect(lambda on: set_checked_quietly(self.layer_box, on))
        top.addWidget(self.layer_box)
        legend = QLabel("  ".join([_swatch(QUERY_RAY, "ray"), _swatch(QUERY_HIT, "hits"),
                                   _swatch(VISITED, "visited"), _swatch(CULLED, "culled")]))
        legend.setObjectName("query_legend")
        legend.setToolTip("Query layer colours (drawn over the tree overlay). Esc clears it; "
                          "so does changing tools.")
        top.addWidget(legend, 1)
        layout.addLayout(top)
        height_row = QHBoxLayout()
        height_row.addWidget(QLabel("Ray height (top view)"))
        self.ray_height = QDoubleSpinBox()
        self.ray_height.setObjectName("ray_height")
        self.ray_height.setRange(-_HEIGHT_LIMIT, _HEIGHT_LIMIT)
        self.ray_height.setDecimals(1)
        self.ray_height.setSuffix(" z")
        self.ray_height.setKeyboardTracking(False)  # one re-cast per edit, not per keystroke
        self.ray_height.setToolTip("Height of rays drawn in the top view; edit it to move the ray")
        self.ray_height.valueChanged.connect(state.set_ray_height)
        height_row.addWidget(self.ray_height, 1)
        self.ray_height_auto = QCheckBox("auto")
        self.ray_height_auto.setObjectName("ray_height_auto")
        self.ray_height_auto.setChecked(state.ray_height is None)
        self.ray_height_auto.setToolTip("Automatic: 48 units above the floor where the ray starts")
        self.ray_height_auto.toggled.connect(self._on_auto_toggled)
        height_row.addWidget(self.ray_height_auto)
        layout.addLayout(height_row)
        state.ray_height_changed.connect(lambda h: self._show_ray_height())
        self.ray_info = QLabel("Ray tool (R): drag in a 2D view or click in the 3D view.")
        self.ray_info.setObjectName("ray_info")
        self.ray_info.setWordWrap(True)
        layout.addWidget(self.ray_info)
        self.hits = QListWidget()
        self.hits.setObjectName("ray_hits")
        self.hits.itemClicked.connect(lambda item: select(state.document, [item.data(Qt.ItemDataRole.UserRole)]))
        layout.addWidget(self.hits, 1)
        self.frustum_info = QLabel("Frustum tool (F): drag from the eye toward the target.")
        self.frustum_info.setObjectName("frustum_info")
        self.frustum_info.setWordWrap(True)
        layout.addWidget(self.frustum_info)
        row = QHBoxLayout()
        self.from_camera = QPushButton("Frustum from 3D camera")
        self.from_camera.clicked.connect(self._use_camera)
        self.select_inside = QPushButton("Select inside")
        self.select_inside.clicked.connect(self._select_inside)
        clear = QPushButton("Clear")
        clear.clicked.connect(self._clear)
        for b in (self.from_camera, self.select_inside, clear):
            row.addWidget(b)
        layout.addLayout(row)
        state.queries_changed.connect(self.refresh)

    def _on_auto_toggled(self, auto: bool) -> None:
        self.state.set_ray_height(None if auto else self.ray_height.value())

    def _show_ray_height(self) -> None:
        """The spin box shows the fixed height, else the height of the last top-view ray."""
        st = self.state
        value = st.ray_height
        if value is None and st.ray is not None and st.ray.direction[2] == 0:
            value = float(st.ray.origin[2])
        for widget, setter, arg in ((self.ray_height, "setValue", value),
                                    (self.ray_height_auto, "setChecked", st.ray_height is None)):
            if arg is None:
                continue
            with signals_blocked(widget):
                getattr(widget, setter)(arg)

    def _use_camera(self) -> None:
        if self.camera_source is not None:
            self.state.set_frustum(self.camera_source())

    def _select_inside(self) -> None:
        fr = self.state.frustum
        if fr is not None and fr.result is not None:
            select(self.state.document, fr.result.ids.tolist(), text="Select in frustum")

    def _clear(self) -> None:
        self.state.clear_queries()

    def refresh(self) -> None:
        st = self.state
        self._show_ray_height()
        self.hits.clear()
        ray = st.ray
        if ray is not None and ray.result is not None:
            r = ray.result
            o = ", ".join(f"{x:.0f}" for x in ray.origin)
            d = ", ".join(f"{x:.2f}" for x in ray.direction)
            self.ray_info.setText(
                f"<b>Ray</b> from ({o}) along ({d}): {len(r.ids)} hits.<br>"
                f"{ray.index_name}: {r.nodes_visited} nodes visited, {r.objects_tested} objects tested "
                f"— brute force tests {ray.brute_tested}.")
            scene, names = st.document.scene, st.shown_names()  # a game's frame: its names
            for oid, t in zip(r.ids.tolist(), r.t.tolist()):
                item = QListWidgetItem(f"{t:9.1f}   {object_label(oid, scene, names)}")
                item.setData(Qt.ItemDataRole.UserRole, oid)
                self.hits.addItem(item)
        else:
            self.ray_info.setText("Ray tool (R): drag in a 2D view or click in the 3D view.")
        fr = st.frustum
        if fr is not None and fr.result is not None:
            r = fr.result
            culled = len(r.culled) if r.culled is not None else 0
            self.frustum_info.setText(
                f"<b>Frustum</b>: {len(r.ids)} objects inside.<br>{fr.index_name}: "
                f"{r.nodes_visited} nodes visited ({culled} culled), {r.objects_tested} objects tested "
                f"— brute force tests {fr.brute_tested}.")
        else:
            self.frustum_info.setText("Frustum tool (F): drag from the eye toward the target, "
                                      "or take the 3D camera.")
