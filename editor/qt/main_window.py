"""The main window: four views, docked panels, menus, toolbar, status bar (files: .file_controller).

Layout: the 3D view and the top, front and side views in a 2x2 splitter; panels docked right
(partition: backend, parameters, overlay and legend; statistics; node inspector; queries) and
left (entity palette, properties, undo history). The bottom dock area is kept free for a
timeline (:meth:`MainWindow.add_bottom_dock`).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QFrame,
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QToolBar,
    QWidget,
)

from .compare.install import install_compare
from .dialogs import install_dialogs
from .dock_refit import ColumnRefit
from .dock_tabs import WholeDockTabTitles
from .document import Document
from .editor_state import GRID_SIZES, EditorState
from .file_controller import FileController
from .first_frame import FirstPaint
from .frame_sync import FrameSync
from .glcheck import gl_status
from .gui_collector import collect_on_gui_thread
from .live import install_live_link
from .panels.history_panel import HistoryPanel
from .panels.inspector_panel import InspectorPanel
from .panels.overlay_panel import OverlayPanel
from .panels.palette_panel import PalettePanel
from .panels.params_panel import ParamsPanel
from .panels.problems_panel import install_problems
from .panels.properties_panel import PropertiesPanel
from .panels.query_panel import QueryPanel
from .panels.stats_panel import StatsPanel
from .prompts import Prompts
from .quiet import set_checked_quietly, signals_blocked
from .settings import default_settings
from .shortcuts import add_redo_shortcut
from .status_bar import ProgressStatus, StatusLabels
from .timeline import install_timeline
from .tools import TOOL_NAMES, ToolManager
from .tools.edit_ops import delete_selection, duplicate_selection, select
from .tools.query_tools import FrustumTool
from .views.view2d import View2D

if TYPE_CHECKING:  # for the annotations only: each is imported where its object is made
    from editor.warmup import KernelWarmup

    from .kernel_readiness import KernelReadiness
    from .views.view3d import View3D

#: files larger than this open on a worker thread with a progress bar
BACKGROUND_OPEN_BYTES = 256 * 1024
APP_TITLE = "Partition Studio"


def _scrolled(widget) -> QScrollArea:
    """``widget`` in a scroll area, so a small window can still hold every dock."""
    scroll = QScrollArea()
    scroll.setWidget(widget)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    return scroll


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
        # asked only about an open document (tests and quitting paths replace them)
        self.ask_save: Callable[[], str] = lambda: self.prompts.ask_save(self._document_name())
        self.ask_reload: Callable[[], bool] = \
            lambda: self.prompts.ask_reload(self._document_name())
        self.kernel_warmup: KernelWarmup | None = None  # on a first start
        self.files = FileController(self)  # open, save, reload, watch, recent files

        if use_gl is None:
            use_gl, self.gl_reason = gl_status()
        else:
            self.gl_reason = "" if use_gl else "OpenGL disabled"
        self.status_labels = StatusLabels(self.statusBar(), self.state)
        self._build_views(use_gl)
        self._build_docks()
        self._dock_tab_titles = WholeDockTabTitles(self)
        self._build_actions()
        self._build_status_bar()
        install_timeline(self)  # the simulation's timeline and hotspot docks, Simulation menu
        install_live_link(self)  # File > Connect to game..., the live link's status line
        install_dialogs(self)  # Tools → Tune parameters…, Help → Plugins…
        install_problems(self)  # brushes kept as written, listed with their line and reason
        install_compare(self)  # View → Compare…, focus, depth limit, tree diff of every edit
        self._dock_tab_titles.fit_rows()  # every dock is in place: the first layout fits its rows
        self.frame_sync = FrameSync(self)  # every changed view in one composite per frame

        self.state.document_replaced.connect(self._on_document_replaced)
        self.status_labels.follow_state()
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
        self.kernel_readiness: KernelReadiness | None = None  # tools wait for kernels

    def _document_name(self) -> str:
        """The open document's name, for a prompt about its unsaved edits (only asked while
        a document is open and modified)."""
        doc = self.document
        assert doc is not None, "a prompt about the document runs only with one open"
        return doc.display_name()

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
        self.view3d: View3D | None = None
        left_top: QWidget
        if use_gl:
            from .views.view3d import View3D
            self.view3d = View3D(self.state)
            self.view3d.pick_requested.connect(self.tools.pick3d)
            self.view3d.frame_rendered.connect(self.status_labels.frame_time)
            frustum_tool = self.tools.tools["frustum"]
            assert isinstance(frustum_tool, FrustumTool)
            frustum_tool.camera_source = self.view3d.camera_shot
            left_top = self.view3d
        else:
            placeholder = QLabel(f"3D view unavailable: {self.gl_reason}")
            placeholder.setObjectName("view3d_placeholder")
            placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
            placeholder.setWordWrap(True)
            left_top = placeholder
        self.views2d = {name: View2D(self.state, self.tools, name) for name in ("Top", "Front", "Side")}
        if self.view3d is not None:
            # a big level's brushes arrive in the 2D views a slice a turn; the 3D view's first
            # full frame of it (faces left out while its camera moved to frame the level) is
            # the heaviest, so no slice is painted in that frame
            for view in self.views2d.values():
                view.brushes.wait_for = self.view3d.full_frame_due
        for view in self.views2d.values():
            view.cursor_moved.connect(self.status_labels.cursor_moved)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(left_top)
        top.addWidget(self.views2d["Top"])
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.views2d["Front"])
        bottom.addWidget(self.views2d["Side"])
        self.splitter = QSplitter(Qt.Orientation.Vertical)
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
        first: QWidget | None = self.view3d
        if first is None:  # the placeholder in its place: first in the splitter's top row
            top = self.splitter.widget(0)
            assert isinstance(top, QSplitter)
            first = top.widget(0)
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
        R, L = Qt.DockWidgetArea.RightDockWidgetArea, Qt.DockWidgetArea.LeftDockWidgetArea
        self.docks = {
            "partition": self._dock("Partition", scroll, R, "dock_partition"),
            "overlay": self._dock("Tree overlay", _scrolled(self.overlay_panel), R, "dock_overlay"),
            "stats": self._dock("Statistics", _scrolled(self.stats_panel), R, "dock_stats"),
            # "Node" (what it shows, as the Inspect node tool names it): with "Node inspector"
            # the column's five tabs were longer than the column at any window size
            "inspector": self._dock("Node", self.inspector_panel, R, "dock_inspector"),
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
        # a tool's answer comes to the front: the node clicked with Inspect node
        st.inspected_node_changed.connect(self._show_inspected_node)
        # a first layout (its settling also fixes the column's width); the first show then fits
        # the heights to the contents (dock_fit), unless the user saved a layout of their own
        self.resizeDocks([self.docks["partition"], self.docks["overlay"], self.docks["stats"]],
                         [285, 250, 300], Qt.Orientation.Vertical)

    def _show_inspected_node(self, row: int) -> None:
        if row >= 0:
            self.docks["inspector"].raise_()

    def add_bottom_dock(self, title: str, widget, name: str) -> QDockWidget:
        """Dock a panel along the bottom (the place kept for a simulation timeline)."""
        return self._dock(title, widget, Qt.DockWidgetArea.BottomDockWidgetArea, name)

    def _doc(self, fn: Callable[[Document], object]) -> Callable[..., None]:
        """``fn`` guarded for the moment no document is open yet (a first file still loading):
        it is called with the open document."""
        def run(*args) -> None:
            doc = self.document
            if doc is not None:
                fn(doc)
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
        mb = self.menuBar()
        m = mb.addMenu("&File")
        self.act_open, self.act_save, self.act_save_as, self.act_reload, self.act_watch = \
            self.files.build_menu(m)
        self.recent_menu = self.files.recent_menu
        self.act_shot = self._action("Save screens&hot…", self.screenshot_dialog)
        m.addAction(self.act_shot)
        m.addSeparator()
        m.addAction(self._action("&Quit", self.close, QKeySequence.StandardKey.Quit))
        self._build_edit_menu(mb.addMenu("&Edit"))
        self._build_view_menu(mb.addMenu("&View"))
        self._build_tools_menu(mb.addMenu("&Tools"))
        mb.addMenu("&Help").addAction(self._action("&About", self._about))
        self._build_toolbar()

    def _build_edit_menu(self, m) -> None:
        d = self._doc
        self.act_undo = self._action("&Undo", d(lambda doc: doc.stack.undo()), QKeySequence.StandardKey.Undo)
        self.act_redo = self._action("&Redo", d(lambda doc: doc.stack.redo()), QKeySequence.StandardKey.Redo)
        add_redo_shortcut(self.act_redo)
        for act in (self.act_undo, self.act_redo):  # nothing to undo before a level is open
            act.setEnabled(False)
        self.act_delete = self._action("&Delete", d(delete_selection), QKeySequence.StandardKey.Delete)
        self.act_duplicate = self._action("D&uplicate", d(lambda doc: self.duplicate()), "Ctrl+D")
        self.act_select_all = self._action("Select &all", d(lambda doc: select(
            doc, doc.scene.indexed_ids().tolist(), "Select All")), QKeySequence.StandardKey.SelectAll)
        self.act_select_none = self._action("Select &none", d(lambda doc: self.escape()), "Escape",
                                            tip="Clear the query results and the selection")
        for a in (self.act_undo, self.act_redo, None, self.act_delete, self.act_duplicate, None,
                  self.act_select_all, self.act_select_none):
            m.addSeparator() if a is None else m.addAction(a)

    def _build_view_menu(self, m) -> None:
        st = self.state
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

    def _build_tools_menu(self, m) -> None:
        st = self.state
        self.tool_actions: dict[str, QAction] = {}
        group = QActionGroup(self)
        for name, (label, key, tip) in TOOL_NAMES.items():
            act = self._action(label, lambda checked=False, n=name: st.set_tool(n), key, checkable=True, tip=tip)
            act.setActionGroup(group)
            self.tool_actions[name] = act
            m.addAction(act)
        self.tool_actions[st.tool].setChecked(True)

    def _build_toolbar(self) -> None:
        st = self.state
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

    def _build_status_bar(self) -> None:
        self.progress_status = ProgressStatus(self.statusBar(), self.cancel_background_work)
        self.progress = self.progress_status.progress

    # ------------------------------------------------------------------ documents
    @property
    def document(self) -> Document | None:
        return self.state.document

    def open_file(self, path: str | None, background: bool | None = None) -> bool:
        """Open ``path`` (None: the demo level); see :meth:`FileController.open_file`."""
        return self.files.open_file(path, background)

    def report_error(self, message: str) -> None:
        """Show an error without blocking (a modeless message box) and log it in the status bar."""
        self.errors.append(message)
        self.statusBar().showMessage(message, 10000)
        self._error_box = self.prompts.show_error(message)

    def _on_document_replaced(self, doc: Document) -> None:
        doc.stack_changed.connect(self.update_title)
        doc.scene_changed.connect(lambda ids, kind: self.files.remember_backend(doc, kind))
        self.progress_status.follow(doc)
        doc.rebuild_failed.connect(self.report_error)  # the progress line hides on its own
        self.update_title()
        self.files.update_watch()
        self.status_labels.update()

    def update_title(self) -> None:
        doc = self.document
        if doc is None:
            return
        self.setWindowTitle(f"{doc.display_name()}{' *' if doc.is_dirty() else ''} — {APP_TITLE}")
        self.act_undo.setEnabled(doc.stack.can_undo())
        self.act_redo.setEnabled(doc.stack.can_redo())
        self.act_undo.setToolTip(f"Undo {doc.stack.undo_text()}".rstrip())
        self.act_redo.setToolTip(f"Redo {doc.stack.redo_text()}".rstrip())

    # ------------------------------------------------------------------ background work
    def cancel_background_work(self) -> None:
        """Stop reading a file and forget a rebuild in flight (the Cancel button)."""
        self.files.cancel()
        if self.document is not None:
            self.document.cancel_rebuild()
        self.progress_status.hide()

    # ------------------------------------------------------------------ edits
    def duplicate(self) -> None:
        g = self.state.grid_size
        duplicate_selection(self.document, (g, g, 0))

    def frame_all(self) -> None:
        """Frame the level in every view, with a live game's boxes when one is shown."""
        bounds = self.shown_bounds()
        for v in self.views2d.values():
            v.frame_scene(bounds)
        if self.view3d is not None:
            self.view3d.frame_scene(bounds)

    def shown_bounds(self):
        """``(lo, hi)`` around the level and the live game shown (None: the level's own)."""
        game = getattr(self.timeline.simulation, "game_bounds", None) if hasattr(self, "timeline") else None
        game = game() if callable(game) else None
        if game is None or self.document is None:
            return game
        lo, hi = self.document.scene.bounds()
        return np.minimum(lo, game[0]), np.maximum(hi, game[1])

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

    def showEvent(self, ev) -> None:
        super().showEvent(ev)
        if self._fit_docks_on_show:
            self._fit_docks_on_show = False
            from .dock_fit import fit_column
            docks = self.docks
            stacked = self.saveState()  # the column before any tabbing, for later refits
            # the overlay (with the legend of what the views show) stays in front
            fit_column(self, [docks["partition"], docks["overlay"], docks["stats"]],
                       stretching=docks["stats"], tab_under=docks["partition"],
                       tab_over=docks["overlay"])
            self._column_refit = ColumnRefit(self, stacked)  # later resizes fit it again

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        if getattr(self, "_column_refit", None) is not None:
            self._column_refit.resized()

    def closeEvent(self, ev) -> None:
        doc = self.document
        if doc is not None and doc.is_dirty() and not self.files.confirm_discard():
            ev.ignore()
            return
        self.cancel_background_work()
        from editor.warmup import stop_all

        from .workers import wait_for_workers
        stop_all()  # kernel compile processes: what they cached so far stays cached
        if self.kernel_readiness is not None:
            self.kernel_readiness.stop()
        wait_for_workers()
        self.save_layout()
        ev.accept()

    def dragEnterEvent(self, ev) -> None:
        if ev.mimeData().hasUrls():
            ev.acceptProposedAction()

    def dropEvent(self, ev) -> None:
        if self.files.open_dropped(ev.mimeData().urls()):
            ev.acceptProposedAction()

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
