"""Unsaved changes that are only a backend or parameter choice.

Choosing a backend or tuning its parameters is a document setting (a ``.map`` stores it as
``_ps_`` worldspawn keys on the next save), so it is undoable and marks the document modified.
But it is not level editing: when another editor (TrenchBroom, Ultimate Doom Builder) saves the
file, such a choice alone must not bring the "lose your changes?" question. The editor then
reloads the file and applies the choice again on top of it (:func:`settings_only`,
:func:`choice_to_reapply`).
"""
from __future__ import annotations

from .commands import MacroCommand, SetSettings
from .scene import Settings
from .undo import UndoStack


def _settings_only(command) -> bool:
    if isinstance(command, MacroCommand):
        return all(_settings_only(c) for c in command.children if c.modifies_document)
    return isinstance(command, SetSettings) and command.metadata is None


def settings_only(stack: UndoStack) -> bool:
    """True when every unsaved change is a backend or parameter choice (or there is none)."""
    unsaved = stack.unsaved_commands()
    return unsaved is not None and all(_settings_only(c) for c in unsaved)


def choice_to_reapply(before: Settings, reloaded: Settings) -> tuple[str, dict] | None:
    """The backend and parameters to apply again after a reload, or None when the reloaded
    file already holds them."""
    if before.backend == reloaded.backend and dict(before.params) == dict(reloaded.params):
        return None
    return before.backend, dict(before.params)
