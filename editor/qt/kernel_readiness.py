"""The editor's tools wait, disabled, until the kernels they call are loaded off the window's
thread.

A kernel's first call in a process either compiles it (seconds to a minute on a fresh install:
numba's compiler holds the interpreter, so even a worker thread's compile freezes the window)
or loads it from numba's disk cache (tens of milliseconds each, dozens of kernels). Either way
the first click, nudge or Play would pay it on the window's thread. :class:`KernelReadiness`
moves that to a worker thread, one *family* at a time (:data:`editor.warmup.FAMILIES`):

* ``edit``: moves, new and deleted objects, undo and redo;
* ``pick``: the query tools (ray, frustum, inspect), which show the index's own visits;
* ``simulate``: Play and Step.

The Select tool waits for none of them: until ``pick`` is loaded a click picks from the
index's object table in numpy (:mod:`editor.model.picking`, the same answer), so a level can
be clicked as soon as it is on screen; moving the selection waits for ``edit``.

On a first start the warm-up process (``python -m editor.warmup``) compiles each family into
the disk cache and prints a line when it has; the worker waits for that line (without the
interpreter lock), then loads the family into this process on a small index of its own
(:class:`editor.warmup.FamilyLoader`) and enables its tools. On a warm start there is no
process and the worker loads the families straight away. Until a family is ready its actions
are disabled, the views ignore the gestures that need it, and a label in the status bar shows
which families are ready. If the warm-up process dies, the worker compiles the family itself
(the window may pause then, and the status bar says so).
"""
from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QLabel

from editor.warmup import FAMILIES, FamilyLoader

#: family -> how the status bar names it
LABELS = {"pick": "picking", "edit": "editing", "simulate": "simulation"}
#: how long the worker waits for the warm-up process to cache one family, in seconds
FAMILY_TIMEOUT_S = 900.0


def _family_actions(window) -> dict[str, list]:
    """The actions and buttons each family enables (those the window has)."""
    tools = getattr(window, "tool_actions", {})
    found = {
        "pick": [tools.get(name) for name in ("ray", "frustum", "inspect", "entity")],
        "edit": [tools.get(name) for name in ("brush", "entity")]
        + [getattr(window, name, None) for name in ("act_undo", "act_redo", "act_delete",
                                                      "act_duplicate")],
        "simulate": [getattr(window, name, None) for name in ("act_play", "act_step")]
        + [getattr(getattr(window, "timeline_panel", None), "play_button", None)],
    }
    return {family: [a for a in items if a is not None] for family, items in found.items()}


class KernelReadiness(QObject):
    """Prepares the kernel families of ``backend`` on a worker thread and keeps the tools
    that need them disabled until then (see the module docstring).

    Parameters
    ----------
    window : MainWindow
        The editor window whose tools, actions and status bar this governs.
    backend : str
        The backend whose kernels the tools call (the one a level opens on).
    warmup : editor.warmup.KernelWarmup, optional
        The warm-up process compiling those kernels on a first start; ``None`` on a warm
        start (the kernels are loaded from the disk cache).
    """

    #: a family's kernels are loaded into this process (emitted on the window's thread)
    family_ready = Signal(str)
    #: every family is ready
    all_ready = Signal()
    _loaded = Signal(str)
    _note = Signal(str)

    def __init__(self, window, backend: str, warmup=None) -> None:
        super().__init__(window)
        self.window = window
        self.backend = backend
        self.warmup = warmup
        self.pending: list[str] = list(FAMILIES)
        self.fell_back = False
        self._loaded_here: set[str] = set()  # families the start's worker has loaded
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.label = QLabel()
        self.label.setObjectName("kernel_readiness")
        window.statusBar().addPermanentWidget(self.label)
        self._loaded.connect(self._on_loaded)
        self._note.connect(lambda text: window.statusBar().showMessage(text, 10000))
        window.tools.waiting = set(self.pending)
        window.state.document_replaced.connect(self._on_document)
        self._switch_timer = QTimer(self)
        self._switch_timer.setInterval(100)
        self._switch_timer.timeout.connect(self._check_switch)
        if window.document is not None:
            window.document.rebuild_finished.connect(lambda ms: self._check_switch())
        self._apply()

    # ------------------------------------------------------------------ GUI thread
    def start(self) -> None:
        """Start the worker thread."""
        self._thread = threading.Thread(target=self._run, name="kernel-readiness", daemon=True)
        self._thread.start()

    def ready(self, family: str) -> bool:
        """Whether ``family``'s kernels are loaded (its tools enabled)."""
        return family not in self.pending

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop after the family being loaded (the editor closes); returns whether the worker
        has ended within ``timeout`` seconds."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def _apply(self) -> None:
        """Disable every action of a family still pending (again after a level is adopted,
        which re-enables some) and show the progress label."""
        for family, actions in _family_actions(self.window).items():
            if family in self.pending:
                for action in actions:
                    action.setEnabled(False)
        if not self.pending:
            self.label.hide()
            return
        marks = [f"{LABELS[f]} {'…' if f in self.pending else '✓'}" for f in FAMILIES]
        self.label.setText("Preparing tools: " + ", ".join(marks))
        self.label.setToolTip("The kernels these tools call are loaded (on a first start: "
                              "compiled) off the window's thread; each tool is enabled once "
                              "its kernels are ready.")
        self.label.show()

    def _on_document(self, doc) -> None:
        self._apply()
        if doc is not None:
            doc.rebuild_finished.connect(lambda ms: self._check_switch())

    def _check_switch(self) -> None:
        """After a rebuild: while a first switch to a backend still loads (or compiles
        elsewhere) its remaining kernels (``editor.warmup.BackendPreparation.rest``), every
        family waits again, so no click compiles them on the window's thread."""
        from editor import warmup
        preparing = bool(warmup._PREPARING)
        if preparing and not self._switch_timer.isActive():
            self.pending = list(FAMILIES)
            self.window.tools.waiting = set(self.pending)
            self._apply()
            self._switch_timer.start()
        elif not preparing and self._switch_timer.isActive():
            self._switch_timer.stop()
            for family in list(self.pending):
                if family in self._loaded_here:  # else the start's worker still loads it
                    self._on_loaded(family)

    def _on_loaded(self, family: str) -> None:
        self._loaded_here.add(family)
        if family not in self.pending:
            return
        self.pending.remove(family)
        self.window.tools.waiting.discard(family)
        for action in _family_actions(self.window)[family]:
            action.setEnabled(True)
        if family == "edit":  # undo and redo follow the stack again
            refresh = getattr(self.window, "_update_title", None)
            if refresh is not None and self.window.document is not None:
                refresh()
        self._apply()
        self.family_ready.emit(family)
        if not self.pending:
            self.all_ready.emit()

    # ------------------------------------------------------------------ worker thread
    def _run(self) -> None:
        loader = FamilyLoader(self.backend)
        for family, line in FAMILIES.items():
            if self._stopping.is_set():
                return
            if self.warmup is not None and not self.fell_back \
                    and not self.warmup.wait_ready(FAMILY_TIMEOUT_S, line=line):
                self.fell_back = True
                self._note.emit(f"Preparing the {self.backend} — the compile process ended "
                                "early: compiling the tools' kernels in the editor's own "
                                "process (the window may pause)…")
            if self._stopping.is_set():
                return
            loader.load(family)
            self._loaded.emit(family)


def start_kernel_readiness(window, backend: str, warmup=None) -> KernelReadiness:
    """Attach a :class:`KernelReadiness` to ``window`` and start it."""
    readiness = KernelReadiness(window, backend, warmup)
    window.kernel_readiness = readiness
    readiness.start()
    return readiness
