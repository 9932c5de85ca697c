"""Plain-Python change notification: callbacks, no Qt.

The scene emits one :attr:`Scene.will_change` and one :attr:`Scene.did_change` per applied edit
(a command, or one step of undo/redo), naming every touched id and the kinds of change. A GUI
wraps these in its own signals; the spatial index follows them incrementally.
"""
from __future__ import annotations

import enum
import sys
from collections.abc import Callable


class ChangeKind(enum.Flag):
    """What an edit changed (several flags may be set by one edit)."""

    NONE = 0
    ADDED = enum.auto()        #: objects appeared
    REMOVED = enum.auto()      #: objects disappeared
    GEOMETRY = enum.auto()     #: brush faces or entity placement (bounds may have moved)
    PROPERTIES = enum.auto()   #: entity key/values or brush ownership
    SELECTION = enum.auto()    #: the selection (never makes the document dirty)
    SETTINGS = enum.auto()     #: document settings: chosen backend and parameters, metadata

    @property
    def modifies_document(self) -> bool:
        """True unless only the selection changed."""
        return bool(self & ~ChangeKind.SELECTION)


class Signal:
    """A list of callbacks called in connection order.

    A callback that raises does not stop the others. With ``on_error`` given, each error is
    handed to it and :meth:`emit` returns normally (what the scene does after an edit, so a
    broken view can neither undo half an edit nor lose it from the history); without it the
    first error is re-raised once every callback has run.
    """

    def __init__(self, on_error: Callable[[BaseException], None] | None = None) -> None:
        self._slots: list[Callable] = []
        self.on_error = on_error

    def connect(self, callback: Callable) -> Callable:
        """Register ``callback``; returns it so this works as a decorator."""
        if callback not in self._slots:
            self._slots.append(callback)
        return callback

    def disconnect(self, callback: Callable) -> None:
        self._slots.remove(callback)

    def __len__(self) -> int:
        return len(self._slots)

    def emit(self, *args) -> None:
        error: BaseException | None = None
        for callback in list(self._slots):
            try:
                callback(*args)
            except Exception as exc:  # keep notifying the others, report afterwards
                if self.on_error is not None:
                    self.on_error(exc)
                else:
                    error = error or exc
        if error is not None:
            raise error


def report_listener_error(exc: BaseException) -> None:
    """Default handler for a callback that failed after an edit: the process's excepthook
    (a GUI installs one that shows a dialog; a console prints the traceback)."""
    sys.excepthook(type(exc), exc, exc.__traceback__)
