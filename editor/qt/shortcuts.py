"""Shortcuts beyond the platform's standard keys."""
from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence

#: Redo's other common key: Windows programs and most level editors (TrenchBroom, Ultimate
#: Doom Builder) redo with Ctrl+Y, where the desktop standard on Linux is Ctrl+Shift+Z
REDO_ALSO = QKeySequence("Ctrl+Y")


def add_redo_shortcut(action: QAction) -> None:
    """Give the Redo action Ctrl+Y beside the platform's standard key(s)."""
    keys = list(action.shortcuts())
    if REDO_ALSO not in keys:
        action.setShortcuts([*keys, REDO_ALSO])
