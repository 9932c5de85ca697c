"""The Plugins dialog: every plugin the registry knows, what it provides, and why one failed.

The list comes from :meth:`spatial.registry.Registry.describe` — built-in plugins, user plugin
folders and entry points alike. A plugin that failed to import or register is shown in red with
its error (the application carried on without it). **Add plugin folder…** loads a folder's
plugins (:func:`spatial.registry.add_plugin_dir`, so a registry made later loads it too) and
emits :attr:`PluginsDialog.plugins_changed`, on which the window refreshes its backend chooser.
**Open user folder** shows the per-user plugin folder in the file manager.
"""
from __future__ import annotations

import os

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QBrush, QColor, QDesktopServices
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
)

from ..panels.base import push_button

FAILED_COLOUR = QColor("#ff6b6b")
COLUMNS = ["plugin", "source", "status", "provides"]


def _source_text(source: str) -> str:
    kind, _, where = source.partition(":")
    return {"builtin": "built-in", "folder": "folder", "entry-point": "entry point"}.get(kind, kind) + \
        (f" ({where})" if where and kind != "folder" else "")


class PluginsDialog(QDialog):
    """List the registry's plugins; add a plugin folder.

    Parameters
    ----------
    parent : QWidget, optional
    registry : spatial.registry.Registry, optional
        Default: the process-wide registry. Folders added to another registry load into it alone.
    """

    plugins_changed = Signal()

    def __init__(self, parent=None, registry=None) -> None:
        super().__init__(parent)
        from spatial.registry import default_registry
        self.registry = registry or default_registry()
        self.setObjectName("plugins_dialog")
        self.setWindowTitle("Plugins")
        layout = QVBoxLayout(self)
        self.summary = QLabel()
        self.summary.setObjectName("plugins_summary")
        layout.addWidget(self.summary)
        split = QSplitter(Qt.Orientation.Vertical)
        self.tree = QTreeWidget()
        self.tree.setObjectName("plugins_tree")
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setWordWrap(True)
        header = self.tree.header()
        for c in range(3):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.tree.currentItemChanged.connect(self._on_current)
        split.addWidget(self.tree)
        self.details = QPlainTextEdit()
        self.details.setObjectName("plugins_details")
        self.details.setReadOnly(True)
        self.details.setPlaceholderText("Select a plugin to see what it provides or why it failed.")
        split.addWidget(self.details)
        split.setSizes([420, 140])
        layout.addWidget(split, 1)
        buttons = QHBoxLayout()
        self.add_button = push_button("Add plugin folder…", self.add_folder_dialog,
                                      "Load every *.py file and package of a folder as plugins",
                                      "plugins_add_folder")
        self.open_button = push_button("Open user folder", self.open_user_folder,
                                       "Show the per-user plugin folder, loaded at every start")
        close = push_button("Close", self.accept)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.open_button)
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout.addLayout(buttons)
        self.refresh()
        self.resize(900, 600)

    # ------------------------------------------------------------------ listing
    def description(self) -> dict:
        return self.registry.describe()

    def refresh(self) -> None:
        """Rebuild the list from the registry."""
        described = self.description()
        self.tree.clear()
        failed = 0
        for plugin in described["plugins"]:
            error = plugin["error"]
            status = "failed" if error else ("loaded" if plugin["loaded"] else "not loaded")
            provides = error if error else (", ".join(plugin["provides"]) or "nothing")
            item = QTreeWidgetItem([plugin["name"], _source_text(plugin["source"]), status, provides])
            item.setData(0, Qt.ItemDataRole.UserRole, plugin)
            tip = f"{plugin['name']}\n{plugin['source']}\n" + (f"Error: {error}" if error else
                                                                 "\n".join(plugin["provides"]))
            for c in range(len(COLUMNS)):
                item.setToolTip(c, tip)
            if error:
                failed += 1
                for c in range(len(COLUMNS)):
                    item.setForeground(c, QBrush(FAILED_COLOUR))
            self.tree.addTopLevelItem(item)
        n = len(described["plugins"])
        self.summary.setText(
            f"{n} plugins: {len(described['backends'])} backends "
            f"({', '.join(described['backends'])}), {len(described['importers'])} importers, "
            f"{len(described['exporters'])} exporters, {len(described['motions'])} motions"
            + (f" — {failed} failed to load" if failed else ""))
        self.summary.setWordWrap(True)

    def rows(self) -> list[dict]:
        """The plugin records shown, in order (tests and callers read them)."""
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [item.data(0, Qt.ItemDataRole.UserRole) for item in items if item is not None]

    def _on_current(self, item, _previous=None) -> None:
        if item is None:
            self.details.clear()
            return
        plugin = item.data(0, Qt.ItemDataRole.UserRole)
        lines = [plugin["name"], f"source: {plugin['source']}"]
        if plugin["error"]:
            lines += ["status: failed", "", plugin["error"]]
        else:
            lines += ["status: loaded" if plugin["loaded"] else "status: not loaded", "", "provides:"]
            lines += [f"  {p}" for p in plugin["provides"]] or ["  nothing"]
            described = self.description()
            for p in plugin["provides"]:
                kind, _, name = p.partition(":")
                if kind == "backend" and name in described["backends"]:
                    lines.append(f"    {described['backends'][name]['description']}")
        self.details.setPlainText("\n".join(lines))

    # ------------------------------------------------------------------ folders
    def add_folder(self, path: str) -> None:
        """Load the plugins of ``path`` and refresh the list (and, via the signal, the window)."""
        from spatial.registry import _DEFAULT, add_plugin_dir
        if self.registry is _DEFAULT:
            add_plugin_dir(path)
        else:
            self.registry.load_folder(path)
        self.refresh()
        self.plugins_changed.emit()

    def add_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Add plugin folder")
        if path:
            self.add_folder(path)

    def open_user_folder(self) -> None:
        from spatial.registry import default_user_plugin_dir
        folder = default_user_plugin_dir()
        os.makedirs(folder, exist_ok=True)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))
