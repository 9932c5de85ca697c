"""The main window's status bar: the cursor, the selection, the tree, the frame time, and the
progress bar with its Cancel button.

A file read in the background and a rebuild of the index (with the first use of a backend,
whose kernels compile first) both show their progress here; Cancel stops either.
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QStatusBar

from .document import Document


class StatusLabels:
    """Where the cursor is, what is selected, how big the tree is, how long a frame took."""

    def __init__(self, status_bar: QStatusBar, state) -> None:
        self.state = state
        self.pos_label, self.sel_label, self.nodes_label, self.frame_label = (
            QLabel(""), QLabel(""), QLabel(""), QLabel(""))
        self.pos_label.setMinimumWidth(180)
        for w in (self.pos_label, self.sel_label, self.nodes_label, self.frame_label):
            status_bar.addPermanentWidget(w)
        self._cursor = None
        self._hover_timer = QTimer(status_bar)
        self._hover_timer.setInterval(16)  # hover work at most once a frame
        self._hover_timer.setSingleShot(True)
        self._hover_timer.timeout.connect(self._show_cursor)

    def follow_state(self) -> None:
        """Update on selection and overlay changes (connected after the views, which draw
        first)."""
        self.state.selection_changed.connect(lambda ids: self.update())
        self.state.overlay_changed.connect(lambda geom: self.update())

    def cursor_moved(self, point3) -> None:
        """A view's cursor is at ``point3`` (shown at most once a frame)."""
        self._cursor = point3
        if not self._hover_timer.isActive():
            self._hover_timer.start()

    def frame_time(self, ms: float) -> None:
        self.frame_label.setText(f"frame {ms:.1f} ms")

    def _show_cursor(self) -> None:
        if self._cursor is not None:
            self.pos_label.setText("x {:.0f}  y {:.0f}  z {:.0f}".format(*self._cursor))

    def update(self) -> None:
        """The selection and tree figures of the current document."""
        doc = self.state.document
        if doc is None:
            return
        n = len(doc.selection)
        self.sel_label.setText(f"{n} selected" if n else "nothing selected")
        geom = self.state.overlay
        if geom is not None:
            self.nodes_label.setText(f"{doc.index.name}: {geom.total} nodes ({geom.count} drawn)")


class ProgressStatus:
    """The progress bar and Cancel button of a status bar (``cancel`` runs on a click)."""

    def __init__(self, status_bar: QStatusBar, cancel: Callable[[], None]) -> None:
        self.status_bar = status_bar
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(200)
        self.progress.setRange(0, 100)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.hide()
        self.cancel_button.clicked.connect(cancel)
        status_bar.addPermanentWidget(self.progress)
        status_bar.addPermanentWidget(self.cancel_button)

    def show(self, text: str, busy: bool = False) -> None:
        """Show ``text`` with the bar (``busy``: an animation rather than steps) and Cancel."""
        self.progress.setRange(0, 0 if busy else 100)
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.show()
        self.status_bar.showMessage(text)

    def hide(self) -> None:
        if self.progress.isVisible():
            self.status_bar.clearMessage()  # the last progress text is over, not news
        self.progress.hide()
        self.cancel_button.hide()

    def follow(self, doc: Document) -> None:
        """Show ``doc``'s rebuilds: their progress, a first use's compile, the time taken."""
        doc.rebuild_started.connect(lambda: self._on_rebuild_started(doc))
        doc.preparing_status.connect(self._on_preparing_status)
        doc.preparing_progress.connect(self._on_preparing_progress)
        doc.rebuild_finished.connect(lambda ms: self.hide())
        doc.rebuild_failed.connect(lambda message: self.hide())
        doc.rebuild_finished.connect(lambda ms: self.status_bar.showMessage(
            f"{doc.index.name} rebuilt in {ms:.1f} ms", 3000))
        if doc.sync.fallback:
            self.status_bar.showMessage(doc.sync.fallback, 8000)

    def _on_rebuild_started(self, doc: Document) -> None:
        if doc.preparing_backend:
            # steps, not the busy animation: under a software OpenGL (llvmpipe) every frame
            # of that animation recomposes the whole window, half a core for the tens of
            # seconds a compile takes, taken from the compile and from the window itself
            self.show(f"Preparing the {doc.preparing_backend} — first use only "
                      "(compiling its kernels; the window stays usable)…")
            self.progress.setValue(5)
        elif doc.rebuilding:
            self.show("Rebuilding the tree…", busy=True)

    def _on_preparing_status(self, text: str) -> None:
        """A backend's kernels compile in this process after all: say so (beside the
        progress bar while its tree is on the way, else for a while)."""
        if self.progress.isVisible():
            self.status_bar.showMessage(text)
        else:
            self.status_bar.showMessage(text, 10000)

    def _on_preparing_progress(self, fraction: float) -> None:
        if self.progress.isVisible():
            self.progress.setValue(int(fraction * 100))
