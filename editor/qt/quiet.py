"""Widgets following the model: set a value without echoing it back as a user change."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractButton


@contextmanager
def signals_blocked(*objects: QObject) -> Iterator[None]:
    """Block the signals of ``objects`` for the ``with`` body, then restore each one's previous
    state, also when the body raises: a bare ``blockSignals(True)``/``blockSignals(False)`` pair
    leaves the widget deaf after an exception, and would unblock a widget an outer caller blocked.
    """
    previous = [obj.blockSignals(True) for obj in objects]
    try:
        yield
    finally:
        for obj, was_blocked in zip(objects, previous):
            obj.blockSignals(was_blocked)


def set_checked_quietly(widget: QAbstractButton | QAction, on: bool) -> None:
    """Check or uncheck ``widget`` (a check box or a checkable action) with its signals blocked,
    so a model change shown in the GUI is not pushed back to the model as a new change."""
    with signals_blocked(widget):
        widget.setChecked(on)
