"""Every question and message box the main window shows, in one small object.

The window asks through :class:`Prompts` only (``window.prompts``), so a scripted run or a
test replaces this one object instead of answering modal dialogs from timers.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QMessageBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
)

APP_TITLE = "Partition Studio"


def file_filters(types: list[tuple[str, tuple[str, ...]]]) -> list[str]:
    """Qt name filters (``"All levels (*.json *.map)"``) for ``(description, patterns)`` pairs."""
    return [f"{text} ({' '.join(patterns)})" for text, patterns in types]


class Prompts:
    """Dialogs of the main window: errors, questions, file names and a level picker.

    Parameters
    ----------
    parent : QWidget
        The window the dialogs belong to.
    """

    def __init__(self, parent) -> None:
        self.parent = parent
        self.error_box: QMessageBox | None = None

    def show_error(self, message: str) -> QMessageBox:
        """Show ``message`` (one line naming the file and position) without blocking."""
        box = QMessageBox(QMessageBox.Icon.Warning, APP_TITLE, message, QMessageBox.StandardButton.Ok, self.parent)
        box.setObjectName("error_box")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setModal(False)
        box.show()
        self.error_box = box
        return box

    def ask_save(self, name: str) -> str:
        """``"save"``, ``"discard"`` or ``"cancel"`` for unsaved changes to ``name``."""
        button = QMessageBox.StandardButton
        box = QMessageBox(QMessageBox.Icon.Question, APP_TITLE, f"Save changes to {name} before closing?",
                          button.Save | button.Discard | button.Cancel, self.parent)
        answer = button(box.exec())
        return {button.Save: "save", button.Discard: "discard"}.get(answer, "cancel")

    def ask_reload(self, name: str) -> bool:
        """True to reload ``name`` from disk and lose the unsaved changes."""
        answer = QMessageBox.question(
            self.parent, APP_TITLE, f"{name} changed on disk. Reload it and lose your unsaved "
            "changes?", QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def open_path(self, start: str, filters: list[str]) -> str | None:
        """A file name to open; a typed ``FILE.wad:MAP`` is accepted as it is."""
        dialog = QFileDialog(self.parent, "Open level", start)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
        dialog.setFileMode(QFileDialog.FileMode.AnyFile)  # "doom.wad:E1M2" names no file of its own
        dialog.setNameFilters(filters)
        if dialog.exec() != QDialog.DialogCode.Accepted or not dialog.selectedFiles():
            return None
        return dialog.selectedFiles()[0]

    def save_path(self, start: str, filters: list[str]) -> tuple[str, str] | None:
        """``(file name, chosen filter)`` to save to, or None."""
        path, chosen = QFileDialog.getSaveFileName(self.parent, "Save level", start, ";;".join(filters))
        return (path, chosen) if path else None

    def choose_part(self, file: str, parts: list[dict]) -> str | None:
        """The name of the level to open from a file holding several (None: cancelled)."""
        dialog = LevelPicker(file, parts, self.parent)
        return dialog.chosen() if dialog.exec() == QDialog.DialogCode.Accepted else None


class LevelPicker(QDialog):
    """Lists the levels of a file (a WAD's maps with their linedef and thing counts)."""

    def __init__(self, file: str, parts: list[dict], parent=None) -> None:
        super().__init__(parent)
        self.setObjectName("level_picker")
        self.setWindowTitle("Choose a level")
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"{file} holds {len(parts)} levels:"))
        columns = ["name"] + [k for k in (parts[0] if parts else {}) if k != "name"]
        self.tree = QTreeWidget()
        self.tree.setObjectName("level_list")
        self.tree.setRootIsDecorated(False)
        self.tree.setHeaderLabels([c.capitalize() for c in columns])
        items = []
        for part in parts:
            item = QTreeWidgetItem(["" if part.get(c) is None else str(part.get(c)) for c in columns])
            item.setData(0, Qt.ItemDataRole.UserRole, part["name"])
            self.tree.addTopLevelItem(item)
            items.append(item)
        if items:
            self.tree.setCurrentItem(items[0])
        self.tree.itemDoubleClicked.connect(lambda *a: self.accept())
        layout.addWidget(self.tree)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(420, 360)

    def chosen(self) -> str | None:
        item = self.tree.currentItem()
        return None if item is None else item.data(0, Qt.ItemDataRole.UserRole)


class UnattendedPrompts(Prompts):
    """Answers without asking, for runs nobody watches (``--screenshot``): the first level of
    a file holding several, unsaved changes discarded, no reload over them."""

    def ask_save(self, name: str) -> str:
        return "discard"

    def ask_reload(self, name: str) -> bool:
        return False

    def choose_part(self, file: str, parts: list[dict]) -> str | None:
        return parts[0]["name"] if parts else None
