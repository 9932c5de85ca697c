"""Dialogs of the editor window: parameter tuning and the plugin list.

:func:`install_dialogs` adds their menu actions (Tools → Tune parameters…, Help → Plugins…) to
a :class:`~editor.qt.main_window.MainWindow`; the window calls it once after building its menus.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction

from ..quiet import signals_blocked


def _menu(window, title: str):
    """The window's menu whose text (without '&') is ``title``, created if missing."""
    for action in window.menuBar().actions():
        menu = action.menu()
        if menu is not None and action.text().replace("&", "") == title:
            return menu
    return window.menuBar().addMenu(f"&{title}")


def reload_backend_chooser(panel) -> None:
    """Refill a parameter panel's backend combo from its registry (after plugins changed)."""
    combo = panel.backend_combo
    with signals_blocked(combo):
        combo.clear()
        for name in sorted(panel.registry.backends):
            combo.addItem(name, name)
            combo.setItemData(combo.count() - 1, getattr(panel.registry.backends[name], "description", ""),
                              Qt.ItemDataRole.ToolTipRole)
    if panel.state.document is not None:
        panel._sync_from_model()


def _alive(widget) -> bool:
    from shiboken6 import isValid
    return isValid(widget)


def open_tune_dialog(window):
    """Show the Tune dialog for the window's document (modeless); returns it (None: no document)."""
    from .tune_dialog import TuneDialog
    if window.document is None:
        return None
    current = getattr(window, "tune_dialog", None)
    if current is not None and _alive(current) and current.isVisible() and current.document is window.document:
        current.raise_()
        current.activateWindow()
        return current
    dialog = TuneDialog(window.document, window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    # results of one document must not be applied to the next: a new document closes it
    window.state.document_replaced.connect(dialog.reject)
    window.tune_dialog = dialog
    dialog.show()
    return dialog


def open_plugins_dialog(window, registry=None):
    """Show the Plugins dialog; a folder added there refreshes the window's backend chooser."""
    from .plugins_dialog import PluginsDialog
    dialog = PluginsDialog(window, registry=registry)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.plugins_changed.connect(lambda: reload_backend_chooser(window.params_panel))
    window.plugins_dialog = dialog
    dialog.show()
    return dialog


def install_dialogs(window) -> None:
    """Add Tools → Tune parameters… and Help → Plugins… to ``window``'s menus."""
    window.act_tune = QAction("&Tune parameters…", window)
    window.act_tune.setShortcut("Ctrl+T")
    window.act_tune.setStatusTip("Search the backend's parameters for the lowest per-frame cost")
    window.act_tune.triggered.connect(lambda: open_tune_dialog(window))
    tools = _menu(window, "Tools")
    tools.addSeparator()
    tools.addAction(window.act_tune)
    window.act_plugins = QAction("&Plugins…", window)
    window.act_plugins.setStatusTip("Every plugin, what it provides, and why a plugin failed")
    window.act_plugins.triggered.connect(lambda: open_plugins_dialog(window))
    _menu(window, "Help").addAction(window.act_plugins)
