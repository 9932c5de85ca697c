"""Tree diff on every edit: the nodes an edit or an undo step changed, shown and listed.

After each push, undo or redo of the editor's stack, :class:`TreeDiffTracker` compares the
index's node table with the one before the step (:func:`editor.model.compare.tree_diff.tree_diff`),
outlines the created (green), split (yellow), merged (cyan) and removed (red, dashed) nodes in
the 2D views for :data:`HIGHLIGHT_MS`, and appends the summary (``tree: 8 created, 1 split``)
to that step's entry in the undo history. Steps that leave the tree as it was (a selection)
add nothing.

A gesture that merges its steps into one history entry (each mouse move of a drag) is diffed
once, :data:`GESTURE_REST_MS` after it ends or just before an edit that is not its own next
step (the tree is diffed exactly before that edit changes it again): reading and
comparing the whole node table is work in the size of the level, and doing it for every mouse
move held each frame of a drag on a big level back by a tenth of a second.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, Qt, QTimer

from editor.model.compare.tree_diff import TreeDiff, tree_diff

from ..overlay import box_lines
from ..views.items2d import PathsItem, cosmetic_pen, segments_path

if TYPE_CHECKING:
    from spatial.contract import NodeTable, SpatialIndex

    from ..views.view2d import View2D

#: how long the changed nodes stay outlined
HIGHLIGHT_MS = 1500
#: how long after a merging gesture (a drag) ends its steps are diffed
GESTURE_REST_MS = 250
#: outline colour of each kind of change
KIND_COLOURS = {"created": (0.35, 0.95, 0.45), "split": (1.0, 0.85, 0.2),
                "merged": (0.3, 0.9, 1.0), "removed": (1.0, 0.3, 0.3)}


def _rect_segments(lo: np.ndarray, hi: np.ndarray, axes: tuple[int, int]) -> np.ndarray:
    """Outline segments of boxes projected on ``axes`` (from the 3D box edges)."""
    lines = box_lines(lo, hi)
    return lines[:, list(axes)]


class TreeDiffTracker(QObject):
    """See the module docstring. ``last`` is the latest step's :class:`TreeDiff`;
    ``entries`` maps a history row to its step's summary, ``undone`` to its undo's."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.last: TreeDiff | None = None
        self.entries: dict[int, str] = {}
        self.undone: dict[int, str] = {}
        self._table: NodeTable | None = None  # the node table of _index before the next step
        self._index: SpatialIndex | None = None
        self._position = 0
        self._items: list[tuple[View2D, PathsItem]] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.clear_highlight)
        #: history row of merging steps not diffed yet (None: none wait)
        self._pending: int | None = None
        self._rest = QTimer(self)
        self._rest.setSingleShot(True)
        self._rest.setInterval(GESTURE_REST_MS)
        self._rest.timeout.connect(self._on_rest)
        self._scene = None
        #: node tables read and compared so far (each costs the size of the tree)
        self.diffs = 0
        window.state.document_replaced.connect(self._on_document_replaced)
        if window.state.document is not None:
            self._on_document_replaced(window.state.document)

    def _on_document_replaced(self, document) -> None:
        self._rest.stop()
        self._pending = None
        if self._scene is not None:
            self._scene.will_change.disconnect(self._before_edit)
        # the steps of a gesture are diffed before the next edit changes the tree again
        self._scene = document.scene
        document.scene.will_change.connect(self._before_edit)
        self.entries, self.undone = {}, {}
        # the window read the new document's table for its overlay just now: on a big tree
        # (a 2,000,000-triangle mesh) reading it again cost seconds on the window's thread
        state = self.window.state
        fresh = state.node_table_index is document.index and state.node_table is not None
        self._snapshot(document, state.node_table if fresh else None)
        self._position = document.stack.index
        document.stack_changed.connect(self._on_stack_changed)

    def _snapshot(self, document, shown=None) -> None:
        """Keep the index's node table to diff the next step against (``shown``: the table
        the window has just read from this very index, taken instead of reading it again)."""
        self._index = document.index
        self._table = shown if shown is not None else document.index.nodes()

    def _on_stack_changed(self) -> None:
        document = self.window.state.document
        stack = document.stack
        before, self._position = self._position, stack.index
        if stack.index > before and len(stack.history) == stack.index:
            # a push drops the redo entries after it (their rows now name other steps)
            self.entries = {r: t for r, t in self.entries.items() if r < stack.index}
            self.undone = {r: t for r, t in self.undone.items() if r < stack.index}
        if document.index is not self._index:  # a backend switch: a new tree, not an edit's
            self._rest.stop()
            self._pending = None
            self._snapshot(document)
        elif self._mergeable_step(stack, before):
            # a step of a gesture merging into its history entry: diff the gesture once
            self._pending = stack.index
            self._rest.start()
            return
        else:
            self._diff(stack.index, forward=stack.index > before, undone_row=before)
        # the panel lists the stack afresh on every change: name the trees' changes again
        self._annotate_history()

    def _mergeable_step(self, stack, before: int) -> bool:
        """Whether the stack's last change pushed a step that later ones may merge into (a
        drag's first move) or merged one into the top entry (its next moves)."""
        if stack.index < before or stack.index != len(stack.history) or stack.index == 0:
            return False
        if stack.index > before + 1:
            return False
        return getattr(stack.command(stack.index - 1), "merge_id", None) is not None

    def _gesture_goes_on(self) -> bool:
        """Whether the gesture of the waiting steps is still on (a drag, its button down):
        its next edits merge into the same history entry."""
        tools = getattr(self.window, "tools", None)
        document = self.window.state.document
        row = self._pending
        if tools is None or document is None or row is None or row > len(document.stack):
            return False
        gesture = tools.merge_id()
        return gesture is not None and \
            getattr(document.stack.command(row - 1), "merge_id", None) == gesture

    def _on_rest(self) -> None:
        if self._gesture_goes_on():
            self._rest.start()
            return
        self.settle()

    def _before_edit(self, _ids) -> None:
        # the tree is about to change: the gesture's steps are diffed first, unless this
        # edit is the gesture's own next step (it merges into the same history entry)
        if self._pending is not None and not self._gesture_goes_on():
            self.settle()

    def settle(self) -> None:
        """Diff the steps of a gesture that wait (at rest, or before the next edit)."""
        self._rest.stop()
        row, self._pending = self._pending, None
        document = self.window.state.document
        if row is None or document is None:
            return
        if document.index is not self._index:  # the tree was replaced meanwhile, not edited
            self._snapshot(document)
            return
        self._diff(row, forward=True, undone_row=row)
        self._annotate_history()

    def _diff(self, row: int, forward: bool, undone_row: int) -> None:
        """Compare the tree with the snapshot: the step that made history row ``row`` (a push
        or redo when ``forward``), else the undo of row ``undone_row``."""
        # the index of the last snapshot (document.index is it), and its table
        assert self._index is not None and self._table is not None
        new = self._index.nodes()
        self.diffs += 1
        diff = tree_diff(self._table, new)
        old, self._table = self._table, new
        if not diff.empty:
            self.last = diff
            if forward:  # a push or a redo: the entry now applied
                self.entries[row] = diff.summary()
            else:  # an undo: the entry undone
                self.undone[undone_row] = diff.summary()
            self._highlight(diff, old, new)

    # ------------------------------------------------------------------ history entries
    def entry_text(self, row: int) -> str:
        """What the history entry of ``row`` adds: the step's tree diff, and its undo's."""
        parts = []
        if row in self.entries:
            parts.append(self.entries[row])
        if row in self.undone:
            parts.append(f"undo: {self.undone[row]}")
        return "  · " + "; ".join(parts) if parts else ""

    def _annotate_history(self) -> None:
        panel = getattr(self.window, "history_panel", None)
        if panel is None:
            return
        for row in set(self.entries) | set(self.undone):
            item = panel.list.item(row)
            extra = self.entry_text(row)
            if item is not None and not item.text().endswith(extra):
                item.setText(item.text() + extra)
                item.setToolTip(extra.strip(" ·"))

    # ------------------------------------------------------------------ highlight
    def _views(self) -> list[View2D]:
        views = list(getattr(self.window, "views2d", {}).values())
        compare = getattr(self.window, "compare_window", None)
        return views + (list(compare.views) if compare is not None else [])

    def _highlight(self, diff: TreeDiff, old, new) -> None:
        self.clear_highlight()
        boxes = {"created": (new.lo[diff.created], new.hi[diff.created]),
                 "split": (new.lo[diff.split], new.hi[diff.split]),
                 "merged": (new.lo[diff.merged], new.hi[diff.merged]),
                 "removed": (old.lo[diff.removed], old.hi[diff.removed])}
        for view in self._views():
            layers = []
            for kind, (lo, hi) in boxes.items():
                if len(lo):
                    style = Qt.PenStyle.DashLine if kind == "removed" else Qt.PenStyle.SolidLine
                    layers.append((segments_path(_rect_segments(lo, hi, view.axes)),
                                   cosmetic_pen(KIND_COLOURS[kind], 0.95, 2.2, style), None))
            item = PathsItem(z=9)
            item.set_layers(layers)
            view.vb.addItem(item, ignoreBounds=True)
            self._items.append((view, item))
        self._timer.start(HIGHLIGHT_MS)

    def highlighted(self) -> int:
        """How many views show a highlight now."""
        return len(self._items)

    def clear_highlight(self) -> None:
        for view, item in self._items:
            view.vb.removeItem(item)
        self._items = []
