"""The main window: four views, docked panels, menus, toolbar, status bar, files.

Layout: the 3D view and the top, front and side views in a 2x2 splitter; panels docked right
(partition: backend, parameters, overlay and legend; statistics; node inspector; queries) and
left (entity palette, properties, undo history). The bottom dock area is kept free for a
timeline (:meth:`MainWindow.add_bottom_dock`).
"""
from __future__ import annotations

import os
import time

from PySide6.QtCore import QFileSystemWatcher, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QToolBar,
)

from editor.model.loading import (
    level_file_types,
    level_parts,
    open_level,
    save_level,
    split_member,
)
from spatial.errors import PartitionStudioError

from .dialogs import install_dialogs
from .document import Document
from .editor_state import GRID_SIZES, EditorState
from .first_frame import FirstPaint
from .frame_sync import FrameSync
from .glcheck import gl_status
from .gui_collector import collect_on_gui_thread
from .panels.history_panel import HistoryPanel
from .panels.inspector_panel import InspectorPanel
from .panels.overlay_panel import OverlayPanel
from .panels.palette_panel import PalettePanel
from .panels.params_panel import ParamsPanel
from .panels.properties_panel import PropertiesPanel
from .panels.query_panel import QueryPanel
from .panels.stats_panel import StatsPanel
from .prompts import Prompts, file_filters
from .quiet import set_checked_quietly, signals_blocked
from .scene_geometry import prepare_geometry
from .settings import add_recent_file, default_settings, last_backend, recent_files, set_last_backend
from .timeline import install_timeline
from .tools import TOOL_NAMES, ToolManager
from .tools.edit_ops import delete_selection, duplicate_selection, select
from .views.view2d import View2D
from .workers import LoadWorker

#: files larger than this open on a worker thread with a progress bar
BACKGROUND_OPEN_BYTES = 256 * 1024
APP_TITLE = "Partition Studio"


def _scrolled(widget) -> QScrollArea:
    """``widget`` in a scroll area, so a small window can still hold every dock."""
    scroll = QScrollArea()
    scroll.setWidget(widget)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QScrollArea.NoFrame)
    return scroll


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


class MainWindow(QMainWindow):
    """The editor window.

    Parameters
    ----------
    settings : QSettings, optional
        Where preferences live (tests pass a temporary one).
    use_gl : bool, optional
        Create the OpenGL 3D view; default: when a GL context is available.
    """

    def __init__(self, settings: QSettings | None = None, use_gl: bool | None = None) -> None:
        super().__init__()
        collect_on_gui_thread()  # never on a worker thread: see editor.qt.gui_collector
        self.settings = settings if settings is not None else default_settings()
        self.state = EditorState(self)
        self.tools = ToolManager(self.state)
        self.setObjectName("main_window")
        self.setAcceptDrops(True)
        self.errors: list[str] = []          # every error shown, newest last (tests read it)
        self.prompts = Prompts(self)  # every dialog goes through it (tests replace it)
        self.ask_save = lambda: self.prompts.ask_save(self.document.display_name())
        self.ask_reload = lambda: self.prompts.ask_reload(self.document.display_name())
        self._load_worker = None
        self._progress_prefix = ""  # what the status bar says before the loader's progress
        self._ignore_watch_until = 0.0
        self._cursor = None

        if use_gl is None:
            use_gl, self.gl_reason = gl_status()
        else:
            self.gl_reason = "" if use_gl else "OpenGL disabled"
        self._build_views(use_gl)
        self._build_docks()
        self._build_actions()
        self._build_status_bar()
        install_timeline(self)  # the simulation's timeline and hotspot docks, Simulation menu
        install_dialogs(self)  # Tools → Tune parameters…, Help → Plugins…
        self.frame_sync = FrameSync(self)  # every changed view in one composite per frame

        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._on_file_changed)
        self._reload_timer = QTimer(self)
        self._reload_timer.setSingleShot(True)
        self._reload_timer.setInterval(250)
        self._reload_timer.timeout.connect(self._reload_from_watch)
        self._hover_timer = QTimer(self)
        self._hover_timer.setInterval(16)  # hover work at most once a frame
        self._hover_timer.setSingleShot(True)
        self._hover_timer.timeout.connect(self._update_cursor_status)

        self.state.document_replaced.connect(self._on_document_replaced)
        self.state.selection_changed.connect(lambda ids: self._update_status())
        self.state.overlay_changed.connect(lambda geom: self._update_status())
        self.state.status_message.connect(lambda text: self.statusBar().showMessage(text, 5000))
        self.state.tool_changed.connect(self._on_tool_changed)
        self.resize(1500, 950)
        # a layout the user saved is theirs; else the first show fits the docks to the window
        self._fit_docks_on_show = self.settings.value("window/state") is None
        self._restore_layout()
        # Pair finding for the statistics is the slowest thing a new window does (on a fresh
        # install it compiles its kernels first): it waits until the level is on screen.
        self.stats_panel.hold()
        self.first_paint = FirstPaint(self.central_views(), self)
        self.first_paint.painted.connect(self._release_stats_when_compiled)
        self.kernel_warmup = None  # an editor.warmup.KernelWarmup on a first start

    def _release_stats_when_compiled(self) -> None:
        """Let the statistics find pairs once the first frame is shown and, on a first start,
        the warm-up process has cached the pair-finding kernels (else this window would
        compile them again, frozen, while that process does the same)."""
        if self.kernel_warmup is not None and not self.kernel_warmup.finished():
            QTimer.singleShot(250, self._release_stats_when_compiled)
            return
        self.stats_panel.release()

    # ------------------------------------------------------------------ construction
    def _build_views(self, use_gl: bool) -> None:
        self.view3d = None
        if use_gl:
            from .views.view3d import View3D
            self.view3d = View3D(self.state)
            self.view3d.pick_requested.connect(self.tools.pick3d)
            self.view3d.frame_rendered.connect(lambda ms: self._frame_label.setText(f"frame {ms:.1f} ms"))
            self.tools.tools["frustum"].camera_source = self.view3d.camera_shot
            left_top = self.view3d
        else:
            left_top = QLabel(f"3D view unavailable: {self.gl_reason}")
            left_top.setObjectName("view3d_placeholder")
            left_top.setAlignment(Qt.AlignCenter)
            left_top.setWordWrap(True)
        self.views2d = {name: View2D(self.state, self.tools, name) for name in ("Top", "Front", "Side")}
        for view in self.views2d.values():
            view.cursor_moved.connect(self._on_cursor_moved)
        top = QSplitter(Qt.Horizontal)
        top.addWidget(left_top)
        top.addWidget(self.views2d["Top"])
        bottom = QSplitter(Qt.Horizontal)
        bottom.addWidget(self.views2d["Front"])
        bottom.addWidget(self.views2d["Side"])
        self.splitter = QSplitter(Qt.Vertical)
        self.splitter.setObjectName("views_splitter")
        self.splitter.addWidget(top)
        self.splitter.addWidget(bottom)
        for s in (top, bottom):
            s.setSizes([1, 1])
        self.splitter.setSizes([3, 2])
        self.setCentralWidget(self.splitter)

    def central_views(self) -> list:
        """The widgets that paint the level: the 3D view (or its placeholder) and the 2D views'
        viewports (a QGraphicsView paints in its viewport, not in itself)."""
        first = self.view3d if self.view3d is not None else self.splitter.widget(0).widget(0)
        return [first] + [view.viewport() for view in self.views2d.values()]

    def _dock(self, title: str, widget, area, name: str) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_docks(self) -> None:
        st = self.state
        self.params_panel = ParamsPanel(st)
        self.overlay_panel = OverlayPanel(st)
        scroll = _scrolled(self.params_panel)
        scroll.setMinimumWidth(330)
        self.stats_panel = StatsPanel(st)
        self.inspector_panel = InspectorPanel(st)
        self.query_panel = QueryPanel(st)
        if self.view3d is not None:
            self.query_panel.camera_source = self.view3d.camera_shot
        self.palette_panel = PalettePanel(st)
        self.properties_panel = PropertiesPanel(st)
        self.history_panel = HistoryPanel(st)
        R, L = Qt.RightDockWidgetArea, Qt.LeftDockWidgetArea
        self.docks = {
            "partition": self._dock("Partition", scroll, R, "dock_partition"),
            "overlay": self._dock("Tree overlay", _scrolled(self.overlay_panel), R, "dock_overlay"),
            "stats": self._dock("Statistics", _scrolled(self.stats_panel), R, "dock_stats"),
            "inspector": self._dock("Node inspector", self.inspector_panel, R, "dock_inspector"),
            "queries": self._dock("Queries", self.query_panel, R, "dock_queries"),
            "palette": self._dock("Entities", self.palette_panel, L, "dock_palette"),
            "properties": self._dock("Properties", self.properties_panel, L, "dock_properties"),
            "history": self._dock("Undo history", self.history_panel, L, "dock_history"),
        }
        self.tabifyDockWidget(self.docks["stats"], self.docks["inspector"])
        self.tabifyDockWidget(self.docks["inspector"], self.docks["queries"])
        self.docks["stats"].raise_()
        self.tabifyDockWidget(self.docks["palette"], self.docks["history"])
        self.docks["palette"].raise_()
        # a first layout (its settling also fixes the column's width); the first show then fits
        # the heights to the contents (dock_fit), unless the user saved a layout of their own
        self.resizeDocks([self.docks["partition"], self.docks["overlay"], self.docks["stats"]],
                         [285, 250, 300], Qt.Vertical)

    def add_bottom_dock(self, title: str, widget, name: str) -> QDockWidget:
        """Dock a panel along the bottom (the place kept for a simulation timeline)."""
        return self._dock(title, widget, Qt.BottomDockWidgetArea, name)

    def _doc(self, fn):
        """``fn`` guarded for the moment no document is open yet (a first file still loading)."""
        def run(*args):
            if self.document is not None:
                fn(*args)
        return run

    def _action(self, text, slot=None, shortcut=None, checkable=False, tip=None) -> QAction:
        act = QAction(text, self)
        if shortcut:
            act.setShortcut(QKeySequence(shortcut))
        act.setCheckable(checkable)
        if tip:
            act.setStatusTip(tip)
            act.setToolTip(tip)
        if slot is not None:
            act.triggered.connect(slot)
        return act

    def _build_actions(self) -> None:
        st = self.state
        mb = self.menuBar()
        # File
        m = mb.addMenu("&File")
        self.act_open = self._action("&Open…", self.open_dialog, QKeySequence.Open)
        m.addAction(self.act_open)
        m.addAction(self._action("Open &demo level", lambda: self.open_file(None)))
        self.recent_menu = m.addMenu("Open &recent")
        self.act_save = self._action("&Save", self._doc(lambda *a: self.save()), QKeySequence.Save)
        self.act_save_as = self._action("Save &as…", self._doc(lambda *a: self.save_as()), QKeySequence.SaveAs)
        self.act_reload = self._action("Re&load from disk", self.reload, "F5")
        self.act_watch = self._action("&Watch file for changes", None, checkable=True,
                                      tip="Reload when the file changes on disk, keeping camera and selection")
        self.act_watch.setChecked(True)
        self.act_watch.toggled.connect(lambda on: self._update_watch())
        self.act_shot = self._action("Save screens&hot…", self.screenshot_dialog)
        for a in (self.act_save, self.act_save_as, self.act_reload, self.act_watch, self.act_shot):
            m.addAction(a)
        m.addSeparator()
        m.addAction(self._action("&Quit", self.close, QKeySequence.Quit))
        # Edit
        m = mb.addMenu("&Edit")
        d = self._doc
        self.act_undo = self._action("&Undo", d(lambda *a: st.document.stack.undo()), QKeySequence.Undo)
        self.act_redo = self._action("&Redo", d(lambda *a: st.document.stack.redo()), QKeySequence.Redo)
        self.act_delete = self._action("&Delete", d(lambda *a: delete_selection(st.document)),
                                       QKeySequence.Delete)
        self.act_duplicate = self._action("D&uplicate", d(lambda *a: self.duplicate()), "Ctrl+D")
        self.act_select_all = self._action("Select &all", d(lambda *a: select(
            st.document, st.document.scene.indexed_ids().tolist(), "Select All")), QKeySequence.SelectAll)
        self.act_select_none = self._action("Select &none", d(lambda *a: self.escape()), "Escape",
                                            tip="Clear the query results and the selection")
        for a in (self.act_undo, self.act_redo, None, self.act_delete, self.act_duplicate, None,
                  self.act_select_all, self.act_select_none):
            m.addSeparator() if a is None else m.addAction(a)
        # View
        m = mb.addMenu("&View")
        self.act_grid = self._action("Show &grid", st.set_show_grid, "G", checkable=True)
        self.act_grid.setChecked(True)
        self.act_snap = self._action("&Snap to grid", st.set_snap, "Shift+G", checkable=True)
        self.act_snap.setChecked(True)
        m.addAction(self.act_grid)
        m.addAction(self.act_snap)
        m.addAction(self._action("Grid &smaller", lambda: st.step_grid(-1), "["))
        m.addAction(self._action("Grid &larger", lambda: st.step_grid(1), "]"))
        m.addSeparator()
        m.addAction(self._action("&Frame level in all views", self.frame_all, "Home"))
        self.act_overlay = self._action("Tree &overlay", st.set_overlay_visible, "O", checkable=True)
        self.act_overlay.setChecked(True)
        st.overlay_visible_changed.connect(self._on_overlay_visible_changed)
        m.addAction(self.act_overlay)
        self.act_queries = self._action("&Query results", st.set_query_layer_visible, "Shift+R",
                                        checkable=True,
                                        tip="Show the ray and frustum results: hits, visited and culled nodes")
        self.act_queries.setChecked(st.query_layer_visible)
        st.query_layer_visible_changed.connect(lambda on: set_checked_quietly(self.act_queries, on))
        m.addAction(self.act_queries)
        if self.view3d is not None:
            self.act_faces = self._action("Brush &faces in 3D", self.view3d.set_faces_visible, checkable=True,
                                          tip="Translucent brush faces (off: wireframe, faster on big levels)")
            self.act_faces.setChecked(True)
            m.addAction(self.act_faces)
            self.act_fly = self._action("Fl&y mode (3D view, Z)", self.view3d.set_fly_mode, checkable=True)
            m.addAction(self.act_fly)
        m.addSeparator()
        panels = m.addMenu("&Panels")
        for dock in self.docks.values():
            panels.addAction(dock.toggleViewAction())
        # Tools
        m = mb.addMenu("&Tools")
        self.tool_actions: dict[str, QAction] = {}
        group = QActionGroup(self)
        for name, (label, key, tip) in TOOL_NAMES.items():
            act = self._action(label, lambda checked=False, n=name: st.set_tool(n), key, checkable=True, tip=tip)
            act.setActionGroup(group)
            self.tool_actions[name] = act
            m.addAction(act)
        self.tool_actions[st.tool].setChecked(True)
        m = mb.addMenu("&Help")
        m.addAction(self._action("&About", self._about))
        # toolbar
        tb = QToolBar("Main")
        tb.setObjectName("toolbar_main")
        self.addToolBar(tb)
        tb.addAction(self.act_open)
        tb.addAction(self.act_save)
        tb.addSeparator()
        tb.addAction(self.act_undo)
        tb.addAction(self.act_redo)
        tb.addSeparator()
        for act in self.tool_actions.values():
            tb.addAction(act)
        tb.addSeparator()
        tb.addWidget(QLabel(" Grid "))
        self.grid_combo = QComboBox()
        self.grid_combo.setObjectName("grid_combo")
        for g in GRID_SIZES:
            self.grid_combo.addItem(str(g), g)
        self.grid_combo.setCurrentIndex(GRID_SIZES.index(st.grid_size))
        self.grid_combo.currentIndexChanged.connect(lambda i: st.set_grid_size(self.grid_combo.itemData(i)))
        tb.addWidget(self.grid_combo)
        self.snap_box = QCheckBox("Snap")
        self.snap_box.setChecked(True)
        self.snap_box.toggled.connect(st.set_snap)
        tb.addWidget(self.snap_box)
        tb.addAction(self.act_overlay)
        st.grid_changed.connect(self._on_grid_changed)
        self._refresh_recent_menu()

    def _build_status_bar(self) -> None:
        sb = self.statusBar()
        self._pos_label = QLabel("")
        self._sel_label = QLabel("")
        self._nodes_label = QLabel("")
        self._frame_label = QLabel("")
        self._pos_label.setMinimumWidth(180)
        for w in (self._pos_label, self._sel_label, self._nodes_label, self._frame_label):
            sb.addPermanentWidget(w)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(200)
        self.progress.setRange(0, 100)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.hide()
        self.cancel_button.clicked.connect(self.cancel_background_work)
        sb.addPermanentWidget(self.progress)
        sb.addPermanentWidget(self.cancel_button)

    # ------------------------------------------------------------------ documents
    @property
    def document(self) -> Document | None:
        return self.state.document

    def open_file(self, path: str | None, background: bool | None = None) -> bool:
        """Open ``path`` (``None``: the demo level; ``FILE.wad:MAP`` one map of a WAD).

        A file holding several levels (a bare ``.wad``) asks which one through
        :meth:`Prompts.choose_part`. On failure the current document stays untouched and the
        error is shown as one line in a dialog. Returns True when opened (or started, in the
        background).
        """
        if path is not None:
            try:
                parts = level_parts(path)
            except PartitionStudioError as exc:
                self.report_error(str(exc))
                return False
            if parts:
                name = parts[0]["name"] if len(parts) == 1 else \
                    self.prompts.choose_part(os.path.basename(path), parts)
                if name is None:
                    return False
                path = f"{path}:{name}"
        if self.document is not None and self.document.is_dirty() and not self._confirm_discard():
            return False
        if background is None:
            file = split_member(path)[0] if path is not None else None
            background = file is not None and os.path.exists(file) and \
                os.path.getsize(file) > BACKGROUND_OPEN_BYTES
        if background:
            self.cancel_background_work()
            prepare, text = prepare_geometry, f"Opening {os.path.basename(path or 'the demo level')}…"
            warmup = self.kernel_warmup
            if warmup is not None and not warmup.ready:
                prepare = _after_warm_up(warmup, prepare)
                text = f"Preparing the {warmup.backend} — first start only (compiling its kernels)…"
                self._progress_prefix = text
            worker = LoadWorker(path, prepare=prepare)
            worker.progress.connect(self._on_progress)
            worker.loaded.connect(lambda loaded: self._adopt_loaded(loaded, geometry=worker.prepared))
            worker.failed.connect(self._on_load_failed)
            self._load_worker = worker
            self._show_progress(text)
            worker.start()
            return True
        try:
            loaded = open_level(path)
        except PartitionStudioError as exc:
            self.report_error(str(exc))
            return False
        self._adopt_loaded(loaded)
        return True

    def _adopt_loaded(self, loaded, selection=None, keep_settings=None, geometry=None) -> None:
        self._hide_progress()
        self._load_worker = None
        if self.kernel_warmup is not None:
            # on a first start the warm-up process compiles the index kernels meanwhile:
            # loading them from its cache beats compiling them here a second time
            self.kernel_warmup.wait_ready()
        self._settle_backend(loaded.document, keep_settings)
        doc = Document(loaded.document, loaded.path, loaded.warnings, selection=selection)
        self.state.set_document(doc, geometry=geometry)
        for w in loaded.warnings[:3]:
            self.statusBar().showMessage(w, 8000)
        if loaded.path:
            add_recent_file(self.settings, loaded.path)
            self._refresh_recent_menu()

    def _settle_backend(self, scene, keep_settings=None) -> None:
        """Give a level that brings no backend choice of its own (the default tree with default
        parameters: a WAD, a mesh, a .map without ``_ps_`` keys) the choice it had before a
        reload (``keep_settings``), else the user's last choice. Not an edit: nothing to save."""
        from editor.model.scene import DEFAULT_BACKEND, Edit, Settings
        from spatial.params import parse_params
        from spatial.registry import default_registry

        current = scene.settings
        if current.backend != DEFAULT_BACKEND or current.params:
            return
        choice = keep_settings or last_backend(self.settings)
        if not choice or (choice[0] == DEFAULT_BACKEND and not choice[1]):
            return
        cls = default_registry().backends.get(choice[0])
        try:
            parse_params(cls.Params, dict(choice[1]))
        except Exception:  # a plugin gone or a parameter changed since: keep the default
            return
        scene.apply(Edit(settings=Settings(choice[0], dict(choice[1]), current.metadata)))

    def _remember_backend(self, doc, kind) -> None:
        from editor.model import ChangeKind

        if kind & ChangeKind.SETTINGS:
            settings = doc.scene.settings
            set_last_backend(self.settings, settings.backend, settings.params)

    def _on_load_failed(self, message: str) -> None:
        self._hide_progress()
        self._load_worker = None
        self.report_error(message)

    def report_error(self, message: str) -> None:
        """Show an error without blocking (a modeless message box) and log it in the status bar."""
        self.errors.append(message)
        self.statusBar().showMessage(message, 10000)
        self._error_box = self.prompts.show_error(message)

    def _on_document_replaced(self, doc: Document) -> None:
        doc.stack_changed.connect(self._update_title)
        doc.scene_changed.connect(lambda ids, kind: self._remember_backend(doc, kind))
        doc.rebuild_started.connect(lambda: self._on_rebuild_started(doc))
        doc.preparing_status.connect(self._on_preparing_status)
        doc.preparing_progress.connect(self._on_preparing_progress)
        doc.rebuild_finished.connect(lambda ms: self._hide_progress())
        doc.rebuild_finished.connect(lambda ms: self.statusBar().showMessage(
            f"{doc.index.name} rebuilt in {ms:.1f} ms", 3000))
        if doc.sync.fallback:
            self.statusBar().showMessage(doc.sync.fallback, 8000)
        self._update_title()
        self._update_watch()
        self._update_status()

    def _on_rebuild_started(self, doc: Document) -> None:
        if doc.preparing_backend:
            # steps, not the busy animation: under a software OpenGL (llvmpipe) every frame
            # of that animation recomposes the whole window, half a core for the tens of
            # seconds a compile takes, taken from the compile and from the window itself
            self._show_progress(f"Preparing the {doc.preparing_backend} — first use only "
                                "(compiling its kernels; the window stays usable)…")
            self.progress.setValue(5)
        elif doc.rebuilding:
            self._show_progress("Rebuilding the tree…", busy=True)

    def _on_preparing_status(self, text: str) -> None:
        """A backend's kernels compile in this process after all: say so (beside the
        progress bar while its tree is on the way, else for a while)."""
        if self.progress.isVisible():
            self.statusBar().showMessage(text)
        else:
            self.statusBar().showMessage(text, 10000)

    def _on_preparing_progress(self, fraction: float) -> None:
        if self.progress.isVisible():
            self.progress.setValue(int(fraction * 100))

    def _update_title(self) -> None:
        doc = self.document
        if doc is None:
            return
        self.setWindowTitle(f"{doc.display_name()}{' *' if doc.is_dirty() else ''} — {APP_TITLE}")
        self.act_undo.setEnabled(doc.stack.can_undo())
        self.act_redo.setEnabled(doc.stack.can_redo())
        self.act_undo.setToolTip(f"Undo {doc.stack.undo_text()}".rstrip())
        self.act_redo.setToolTip(f"Redo {doc.stack.redo_text()}".rstrip())

    def open_dialog(self) -> None:
        start = os.path.dirname(split_member(self.document.path)[0]) \
            if self.document is not None and self.document.path else ""
        path = self.prompts.open_path(start, file_filters(level_file_types()) + ["All files (*)"])
        if path:
            self.open_file(path)

    def save(self) -> bool:
        """Save to the document's own file when its format can be written (``.json``,
        ``.map``...), else ask for a name."""
        doc = self.document
        if doc.path is None or split_member(doc.path)[1] is not None or not self._can_write(doc.path):
            return self.save_as()
        return self._save_to(doc.path)

    @staticmethod
    def _can_write(path: str) -> bool:
        from spatial.registry import default_registry
        return path.lower().endswith(".json") or default_registry().exporter_for(path) is not None

    def save_as(self) -> bool:
        types = level_file_types(saving=True)
        filters = file_filters(types)
        doc = self.document
        start = split_member(doc.path)[0] if doc is not None and doc.path else ""
        start = os.path.splitext(start)[0] if start and not self._can_write(start) else start
        answer = self.prompts.save_path(start, filters)
        if not answer:
            return False
        path, chosen = answer
        if not os.path.splitext(path)[1]:
            patterns = types[filters.index(chosen)][1] if chosen in filters and chosen != filters[0] \
                else ("*.json",)
            path += patterns[0].lstrip("*")
        return self._save_to(path)

    def _save_to(self, path: str) -> bool:
        doc = self.document
        self._ignore_watch_until = time.monotonic() + 1.0  # our own write is not an outside change
        try:
            save_level(doc.scene, path)
        except Exception as exc:  # one line in a dialog; the document stays as it is
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.report_error(message if path in message else f"{path}: could not save: {message}")
            return False
        doc.path = path
        doc.stack.set_clean()
        add_recent_file(self.settings, path)
        self._refresh_recent_menu()
        self._update_watch()
        self._update_title()
        self.statusBar().showMessage(f"Saved {path}", 4000)
        return True

    def reload(self) -> None:
        """Re-read the file, keeping the cameras and the selection where ids survive."""
        doc = self.document
        if doc is None or doc.path is None:
            return
        try:
            loaded = open_level(doc.path)
        except PartitionStudioError as exc:
            self.report_error(f"Reload failed, keeping the document: {exc}")
            self._update_watch()
            return
        selection = set(doc.selection)
        ranges = {name: v.vb.viewRange() for name, v in self.views2d.items()}
        camera = dict(self.view3d.opts) if self.view3d is not None else None
        settings = doc.scene.settings  # a file that holds no choice keeps the one on screen
        self._adopt_loaded(loaded, selection=selection,
                           keep_settings=(settings.backend, dict(settings.params)))
        for name, (xr, yr) in ranges.items():
            self.views2d[name].vb.setRange(xRange=xr, yRange=yr, padding=0)
        if camera is not None:
            for key in ("center", "distance", "elevation", "azimuth", "fov"):
                self.view3d.opts[key] = camera[key]
            self.view3d.update()
        self.statusBar().showMessage(f"Reloaded {doc.path}", 4000)

    def _update_watch(self) -> None:
        files = self.watcher.files()
        if files:
            self.watcher.removePaths(files)
        doc = self.document
        file = split_member(doc.path)[0] if doc is not None and doc.path else None
        if self.act_watch.isChecked() and file and os.path.exists(file):
            self.watcher.addPath(file)  # a WAD map is watched through its WAD

    def _on_file_changed(self, path: str) -> None:
        if time.monotonic() < self._ignore_watch_until:
            self._update_watch()  # an atomic save replaced the file: watch the new one
            return
        self._reload_timer.start()  # editors write in bursts: reload once they are done

    def _reload_from_watch(self) -> None:
        doc = self.document
        if doc is not None and doc.is_dirty() and not self.ask_reload():
            self.statusBar().showMessage(f"{doc.path} changed on disk; keeping your unsaved edits", 8000)
            self._update_watch()
            return
        self.reload()

    def _refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = recent_files(self.settings)
        for path in files:
            self.recent_menu.addAction(path, lambda p=path: self.open_file(p))
        self.recent_menu.setEnabled(bool(files))

    # ------------------------------------------------------------------ background work
    def _show_progress(self, text: str, busy: bool = False) -> None:
        self.progress.setRange(0, 0 if busy else 100)
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.show()
        self.statusBar().showMessage(text)

    def _hide_progress(self) -> None:
        self._progress_prefix = ""
        if self.progress.isVisible():
            self.statusBar().clearMessage()  # the last progress text is over, not news
        self.progress.hide()
        self.cancel_button.hide()

    def _on_progress(self, fraction: float, text: str) -> None:
        self.progress.setValue(int(fraction * 100))
        # a first start keeps saying why it takes longer
        self.statusBar().showMessage(f"{self._progress_prefix}  {text}" if self._progress_prefix else text)

    def cancel_background_work(self) -> None:
        if self._load_worker is not None:
            self._load_worker.cancel()
            self._load_worker = None
        if self.document is not None:
            self.document.cancel_rebuild()
        self._hide_progress()

    # ------------------------------------------------------------------ edits
    def duplicate(self) -> None:
        g = self.state.grid_size
        duplicate_selection(self.document, (g, g, 0))

    def frame_all(self) -> None:
        for v in self.views2d.values():
            v.frame_scene()
        if self.view3d is not None:
            self.view3d.frame_scene()

    def _on_tool_changed(self, name: str) -> None:
        self.tool_actions[name].setChecked(True)
        self.statusBar().showMessage(TOOL_NAMES[name][2], 4000)

    def _on_overlay_visible_changed(self, on: bool) -> None:
        set_checked_quietly(self.act_overlay, on)

    def escape(self) -> None:
        """Esc: clear the query layer (ray, frustum) and the selection."""
        self.state.clear_queries()
        select(self.document, [], "Select None")

    def _on_grid_changed(self) -> None:
        st = self.state
        with signals_blocked(self.grid_combo):
            self.grid_combo.setCurrentIndex(GRID_SIZES.index(st.grid_size))
        for w, on in ((self.snap_box, st.snap), (self.act_snap, st.snap), (self.act_grid, st.show_grid)):
            set_checked_quietly(w, on)
        self.settings.setValue("grid_size", st.grid_size)

    # ------------------------------------------------------------------ status bar
    def _on_cursor_moved(self, point3) -> None:
        self._cursor = point3
        if not self._hover_timer.isActive():
            self._hover_timer.start()

    def _update_cursor_status(self) -> None:
        p = self._cursor
        if p is not None:
            self._pos_label.setText("x {:.0f}  y {:.0f}  z {:.0f}".format(*p))

    def _update_status(self) -> None:
        doc = self.document
        if doc is None:
            return
        n = len(doc.selection)
        self._sel_label.setText(f"{n} selected" if n else "nothing selected")
        geom = self.state.overlay
        if geom is not None:
            self._nodes_label.setText(f"{doc.index.name}: {geom.total} nodes ({geom.count} drawn)")

    # ------------------------------------------------------------------ window
    def _restore_layout(self) -> None:
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)
        grid = self.settings.value("grid_size")
        if grid is not None and int(grid) in GRID_SIZES:
            self.state.set_grid_size(int(grid))

    def save_layout(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.sync()

    def _confirm_discard(self) -> bool:
        """Ask about unsaved changes; True when it is fine to go on."""
        answer = self.ask_save()
        if answer == "save":
            return self.save()
        return answer == "discard"

    def showEvent(self, ev) -> None:
        super().showEvent(ev)
        if self._fit_docks_on_show:
            self._fit_docks_on_show = False
            from .dock_fit import fit_column
            docks = self.docks
            # the overlay (with the legend of what the views show) stays in front
            fit_column(self, [docks["partition"], docks["overlay"], docks["stats"]],
                       stretching=docks["stats"], tab_under=docks["partition"],
                       tab_over=docks["overlay"])

    def closeEvent(self, ev) -> None:
        doc = self.document
        if doc is not None and doc.is_dirty() and not self._confirm_discard():
            ev.ignore()
            return
        self.cancel_background_work()
        from editor.warmup import stop_all

        from .workers import wait_for_workers
        stop_all()  # kernel compile processes: what they cached so far stays cached
        wait_for_workers()
        self.save_layout()
        ev.accept()

    def dragEnterEvent(self, ev) -> None:
        if ev.mimeData().hasUrls():
            ev.acceptProposedAction()

    def dropEvent(self, ev) -> None:
        urls = [u.toLocalFile() for u in ev.mimeData().urls() if u.isLocalFile()]
        if urls:
            ev.acceptProposedAction()
            self.open_file(urls[0])

    def screenshot_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save screenshot", "screenshot.png", "PNG (*.png)")
        if path:
            from .screenshot import save_screenshot
            try:
                save_screenshot(self, path)
            except Exception as exc:
                self.report_error(str(exc))

    def _about(self) -> None:
        QMessageBox.about(self, APP_TITLE, "<b>Partition Studio</b><br>See and tune the spatial partition "
                          "of a game level: octree, quadtree, BSP, kd-tree, BVH, grid.")
