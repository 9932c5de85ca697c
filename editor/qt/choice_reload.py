"""Reloading a file changed by another editor while the only unsaved change is a backend or
parameter choice (:mod:`editor.model.settings_changes`): no question, the choice applied again."""
from __future__ import annotations

from editor.model.settings_changes import choice_to_reapply, settings_only


def unsaved_choice(doc):
    """The document's settings when its only unsaved changes are a backend or parameter
    choice, else None (a clean document has nothing to keep either)."""
    if doc is None or not doc.is_dirty() or not settings_only(doc.stack):
        return None
    return doc.scene.settings


def reapply_choice(doc, before) -> str | None:
    """Apply the choice ``before`` again to the reloaded ``doc``, as one undoable step that
    keeps the document modified (the file does not hold the choice yet); returns the status
    line that says so, or None when the file holds that choice already."""
    choice = choice_to_reapply(before, doc.scene.settings)
    if choice is None:
        return None
    backend, params = choice
    doc.push(doc.settings_command(backend=backend, params=params,
                                  text=f"Use {backend} backend (kept across a reload)"))
    return (f"Reloaded {doc.path} and applied your {backend} backend and parameters again "
            "(Save stores them in the file)")
