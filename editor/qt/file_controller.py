"""Files in the editor: open, save, save as, reload, watch, recent files, drag and drop.

:class:`FileController` owns the File menu's document actions and everything behind them, so
the main window only lays out views and panels. Every level is read through
:func:`editor.model.loading.open_level` (on a worker thread for big files) and written through
:func:`editor.model.loading.save_level`; errors are one line in a modeless dialog and leave the
open document as it is.
"""
from __future__ import annotations

import copy
import os
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

from editor.model.loading import (
    LoadResult,
    give_backend_choice,
    level_file_types,
    level_parts,
    open_level,
    save_level,
    split_member,
)
from spatial.errors import PartitionStudioError

from .choice_reload import reapply_choice, unsaved_choice
from .document import Document
from .file_watch import SETTLE_MS, FileSettle, watch_paths
from .prompts import file_filters
from .scene_geometry import prepare_geometry
from .settings import add_recent_file, last_backend, recent_files, set_last_backend
from .workers import LoadWorker

if TYPE_CHECKING:
    from .main_window import MainWindow

#: files larger than this open on a worker thread with a progress bar
BACKGROUND_OPEN_BYTES = 256 * 1024


class PreparedLevel:
    """What the loading thread makes beside the level: its draw arrays, its index, that
    index's node table (the first overlay's) and a copy of the index (the Statistics panel's
    first pair count runs on it: copying a 2,000,000-triangle index took 1.5 s on the window's
    thread)."""

    def __init__(self, geometry, index, nodes=None, index_copy=None, stats=None) -> None:
        self.geometry = geometry
        self.index = index
        self.nodes = nodes
        self.index_copy = index_copy
        #: ``index.stats(nodes)``, the Statistics panel's sizes (0.1 s on the window's thread
        #: for a 2,000,000-triangle octree)
        self.stats = stats


def _prepare_level(choice):
    """``prepare(scene)`` for the loading thread: the user's backend choice given to a level
    that brings none, the draw arrays, then the index for the level's settings — so the
    window's thread builds neither (:func:`editor.model.index_sync.build_for_settings`)."""
    def run(scene) -> PreparedLevel:
        from editor.model.index_sync import build_for_settings
        from spatial import outline_raster

        give_backend_choice(scene, choice)
        geometry = prepare_geometry(scene)
        # the moving bodies' outlines (Play, Step, a live game): their kernels are loaded
        # here, not at the window's first paint of a frame
        outline_raster.load_kernels()
        # every view frames the level by its bounds, which the scene keeps until an edit:
        # walking 50,000 brushes for them took a quarter of a second on the window's thread
        scene.bounds()
        index = build_for_settings(scene)
        if index is None:
            return PreparedLevel(geometry, None)
        nodes = index.nodes()
        return PreparedLevel(geometry, index, nodes, _copy_of(index), index.stats(nodes))
    return run


def _copy_of(index):
    """A deep copy of ``index``, or None for a backend that cannot be copied."""
    try:
        return copy.deepcopy(index)
    except Exception:  # a plugin's backend: the panel then counts on the live index
        return None


def _after_warm_up(warmup, prepare):
    """``prepare(scene)`` on the loading thread, once the warm-up process has cached the
    first frame's index kernels and this process has loaded them, so that the GUI thread
    neither waits for that process nor compiles (see :mod:`editor.warmup`)."""
    def run(scene):
        from editor.warmup import warm_first_frame
        if warmup.wait_ready():
            warm_first_frame(warmup.backend)
        return prepare(scene)
    return run


def _can_write(path: str) -> bool:
    """Whether ``path``'s format can be saved (native JSON or a registered scene exporter)."""
    from spatial.registry import default_registry
    return path.lower().endswith(".json") or default_registry().exporter_for(path) is not None


class FileController(QObject):
    """The window's files: reading, writing, reloading, watching and the recent list.

    It asks the user through the window (``window.ask_save()``, ``window.ask_reload()``,
    ``window.prompts``), which tests replace, and reports through ``window.report_error``.
    """

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.load_worker: LoadWorker | None = None
        self._progress_prefix = ""  # what the status bar says before the loader's progress
        self._ignore_watch_until = 0.0
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._on_file_changed)
        self.watcher.directoryChanged.connect(self._on_file_changed)  # delete-and-create saves
        self.settle = FileSettle()
        self._reload_timer = QTimer(self)
        self._reload_timer.setSingleShot(True)
        self._reload_timer.setInterval(SETTLE_MS)
        self._reload_timer.timeout.connect(self.reload_from_watch)

    # ------------------------------------------------------------------ menu
    def build_menu(self, menu: QMenu) -> tuple[QAction, QAction, QAction, QAction, QAction]:
        """Fill the File menu's document entries: open, demo, recent, save, save as, reload,
        watch. Returns the actions ``(open, save, save_as, reload, watch)``."""
        w = self.window
        self.act_open = w._action("&Open…", self.open_dialog, QKeySequence.StandardKey.Open)
        menu.addAction(self.act_open)
        menu.addAction(w._action("Open &demo level", lambda: self.open_file(None)))
        self.recent_menu = menu.addMenu("Open &recent")
        self.act_save = w._action("&Save", w._doc(lambda *a: self.save()), QKeySequence.StandardKey.Save)
        self.act_save_as = w._action("Save &as…", w._doc(lambda *a: self.save_as()),
                                     QKeySequence.StandardKey.SaveAs)
        self.act_reload = w._action("Re&load from disk", self.reload, "F5")
        self.act_watch = w._action("&Watch file for changes", None, checkable=True,
                                   tip="Reload when the file changes on disk, keeping camera and "
                                       "selection")
        self.act_watch.setChecked(True)
        self.act_watch.toggled.connect(lambda on: self.update_watch())
        for a in (self.act_save, self.act_save_as, self.act_reload, self.act_watch):
            menu.addAction(a)
        self.refresh_recent_menu()
        return self.act_open, self.act_save, self.act_save_as, self.act_reload, self.act_watch

    def refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = recent_files(self.window.settings)
        for path in files:
            action: QAction = self.recent_menu.addAction(path)
            action.triggered.connect(lambda checked=False, p=path: self.open_file(p))
        self.recent_menu.setEnabled(bool(files))

    # ------------------------------------------------------------------ opening
    def _choose_part(self, path: str) -> str | None:
        """``path`` itself, ``FILE.wad:MAP`` for a file of several levels (asked), or None."""
        try:
            parts = level_parts(path)
        except PartitionStudioError as exc:
            self.window.report_error(str(exc))
            return None
        if not parts:
            return path
        name = parts[0]["name"] if len(parts) == 1 else \
            self.window.prompts.choose_part(os.path.basename(path), parts)
        return None if name is None else f"{path}:{name}"

    def open_file(self, path: str | None, background: bool | None = None) -> bool:
        """Open ``path`` (``None``: the demo level; ``FILE.wad:MAP`` one map of a WAD).

        A file holding several levels (a bare ``.wad``) asks which one through
        :meth:`Prompts.choose_part`. On failure the current document stays untouched and the
        error is shown as one line in a dialog. Returns True when opened (or started, in the
        background).
        """
        if path is not None and (path := self._choose_part(path)) is None:
            return False
        doc = self.window.document
        if doc is not None and doc.is_dirty() and not self.confirm_discard():
            return False
        if background is None:
            file = split_member(path)[0] if path is not None else None
            background = file is not None and os.path.exists(file) and \
                os.path.getsize(file) > BACKGROUND_OPEN_BYTES
        if background:
            self._open_in_background(path)
            return True
        try:
            loaded = open_level(path)
        except PartitionStudioError as exc:
            self.window.report_error(str(exc))
            return False
        self.adopt_loaded(loaded)
        return True

    def _open_in_background(self, path: str | None) -> None:
        w = self.window
        w.cancel_background_work()
        prepare = _prepare_level(last_backend(w.settings))
        text = f"Opening {os.path.basename(path or 'the demo level')}…"
        warmup = w.kernel_warmup
        if warmup is not None and not warmup.ready:
            prepare = _after_warm_up(warmup, prepare)
            text = f"Preparing the {warmup.backend} — first start only (compiling its kernels)…"
            self._progress_prefix = text
        # a first start's warm-up compiles the kernels of reading a level in a process of its
        # own: compiling them here held the interpreter, and the window, for up to half a
        # second at a time (a stand-in warm-up may not have that process)
        wait_for_reading = getattr(warmup, "wait_level_kernels", None)
        worker = LoadWorker(path, prepare=prepare, before_reading=wait_for_reading)
        worker.progress.connect(self._on_progress)
        worker.loaded.connect(lambda loaded: self._adopt_prepared(loaded, worker.prepared))
        worker.failed.connect(self._on_load_failed)
        self.load_worker = worker
        w.progress_status.show(text)
        worker.start()

    def cancel(self) -> None:
        """Forget a file being read in the background."""
        if self.load_worker is not None:
            self.load_worker.cancel()
            self.load_worker = None
        self._progress_prefix = ""

    def _on_progress(self, fraction: float, text: str) -> None:
        self.window.progress.setValue(int(fraction * 100))
        # a first start keeps saying why it takes longer
        prefix = self._progress_prefix
        self.window.statusBar().showMessage(f"{prefix}  {text}" if prefix else text)

    def _on_load_failed(self, message: str) -> None:
        self.window.progress_status.hide()
        self.load_worker = None
        self._progress_prefix = ""
        self.window.report_error(message)

    def _adopt_prepared(self, loaded: LoadResult, prepared: PreparedLevel | None) -> None:
        if prepared is None:  # preparing failed on the loading thread: the window does it
            self.adopt_loaded(loaded)
            return
        self.adopt_loaded(loaded, geometry=prepared.geometry, index=prepared.index,
                          nodes=prepared.nodes, index_copy=prepared.index_copy,
                          stats=prepared.stats)

    def adopt_loaded(self, loaded: LoadResult, selection=None, keep_settings=None,
                     geometry=None, index=None, nodes=None, index_copy=None,
                     stats=None) -> None:
        """Make a read level the window's document (keeping ``selection`` where ids survive)."""
        w = self.window
        w.progress_status.hide()
        self.load_worker = None
        self._progress_prefix = ""
        if w.kernel_warmup is not None:
            # on a first start the warm-up process compiles the index kernels meanwhile:
            # loading them from its cache beats compiling them here a second time
            w.kernel_warmup.wait_ready()
        self._settle_backend(loaded.document, keep_settings)
        settings = loaded.document.settings
        if index is not None and (index.name != settings.backend or
                                  index.params != settings.parsed(type(index))):
            index = None  # built for other settings than the level now has: built again
        doc = Document(loaded.document, loaded.path, loaded.warnings, selection=selection,
                       index=index)
        if nodes is not None and index is not None:
            w.state.offer_nodes(index, nodes)  # read with that index on the loading thread
        if index_copy is not None and index is not None:
            w.state.offer_index_copy(index, doc.index_version, index_copy)
        if stats is not None and index is not None:
            w.state.offer_stats(index, doc.index_version, stats)
        w.state.set_document(doc, geometry=geometry)
        for warning in loaded.warnings[:3]:
            w.statusBar().showMessage(warning, 8000)
        if loaded.path:
            add_recent_file(w.settings, loaded.path)
            self.refresh_recent_menu()

    def _settle_backend(self, scene, keep_settings=None) -> None:
        """A level that brings no backend choice gets the one it had before a reload
        (``keep_settings``), else the user's last (:func:`~editor.model.loading.give_backend_choice`)."""
        give_backend_choice(scene, keep_settings or last_backend(self.window.settings))

    def remember_backend(self, doc: Document, kind) -> None:
        """After a settings change: the user's backend choice, for levels that bring none."""
        from editor.model import ChangeKind

        if kind & ChangeKind.SETTINGS:
            settings = doc.scene.settings
            set_last_backend(self.window.settings, settings.backend, settings.params)

    def open_dialog(self) -> None:
        doc = self.window.document
        start = os.path.dirname(split_member(doc.path)[0]) if doc is not None and doc.path else ""
        path = self.window.prompts.open_path(start, file_filters(level_file_types())
                                             + ["All files (*)"])
        if path:
            self.open_file(path)

    def open_dropped(self, urls) -> bool:
        """Open the first local file of a drop; True when there was one."""
        files = [u.toLocalFile() for u in urls if u.isLocalFile()]
        if files:
            self.open_file(files[0])
        return bool(files)

    # ------------------------------------------------------------------ saving
    def confirm_discard(self) -> bool:
        """Ask about unsaved changes; True when it is fine to go on."""
        answer = self.window.ask_save()
        if answer == "save":
            return self.save()
        return answer == "discard"

    def save(self) -> bool:
        """Save to the document's own file when its format can be written (``.json``,
        ``.map``...), else ask for a name."""
        doc = self.window.document
        assert doc is not None, "the Save action runs only with a document open"
        if doc.path is None or split_member(doc.path)[1] is not None or not _can_write(doc.path):
            return self.save_as()
        return self.save_to(doc.path)

    def save_as(self) -> bool:
        types = level_file_types(saving=True)
        filters = file_filters(types)
        doc = self.window.document
        start = split_member(doc.path)[0] if doc is not None and doc.path else ""
        start = os.path.splitext(start)[0] if start and not _can_write(start) else start
        answer = self.window.prompts.save_path(start, filters)
        if not answer:
            return False
        path, chosen = answer
        if not os.path.splitext(path)[1]:
            patterns = types[filters.index(chosen)][1] if chosen in filters and chosen != filters[0] \
                else ("*.json",)
            path += patterns[0].lstrip("*")
        return self.save_to(path)

    def save_to(self, path: str) -> bool:
        """Write the document to ``path`` (atomic); it becomes the document's file."""
        w = self.window
        doc = w.document
        assert doc is not None, "saving needs a document"
        self._ignore_watch_until = time.monotonic() + 1.0  # our own write is not an outside change
        try:
            save_level(doc.scene, path)
        except Exception as exc:  # one line in a dialog; the document stays as it is
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            w.report_error(message if path in message else f"{path}: could not save: {message}")
            return False
        doc.path = path
        doc.stack.set_clean()
        add_recent_file(w.settings, path)
        self.refresh_recent_menu()
        self.update_watch()
        w.update_title()
        w.statusBar().showMessage(f"Saved {path}", 4000)
        return True

    # ------------------------------------------------------------------ reloading
    def reload(self) -> None:
        """Re-read the file, keeping the cameras and the selection where ids survive."""
        w = self.window
        doc = w.document
        if doc is None or doc.path is None:
            return
        try:
            loaded = open_level(doc.path)
        except PartitionStudioError as exc:
            message = f"Reload failed, keeping the document: {exc}"
            if self.settle.report_failure(doc):
                w.report_error(message)  # once per version on disk
            else:
                w.statusBar().showMessage(message, 8000)
            self.update_watch()
            return
        selection = set(doc.selection)
        ranges = {name: v.vb.viewRange() for name, v in w.views2d.items()}
        camera = dict(w.view3d.opts) if w.view3d is not None else None
        settings = doc.scene.settings  # a file that holds no choice keeps the one on screen
        choice = unsaved_choice(doc)  # an unsaved backend choice is applied again on top
        self.adopt_loaded(loaded, selection=selection,
                          keep_settings=(settings.backend, dict(settings.params)))
        for name, (xr, yr) in ranges.items():
            w.views2d[name].vb.setRange(xRange=xr, yRange=yr, padding=0)
        if camera is not None and w.view3d is not None:
            for key in ("center", "distance", "elevation", "azimuth", "fov"):
                w.view3d.opts[key] = camera[key]
            w.view3d.update()
        said = reapply_choice(w.document, choice) if choice is not None else None
        w.statusBar().showMessage(said or f"Reloaded {doc.path}", 8000 if said else 4000)

    def update_watch(self) -> None:
        """Watch the document's file and its folder (when asked to), and nothing else."""
        watch_paths(self.watcher, self.settle, self._watched_file(), self.act_watch.isChecked())

    def _watched_file(self) -> str | None:
        doc = self.window.document
        return split_member(doc.path)[0] if doc is not None and doc.path else None

    def _on_file_changed(self, path: str) -> None:
        if time.monotonic() < self._ignore_watch_until:
            self.update_watch()  # an atomic save replaced the file: watch the new one
            return
        if self.settle.noticed(self._watched_file()):
            self._reload_timer.start()  # editors write in bursts: reload once they are done

    def reload_from_watch(self) -> None:
        """The watched file changed and settled: reload, unless that would drop unsaved edits
        unasked (a backend choice alone is re-applied on top without asking)."""
        ready = self.settle.ready(self._watched_file())
        if ready is None:  # deleted: its creation (how many editors save) brings an event
            return
        if not ready:  # still being written
            self._reload_timer.start()
            return
        w = self.window
        doc = w.document
        if doc is not None and doc.is_dirty() and unsaved_choice(doc) is None and not w.ask_reload():
            w.statusBar().showMessage(f"{doc.path} changed on disk; keeping your unsaved edits", 8000)
            self.update_watch()
            return
        self.reload()
