"""The node inspector: the clicked node's bounds, depth, counts and objects (selectable).

Objects are labelled as in the hotspot lists (:func:`~editor.model.hotspot_pairs.object_label`):
by the name a live game or a recording sent, else by what the level holds under that id.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QPushButton

from editor.model.hotspot_pairs import object_label

from ..tools.edit_ops import select
from .base import StatePanel


class InspectorPanel(StatePanel):
    def __init__(self, state, parent=None) -> None:
        super().__init__(state, "inspector_panel", parent)
        self.info = self.add(QLabel("Pick the Inspect tool (I) and click a node."), "node_info")
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.objects = self.add(QListWidget(), "node_objects", stretch=1)
        self.objects.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        self.objects.itemDoubleClicked.connect(lambda item: self._select([item]))
        button = self.add(QPushButton("Select these objects"))
        button.clicked.connect(lambda: self._select(self.objects.selectedItems() or
                                                    [self.objects.item(i) for i in range(self.objects.count())]))
        state.inspected_node_changed.connect(self.show_node)
        state.overlay_changed.connect(lambda geom: self.show_node(state.inspected_node))

    def show_node(self, row: int) -> None:
        st = self.state
        table = st.node_table
        self.objects.clear()
        if table is None or not (0 <= row < len(table)):
            self.info.setText("No node. Pick the Inspect tool (I) and click a node.")
            return
        lo, hi = table.lo[row], table.hi[row]
        def fmt(v) -> str:
            return "(" + ", ".join(f"{x:g}" for x in v) + ")"
        text = [f"<b>Node {row}</b> ({'leaf' if table.is_leaf[row] else 'inner'}), depth {table.depth[row]}, "
                f"parent {table.parent[row]}",
                f"bounds {fmt(lo)} – {fmt(hi)}", f"size {fmt(hi - lo)}"]
        if (table.core_lo[row] != lo).any() or (table.core_hi[row] != hi).any():
            text.append(f"core cell {fmt(table.core_lo[row])} – {fmt(table.core_hi[row])}")
        text.append(f"objects here {table.own_count[row]}, in subtree {table.subtree_count[row]}")
        text.append(f"awake {bool(table.awake[row])}, lifespan {table.lifespan_left[row]}/{table.lifespan_max[row]}, "
                    f"pair tests {table.pair_tests[row]}")
        self.info.setText("<br>".join(text))
        scene = st.document.scene
        index = st.node_table_index if st.node_table_index is not None else st.document.index
        try:
            ids = index.node_objects(row).tolist()
        except IndexError:  # the tree on screen changed under the inspected row
            ids = []
        # a live game's or a recording's objects are named as the game named them
        shown_names = getattr(st.frame_source, "shown_names", None)
        names = shown_names() if shown_names is not None and index is not st.document.index else None
        for oid in ids:
            item = QListWidgetItem(object_label(oid, scene, names))
            item.setData(Qt.ItemDataRole.UserRole, oid)
            self.objects.addItem(item)

    def _select(self, items) -> None:
        ids = [it.data(Qt.ItemDataRole.UserRole) for it in items if it is not None]
        if ids:
            select(self.state.document, ids, text="Select node objects")
