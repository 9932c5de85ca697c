"""The undo history: every step of the stack; clicking a row undoes or redoes up to it."""
from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QListWidget

from ..quiet import signals_blocked
from .base import StatePanel


class HistoryPanel(StatePanel):
    def __init__(self, state, parent=None) -> None:
        super().__init__(state, "history_panel", parent)
        self.list = self.add(QListWidget(), "history_list")
        self.list.currentRowChanged.connect(self._on_row)
        state.document_replaced.connect(self._on_document_replaced)

    def _on_document_replaced(self, document) -> None:
        document.stack_changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        stack = self.state.document.stack
        with signals_blocked(self.list):
            self.list.clear()
            self.list.addItem("<opened>")
            for text in stack.history:
                self.list.addItem(text)
            for i in range(self.list.count()):
                item = self.list.item(i)
                if i > stack.index:
                    item.setForeground(QColor(120, 120, 130))  # undone steps, still redoable
                if stack.clean_index == i:
                    item.setText(item.text() + "  (saved)")
            self.list.setCurrentRow(stack.index)

    def _on_row(self, row: int) -> None:
        if row >= 0:
            self.state.document.stack.set_index(row)
