"""Entity key/values of the selected entity (or of the entity owning a selected brush).

Editing a value, adding or removing a key pushes ``SetProperties``; the table follows model
changes with its signals blocked. Below the table a point entity's motion has its own editor
(:class:`.motion_editor.MotionEditor`), whose changes are ``SetProperties`` commands too.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from editor.model import Brush, ChangeKind, Entity, SetProperties

from ..quiet import signals_blocked
from .base import push_button
from .motion_editor import MotionEditor


class PropertiesPanel(QWidget):
    def __init__(self, state, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.setObjectName("properties_panel")
        self.entity_id: int | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.title = QLabel("No entity selected")
        # wrapped, so a longer title does not widen the dock: that resized every view and
        # painted the level again right after it opened
        self.title.setWordWrap(True)
        layout.addWidget(self.title)
        self.table = QTableWidget(0, 2)
        self.table.setObjectName("properties_table")
        self.table.setHorizontalHeaderLabels(["Key", "Value"])
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        self.table.itemChanged.connect(self._on_item_changed)
        layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        self.add_button = push_button("Add key", self._add_key)
        self.remove_button = push_button("Remove key", self._remove_key)
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        layout.addLayout(row)
        self.motion_editor = MotionEditor()
        self.motion_editor.edit_requested.connect(self.set_values)
        self.motion_editor.hide()
        layout.addWidget(self.motion_editor)
        self._keys: list[str] = []
        state.selection_changed.connect(lambda ids: self.refresh())
        state.document_replaced.connect(self._on_document_replaced)

    def _on_document_replaced(self, document) -> None:
        document.scene_changed.connect(self._on_scene_changed)
        self.refresh()

    def _on_scene_changed(self, ids, kind) -> None:
        if kind & ChangeKind.PROPERTIES and (self.entity_id in ids):
            self.refresh()

    def _target(self):
        doc = self.state.document
        scene = doc.scene
        targets = set()
        for oid in doc.selection:
            obj = scene.get(oid)
            if isinstance(obj, Entity):
                targets.add(oid)
            elif isinstance(obj, Brush):
                targets.add(obj.entity)
        return next(iter(targets)) if len(targets) == 1 else None

    def refresh(self) -> None:
        doc = self.state.document
        if doc is None:
            return
        self.entity_id = self._target()
        with signals_blocked(self.table):
            self.table.setRowCount(0)
            self._keys = []
            if self.entity_id is None:
                self.title.setText("Select one entity (or brushes of one entity)")
            else:
                ent = doc.scene[self.entity_id]
                self.title.setText(f"<b>{ent.classname}</b> (id {self.entity_id}, {ent.kind} entity)")
                for key, value in ent.properties:
                    r = self.table.rowCount()
                    self.table.insertRow(r)
                    k = QTableWidgetItem(key)
                    k.setFlags(k.flags() & ~Qt.ItemFlag.ItemIsEditable)
                    self.table.setItem(r, 0, k)
                    self.table.setItem(r, 1, QTableWidgetItem(value))
                    self._keys.append(key)
        self.motion_editor.show_entity(None if self.entity_id is None else doc.scene[self.entity_id],
                                       doc.scene)
        enabled = self.entity_id is not None
        self.add_button.setEnabled(enabled)
        self.remove_button.setEnabled(enabled)

    def set_value(self, key: str, value: str | None) -> None:
        """Set (or with ``None`` delete) a key of the shown entity through a command."""
        if self.entity_id is None:
            return
        try:
            self.state.document.push(SetProperties([self.entity_id], {key: value},
                                                   text=f"Set {key}" if value is not None else f"Remove {key}"))
        except Exception as exc:
            self.state.status_message.emit(f"{key}: {exc}")
            self.refresh()

    def set_values(self, changes: dict) -> None:
        """Set or delete (``None``) several keys of the shown entity in one command."""
        if self.entity_id is None or not changes:
            return
        if len(changes) == 1:
            key, value = next(iter(changes.items()))
            self.set_value(key, value)
            return
        try:
            self.state.document.push(SetProperties([self.entity_id], changes, text="Clear motion keys"
                                                   if all(v is None for v in changes.values())
                                                   else "Set motion"))
        except Exception as exc:
            self.state.status_message.emit(f"motion: {exc}")
            self.refresh()

    def _on_item_changed(self, item) -> None:
        if item.column() == 1 and item.row() < len(self._keys):
            self.set_value(self._keys[item.row()], item.text())

    def _add_key(self) -> None:
        from PySide6.QtWidgets import QInputDialog
        key, ok = QInputDialog.getText(self, "Add key", "Key:")
        if ok and key.strip():
            self.set_value(key.strip(), "")

    def _remove_key(self) -> None:
        row = self.table.currentRow()
        if 0 <= row < len(self._keys) and self._keys[row] != "classname":
            self.set_value(self._keys[row], None)
