"""The Problems dock: what the open level holds that the editor cannot use, one row each.

Today that is every brush bounding no solid (flat, open, too few faces, empty), kept exactly
as written in the document (:mod:`editor.model.invalid_brushes`) and written back by every save
that can hold it: the row names its file, line and column and the reason, so the user can fix
it in the tool that made it. The dock's title counts the rows.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QListWidget

from editor.model.invalid_brushes import describe, invalid_brushes

from .base import StatePanel


class ProblemsPanel(StatePanel):
    """A list of the document's problems, refreshed when the document or its settings change."""

    def __init__(self, state, parent=None) -> None:
        super().__init__(state, "problems_panel", parent)
        self.summary = self.add(QLabel(), "problems_summary")
        self.summary.setWordWrap(True)
        self.list = self.add(QListWidget(), "problems_list", stretch=1)
        self.dock = None  # the dock whose title counts the rows (install_problems)
        state.document_replaced.connect(self._on_document_replaced)

    def _on_document_replaced(self, document) -> None:
        # the records live in the settings: an undone or redone settings edit may change them
        document.stack_changed.connect(self.refresh)
        self.refresh()

    def rows(self) -> list[str]:
        """The lines the list shows."""
        document = self.state.document
        return [] if document is None else [describe(r) for r in invalid_brushes(document.scene)]

    def refresh(self) -> None:
        rows = self.rows()
        if [self.list.item(i).text() for i in range(self.list.count())] != rows:
            self.list.clear()
            self.list.addItems(rows)
        self.summary.setText(
            f"{len(rows)} brush(es) bound no solid: kept as written and saved back unchanged, "
            "not indexed or drawn as solids." if rows else "No problems.")
        if self.dock is not None:
            self.dock.setWindowTitle(f"Problems ({len(rows)})" if rows else "Problems")


def install_problems(window) -> ProblemsPanel:
    """Dock the Problems panel beside the undo history and show it when a level has any."""
    panel = ProblemsPanel(window.state)
    dock = window._dock("Problems", panel, Qt.DockWidgetArea.LeftDockWidgetArea, "dock_problems")
    window.tabifyDockWidget(window.docks["history"], dock)
    window.docks["problems"] = dock
    panel.dock = dock
    window.problems_panel = panel

    def show_when_needed(_document) -> None:
        if panel.rows():
            dock.raise_()

    window.state.document_replaced.connect(show_when_needed)
    from ..views.invalid_brush_layer import install_invalid_brush_marks

    window.invalid_brush_marks = install_invalid_brush_marks(window)  # drawn apart, in red
    return panel
