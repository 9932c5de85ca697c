"""The controls of one side of compare mode: its backend and its parameters."""
from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QWidget

from editor.model.compare import SideSpec
from spatial.params import split_assignments
from spatial.registry import default_registry


class SideControls(QWidget):
    """A backend box and a ``K=V K=V`` parameter line for one side."""

    def __init__(self, name: str, backend: str, parent=None) -> None:
        super().__init__(parent)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel(f"{name}:"))
        self.backend = QComboBox()
        self.backend.setObjectName(f"compare_backend_{name.lower()}")
        for key in sorted(default_registry().backends):
            self.backend.addItem(key, key)
        self.backend.setCurrentIndex(max(self.backend.findData(backend), 0))
        row.addWidget(self.backend)
        self.params = QLineEdit()
        self.params.setObjectName(f"compare_params_{name.lower()}")
        self.params.setPlaceholderText("KEY=VALUE ...")
        row.addWidget(self.params, 1)

    def spec(self) -> SideSpec:
        """The side as chosen (a malformed assignment raises ParamError naming it)."""
        return SideSpec(self.backend.currentData(), split_assignments(self.params.text().split()))
