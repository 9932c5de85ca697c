"""The entity class palette: choosing a class arms the entity tool."""
from __future__ import annotations

from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import QLineEdit, QListWidget, QListWidgetItem

from editor.model.entity_classes import CLASS_SIZES

from ..colors import class_colour
from .base import StatePanel


def _swatch(rgb) -> QIcon:
    pm = QPixmap(12, 12)
    pm.fill(QColor.fromRgbF(*rgb))
    return QIcon(pm)


class PalettePanel(StatePanel):
    def __init__(self, state, parent=None) -> None:
        super().__init__(state, "palette_panel", parent)
        self.filter = self.add(QLineEdit())
        self.filter.setPlaceholderText("Filter classes…")
        self.filter.textChanged.connect(self._apply_filter)
        self.list = self.add(QListWidget(), "palette_list", stretch=1)
        for name in sorted(CLASS_SIZES):
            item = QListWidgetItem(_swatch(class_colour(name)), name)
            self.list.addItem(item)
        self.list.currentTextChanged.connect(self._on_chosen)

    def _apply_filter(self, text: str) -> None:
        for i in range(self.list.count()):
            item = self.list.item(i)
            item.setHidden(text.lower() not in item.text().lower())

    def _on_chosen(self, name: str) -> None:
        if name:
            self.state.entity_class = name
            self.state.set_tool("entity")
