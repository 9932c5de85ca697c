"""The entity class palette: choosing a class arms the entity tool."""
from __future__ import annotations

from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import QLineEdit, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from editor.model.entity_classes import CLASS_SIZES

from ..colors import class_colour


def _swatch(rgb) -> QIcon:
    pm = QPixmap(12, 12)
    pm.fill(QColor.fromRgbF(*rgb))
    return QIcon(pm)


class PalettePanel(QWidget):
    def __init__(self, state, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.setObjectName("palette_panel")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter classes…")
        self.filter.textChanged.connect(self._apply_filter)
        layout.addWidget(self.filter)
        self.list = QListWidget()
        self.list.setObjectName("palette_list")
        for name in sorted(CLASS_SIZES):
            item = QListWidgetItem(_swatch(class_colour(name)), name)
            self.list.addItem(item)
        self.list.currentTextChanged.connect(self._on_chosen)
        layout.addWidget(self.list, 1)

    def _apply_filter(self, text: str) -> None:
        for i in range(self.list.count()):
            item = self.list.item(i)
            item.setHidden(text.lower() not in item.text().lower())

    def _on_chosen(self, name: str) -> None:
        if name:
            self.state.entity_class = name
            self.state.set_tool("entity")
