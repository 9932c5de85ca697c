"""Widgets following the model: set a value without echoing it back as a user change."""
from __future__ import annotations


def set_checked_quietly(widget, on: bool) -> None:
    """Check or uncheck ``widget`` (a check box or a checkable action) with its signals blocked,
    so a model change shown in the GUI is not pushed back to the model as a new change."""
    widget.blockSignals(True)
    widget.setChecked(on)
    widget.blockSignals(False)
