"""Ray and frustum results: hits by distance (click to select), work done against brute force."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..tools.edit_ops import select


class QueryPanel(QWidget):
    def __init__(self, state, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.camera_source = None
        self.setObjectName("query_panel")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.ray_info = QLabel("Ray tool (R): drag in a 2D view or click in the 3D view.")
        self.ray_info.setObjectName("ray_info")
        self.ray_info.setWordWrap(True)
        layout.addWidget(self.ray_info)
        self.hits = QListWidget()
        self.hits.setObjectName("ray_hits")
        self.hits.itemClicked.connect(lambda item: select(state.document, [item.data(Qt.UserRole)]))
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

    def _use_camera(self) -> None:
        if self.camera_source is not None:
            self.state.set_frustum(self.camera_source())

    def _select_inside(self) -> None:
        fr = self.state.frustum
        if fr is not None and fr.result is not None:
            select(self.state.document, fr.result.ids.tolist(), text="Select in frustum")

    def _clear(self) -> None:
        self.state.ray = None
        self.state.set_frustum(None)

    def refresh(self) -> None:
        st = self.state
        self.hits.clear()
        ray = st.ray
        if ray is not None and ray.result is not None:
            r = ray.result
            o = ", ".join(f"{x:.0f}" for x in ray.origin)
            d = ", ".join(f"{x:.2f}" for x in ray.direction)
            self.ray_info.setText(
                f"<b>Ray</b> from ({o}) along ({d}): {len(r.ids)} hits.<br>"
                f"{st.document.index.name}: {r.nodes_visited} nodes visited, {r.objects_tested} objects tested "
                f"— brute force tests {ray.brute_tested}.")
            scene = st.document.scene
            for oid, t in zip(r.ids.tolist(), r.t.tolist()):
                obj = scene.get(oid)
                name = obj.classname if obj is not None and hasattr(obj, "classname") else "brush"
                item = QListWidgetItem(f"{t:9.1f}   {oid}  {name}")
                item.setData(Qt.UserRole, oid)
                self.hits.addItem(item)
        else:
            self.ray_info.setText("Ray tool (R): drag in a 2D view or click in the 3D view.")
        fr = st.frustum
        if fr is not None and fr.result is not None:
            r = fr.result
            culled = len(r.culled) if r.culled is not None else 0
            self.frustum_info.setText(
                f"<b>Frustum</b>: {len(r.ids)} objects inside.<br>{st.document.index.name}: "
                f"{r.nodes_visited} nodes visited ({culled} culled), {r.objects_tested} objects tested "
                f"— brute force tests {fr.brute_tested}.")
        else:
            self.frustum_info.setText("Frustum tool (F): drag from the eye toward the target, "
                                      "or take the 3D camera.")
