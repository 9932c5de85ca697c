"""The live link in the editor: File ▸ Connect to game…, ``--listen``, a status line, and
File ▸ Save game's boxes as level… (:mod:`.level_save`).

:func:`install_live_link` adds the action and the status line to a
:class:`~editor.qt.main_window.MainWindow` (after the timeline) and keeps the
:class:`~.link.LiveLink` as ``window.live_link``. The session logic is Qt-free
(:mod:`editor.model.live`); this package is the glue.
"""
from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog

from ..fitting_label import FittingLabel
from .level_save import save_live_level
from .link import LiveLink
from .receiver import parse_address

__all__ = ["install_live_link", "LiveLink", "parse_address", "DEFAULT_ADDRESS"]

DEFAULT_ADDRESS = "127.0.0.1:7878"


def install_live_link(window) -> LiveLink:
    """Create the live link of ``window``: the File menu actions and the status line."""
    link = LiveLink(window)
    window.live_link = link
    label = FittingLabel()
    label.setObjectName("live_link_status")
    label.hide()
    window.statusBar().addPermanentWidget(label)

    def show_status(text: str) -> None:
        label.set_forms(link.shown_status)
        label.setVisible(link.receiver is not None or link.session is not None)
        save_boxes.setEnabled(link.source is not None and link.source.last_record is not None)

    link.status_changed.connect(show_status)
    connect = QAction("Connect to &game…", window)
    connect.setObjectName("act_connect_game")
    connect.setStatusTip("Listen for a running game (clients/c/ps_link.h, clients/python/ps_link.py) "
                         "and show its frames live")
    connect.triggered.connect(lambda: connect_dialog(window))
    disconnect = QAction("&Disconnect from game", window)
    disconnect.setObjectName("act_disconnect_game")
    disconnect.triggered.connect(link.stop)
    go_live = QAction("Back to &live frame", window)
    go_live.setObjectName("act_go_live")
    go_live.setStatusTip("After scrubbing back: show the newest frame of the game and follow it")
    go_live.triggered.connect(link.go_live)
    save_boxes = QAction("Save game's &boxes as level…", window)
    save_boxes.setObjectName("act_save_live_level")
    save_boxes.setStatusTip("Write the game's static boxes and the movers of the frame on screen as a "
                            "level file (a named box brush each)")
    save_boxes.setEnabled(False)
    save_boxes.triggered.connect(lambda: save_live_level(window))
    window.act_connect_game, window.act_disconnect_game, window.act_go_live = connect, disconnect, go_live
    window.act_save_live_level = save_boxes
    file_menu = _file_menu(window)
    if file_menu is not None:
        before = next((a for a in file_menu.actions() if a.isSeparator()), None)
        file_menu.insertActions(before, [connect, disconnect, go_live, save_boxes])
    return link


def ask_address(window, default: str) -> str | None:
    """The ``[HOST:]PORT`` to listen on, asked in a dialog (tests replace this)."""
    text, ok = QInputDialog.getText(window, "Connect to game",
                                    "Listen for a game on [HOST:]PORT (127.0.0.1 unless a host is named):",
                                    text=default)
    return text if ok else None


def connect_dialog(window) -> bool:
    """File ▸ Connect to game…: ask for the address and listen there."""
    text = window.live_link_ask(window, window.live_link.address or DEFAULT_ADDRESS) \
        if hasattr(window, "live_link_ask") else ask_address(window, DEFAULT_ADDRESS)
    if not text:
        return False
    return listen_at(window, text)


def listen_at(window, text: str) -> bool:
    """Listen on ``[HOST:]PORT`` (``--listen``); a bad address or a port in use is one line."""
    try:
        host, port = parse_address(text)
    except ValueError as exc:
        window.report_error(f"--listen: {exc}")
        return False
    return window.live_link.listen(host, port)


def _file_menu(window):
    for top in window.menuBar().actions():
        if top.text().replace("&", "") == "File" and top.menu() is not None:
            return top.menu()
    return None
