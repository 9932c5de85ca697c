"""A Qt-free undo stack with ``QUndoStack``'s rules.

* :meth:`UndoStack.push` runs the command's ``redo``; a command that changed nothing is dropped.
* A pushed command merges into the one on top when both carry the same ``merge_id``, except
  when the stack is at its clean (saved) state: a drag after a save is a new undo step. A merge
  that cancels out (dragged back to the start) removes the step.
* ``with stack.transaction("Paste"):`` collects the commands pushed inside into one step; if
  the block raises, they are undone in reverse order and the error propagates.
* Selection-only commands are undoable but do not make the document dirty: the stack is clean
  when every command between the clean index and the current index is selection-only.
* :attr:`UndoStack.changed` notifies listeners (``callback(stack)``) after every change of
  index, history or clean state, once per push, undo, redo, transaction or ``set_clean``.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .commands import Command, MacroCommand
from .events import Signal
from .scene import Scene


class UndoStack:
    """History of commands applied to one scene.

    Parameters
    ----------
    scene : Scene
        The document the commands edit.
    limit : int
        Keep at most this many steps (0: unlimited); the oldest are forgotten.
    """

    def __init__(self, scene: Scene, limit: int = 0) -> None:
        self.scene = scene
        self.limit = int(limit)
        self._commands: list[Command] = []
        self._index = 0
        self._clean_index: int | None = 0
        self._macros: list[MacroCommand] = []
        self.changed = Signal()

    # ------------------------------------------------------------------ state
    @property
    def index(self) -> int:
        """Number of commands currently applied (0 = nothing to undo)."""
        return self._index

    def __len__(self) -> int:
        return len(self._commands)

    @property
    def history(self) -> list[str]:
        """Text of every step, oldest first; steps ``< index`` are applied."""
        return [c.text for c in self._commands]

    def command(self, i: int) -> Command:
        return self._commands[i]

    @property
    def clean_index(self) -> int | None:
        """Index of the saved state, or ``None`` when it can no longer be reached."""
        return self._clean_index

    def is_clean(self) -> bool:
        """True when the document equals its saved state (selection aside)."""
        if self._clean_index is None:
            return False
        lo, hi = sorted((self._clean_index, self._index))
        return not any(c.modifies_document for c in self._commands[lo:hi])

    def unsaved_commands(self) -> list[Command] | None:
        """The commands that make the document differ from its saved state (applied since
        the save, or undone past it), selection-only ones left out; None when the saved
        state can no longer be reached."""
        if self._clean_index is None:
            return None
        lo, hi = sorted((self._clean_index, self._index))
        return [c for c in self._commands[lo:hi] if c.modifies_document]

    def set_clean(self) -> None:
        """Mark the current state as saved."""
        self._clean_index = self._index
        self._notify()

    def can_undo(self) -> bool:
        return self._index > 0 and not self._macros

    def can_redo(self) -> bool:
        return self._index < len(self._commands) and not self._macros

    def undo_text(self) -> str:
        return self._commands[self._index - 1].text if self._index > 0 else ""

    def redo_text(self) -> str:
        return self._commands[self._index].text if self._index < len(self._commands) else ""

    @property
    def in_transaction(self) -> bool:
        return bool(self._macros)

    # ------------------------------------------------------------------ editing
    def push(self, command: Command) -> bool:
        """Run ``command.redo`` and record it; returns False if it was dropped as a no-op.

        Errors from ``redo`` propagate and leave scene and history unchanged.
        """
        command.redo(self.scene)
        if self._macros:
            macro = self._macros[-1]
            if not command.is_obsolete:
                macro.children.append(command)
            return not command.is_obsolete
        if command.is_obsolete:
            return False
        del self._commands[self._index:]
        if self._clean_index is not None and self._clean_index > self._index:
            self._clean_index = None  # the saved state was in the discarded redo branch
        top = self._commands[-1] if self._commands else None
        if (top is not None and command.merge_id is not None and top.merge_id == command.merge_id
                and self._clean_index != self._index and top.merge_with(command)):
            if top.is_obsolete:  # the merged step undoes itself: drop it
                self._commands.pop()
                self._index -= 1
            self._notify()
            return True
        self._commands.append(command)
        self._index += 1
        self._trim()
        self._notify()
        return True

    def undo(self) -> None:
        """Undo the command below the index (nothing if there is none)."""
        if not self.can_undo():
            return
        self._commands[self._index - 1].undo(self.scene)
        self._index -= 1
        self._notify()

    def redo(self) -> None:
        """Redo the command at the index (nothing if there is none)."""
        if not self.can_redo():
            return
        self._commands[self._index].redo(self.scene)
        self._index += 1
        self._notify()

    def set_index(self, index: int) -> None:
        """Undo or redo until ``index`` commands are applied (the history panel's click)."""
        index = max(0, min(int(index), len(self._commands)))
        while self._index > index:
            self.undo()
        while self._index < index:
            self.redo()

    def clear(self) -> None:
        """Forget the history; the current state becomes the clean state."""
        self._commands.clear()
        self._index = 0
        self._clean_index = 0
        self._notify()

    @contextmanager
    def transaction(self, text: str) -> Iterator[MacroCommand]:
        """Group the commands pushed inside the block into one undo step named ``text``.

        Nested transactions join the outermost one. If the block raises, every command pushed
        inside it is undone (newest first) and the exception propagates.
        """
        macro = MacroCommand(text)
        self._macros.append(macro)
        try:
            yield macro
        except BaseException:
            self._macros.pop()
            for child in reversed(macro.children):
                child.undo(self.scene)
            raise
        self._macros.pop()
        if self._macros:
            if macro.children:
                self._macros[-1].children.append(macro)
            return
        if not macro.children or macro.is_obsolete:
            return
        del self._commands[self._index:]
        if self._clean_index is not None and self._clean_index > self._index:
            self._clean_index = None
        self._commands.append(macro)
        self._index += 1
        self._trim()
        self._notify()

    # ------------------------------------------------------------------ internals
    def _trim(self) -> None:
        if self.limit and len(self._commands) > self.limit:
            drop = len(self._commands) - self.limit
            del self._commands[:drop]
            self._index -= drop
            if self._clean_index is not None:
                self._clean_index = self._clean_index - drop if self._clean_index >= drop else None

    def _notify(self) -> None:
        self.changed.emit(self)
