"""The entity class palette: choosing a class arms the entity tool.

The list starts with the point-entity classes the open level already uses, most used first
and with their counts (a Doom map lists its monsters and items, a Quake map its own classes),
then every class the editor knows a size for. It follows the document: opening another level
or adding and removing entities refreshes the first part.
"""
from __future__ import annotations

from collections import Counter

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPixmap
from PySide6.QtWidgets import QLineEdit, QListWidget, QListWidgetItem

from editor.model import ChangeKind
from editor.model.entity_classes import CLASS_SIZES

from ..colors import class_colour
from ..quiet import signals_blocked
from .base import StatePanel, single_shot_timer

#: role of an item's class name (headings have none)
CLASS_ROLE = Qt.ItemDataRole.UserRole
#: a burst of placements (or an undo of many) refreshes the counts once
REFRESH_MS = 150


def _swatch(rgb) -> QIcon:
    pm = QPixmap(12, 12)
    pm.fill(QColor.fromRgbF(*rgb))
    return QIcon(pm)


def level_class_counts(scene) -> tuple[Counter, set[int]]:
    """How many point entities of each class ``scene`` holds, and their ids."""
    counts: Counter = Counter()
    ids = set(scene.point_entity_ids())
    for oid in ids:
        name = scene.get(oid).classname
        if name:
            counts[name] += 1
    return counts, ids


def _is_point_entity(obj) -> bool:
    return getattr(obj, "is_point", False)


class PalettePanel(StatePanel):
    def __init__(self, state, parent=None) -> None:
        super().__init__(state, "palette_panel", parent)
        self.filter = self.add(QLineEdit())
        self.filter.setPlaceholderText("Filter classes…")
        self.filter.textChanged.connect(self._apply_filter)
        self.list = self.add(QListWidget(), "palette_list", stretch=1)
        self.list.currentItemChanged.connect(self._on_chosen)
        self.level_counts: Counter = Counter()
        self._entity_ids: set[int] = set()  # the point entities counted last
        self._refresh_timer = single_shot_timer(self, REFRESH_MS, self._refresh_level_classes)
        state.document_replaced.connect(self._on_document_replaced)
        self._fill()

    # ------------------------------------------------------------------ contents
    def _on_document_replaced(self, document) -> None:
        document.scene_changed.connect(self._on_scene_changed)
        self._refresh_level_classes()

    def _on_scene_changed(self, ids, kind) -> None:
        if not kind & (ChangeKind.ADDED | ChangeKind.REMOVED | ChangeKind.PROPERTIES):
            return
        # brush edits on a big level are frequent and never change the classes: recount only
        # when a point entity came, went or was edited
        scene = self.state.document.scene
        if any(oid in self._entity_ids or _is_point_entity(scene.get(oid)) for oid in ids):
            self._refresh_timer.start()

    def _refresh_level_classes(self) -> None:
        doc = self.state.document
        counts, self._entity_ids = level_class_counts(doc.scene) if doc is not None \
            else (Counter(), set())
        if counts != self.level_counts:
            self.level_counts = counts
            self._fill()

    def _fill(self) -> None:
        chosen = self.state.entity_class
        with signals_blocked(self.list):
            self.list.clear()
            if self.level_counts:
                self._heading(f"In this level ({len(self.level_counts)} classes)")
                ranked = sorted(self.level_counts.items(), key=lambda kv: (-kv[1], kv[0]))
                for name, count in ranked:
                    self._class_item(name, f"{name}  ×{count}")
                self._heading("All classes with a known size")
            for name in sorted(CLASS_SIZES):
                self._class_item(name, name)
        self._apply_filter(self.filter.text())
        if self.state.tool == "entity":  # keep the armed class highlighted
            for row in range(self.list.count()):
                if self.list.item(row).data(CLASS_ROLE) == chosen:
                    with signals_blocked(self.list):
                        self.list.setCurrentRow(row)
                    break
        self.list.scrollToTop()  # the level's own classes, under their heading, first

    def _heading(self, text: str) -> None:
        item = QListWidgetItem(text)
        font = QFont(item.font())
        font.setBold(True)
        item.setFont(font)
        item.setFlags(Qt.ItemFlag.NoItemFlags)  # a heading cannot be chosen
        self.list.addItem(item)

    def _class_item(self, name: str, text: str) -> None:
        item = QListWidgetItem(_swatch(class_colour(name)), text)
        item.setData(CLASS_ROLE, name)
        self.list.addItem(item)

    # ------------------------------------------------------------------ choosing
    def class_names(self) -> list[str]:
        """Class names in list order (a class used in the level appears twice)."""
        return [self.list.item(r).data(CLASS_ROLE) for r in range(self.list.count())
                if self.list.item(r).data(CLASS_ROLE)]

    def _apply_filter(self, text: str) -> None:
        needle = text.lower()
        for i in range(self.list.count()):
            item = self.list.item(i)
            name = item.data(CLASS_ROLE)
            item.setHidden(bool(needle) and (name is None or needle not in name.lower()))

    def _on_chosen(self, item, previous=None) -> None:
        name = item.data(CLASS_ROLE) if item is not None else None
        if name:
            self.state.entity_class = name
            self.state.set_tool("entity")
