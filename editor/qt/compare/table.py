"""The table of compare mode: each figure of A, of B and B / A.

The rows are :func:`editor.model.compare.report.comparison_rows` of the same report dictionary
the ``compare`` command prints, so the table and the command line cannot disagree.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from editor.model.compare.report import comparison_rows

HEADERS = ("figure", "A", "B", "B / A")


def cell_text(value) -> str:
    """How a number reads in the table (and how a test reads it back: :func:`cell_value`)."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1e3 else f"{value:.4g}"
    return f"{value:,}"


class CompareTable(QTableWidget):
    """A, B and their ratio, one row per figure; each row's key is its ``Qt.ItemDataRole.UserRole`` data."""

    def __init__(self, parent=None) -> None:
        super().__init__(0, len(HEADERS), parent)
        self.setObjectName("compare_table")
        self.setHorizontalHeaderLabels(HEADERS)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.setMinimumWidth(360)
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.report: dict | None = None

    def show_report(self, report: dict) -> None:
        """Fill the table from a comparison report dictionary."""
        self.report = report
        rows = comparison_rows(report)
        self.setRowCount(len(rows))
        for r, (key, label, a, b, ratio) in enumerate(rows):
            name = QTableWidgetItem(label)
            name.setData(Qt.ItemDataRole.UserRole, key)
            self.setItem(r, 0, name)
            for c, value in enumerate((a, b, ratio), start=1):
                item = QTableWidgetItem(cell_text(value))
                item.setData(Qt.ItemDataRole.UserRole, value)
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(r, c, item)
        self.resizeColumnsToContents()
        # every row stays in sight: the splitter gives the views what the table does not need
        self.setMinimumHeight(self.horizontalHeader().height() + 2 * self.frameWidth()
                              + sum(self.rowHeight(r) for r in range(self.rowCount())) + 2)

    def values(self) -> dict[str, tuple]:
        """``key -> (A, B, ratio)`` as shown (read back from the cells)."""
        out = {}
        for r in range(self.rowCount()):
            out[self._cell(r, 0)] = tuple(self._cell(r, c) for c in (1, 2, 3))
        return out

    def _cell(self, row: int, column: int):
        """The value of a cell (its ``Qt.ItemDataRole.UserRole`` data)."""
        item = self.item(row, column)
        assert item is not None  # show_report fills every cell of every row it makes
        return item.data(Qt.ItemDataRole.UserRole)
