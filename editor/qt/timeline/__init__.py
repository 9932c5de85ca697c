"""The simulation's GUI: timeline dock, live plots, heatmaps that follow the clock, hotspots.

:func:`install_timeline` adds everything to a :class:`~editor.qt.main_window.MainWindow`:

* a **Timeline** dock along the bottom (:class:`.timeline_panel.TimelinePanel`): play, pause,
  step, stop, speed, loop, record, a slider over the recorded frames and live plots of
  candidate/overlapping pairs, nodes, awake objects and update time per frame;
* a **Hotspots** dock (:class:`.hotspot_panel.HotspotPanel`) ranking the cells with the most
  pair tests over the sliding window, with the objects causing them (click to select and frame);
* a **Pairs** dock (:class:`.pair_panel.PairPanel`) listing the displayed frame's pairs with the
  node that tested each, or the pairs the chosen hot cell compares, overlapping or not;
* the tree overlay and the views follow the displayed frame (:class:`.live_view.LiveView`), so
  the lifespan and awake heatmaps are live;
* a **Simulation** menu (transport, *Animate level entities*, heatmap shortcuts, load/save
  recordings, import of the JSON frame-lines format) and the two docks under View ▸ Panels.

The simulation runs on its own copy of the level (:mod:`editor.model.simulation`): playing
never pushes undo commands nor marks the document dirty, and *Stop* shows the edited level.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QToolBar

from editor.model.heatmap_metrics import METRICS

from .controller import TimelineController
from .hotspot_panel import HotspotPanel
from .live_view import LiveView
from .pair_panel import PairPanel
from .timeline_panel import TimelinePanel

#: height of the timeline dock when it opens (pixels): room for the plots, not the views
TIMELINE_HEIGHT = 210

__all__ = ["install_timeline", "show_frames", "TimelineController", "TimelinePanel", "HotspotPanel",
           "PairPanel", "LiveView"]


def install_timeline(window) -> TimelineController:
    """Create the timeline and hotspot docks and the Simulation menu in ``window``.

    The pieces are kept on the window as ``window.timeline`` (the controller),
    ``window.timeline_panel``, ``window.hotspot_panel``, ``window.pair_panel`` and
    ``window.live_view``.
    """
    controller = TimelineController(window.state, window)
    window.timeline = controller
    window.live_view = LiveView(window, controller)
    window.timeline_panel = TimelinePanel(controller)
    window.hotspot_panel = HotspotPanel(window, controller)
    window.pair_panel = PairPanel(window, controller, window.hotspot_panel)
    timeline_dock = window.add_bottom_dock("Timeline", window.timeline_panel, "dock_timeline")
    hotspot_dock = window._dock("Hotspots", window.hotspot_panel, Qt.DockWidgetArea.RightDockWidgetArea,
                                "dock_hotspots")
    pair_dock = window._dock("Pairs", window.pair_panel, Qt.DockWidgetArea.RightDockWidgetArea,
                             "dock_pairs")
    window.docks["timeline"] = timeline_dock
    window.docks["hotspots"] = hotspot_dock
    window.docks["pairs"] = pair_dock
    if "queries" in window.docks:
        window.tabifyDockWidget(window.docks["queries"], hotspot_dock)
        window.tabifyDockWidget(hotspot_dock, pair_dock)
        window.docks.get("stats", hotspot_dock).raise_()
    # the dock opens with the first frame: until then the views keep the whole height
    timeline_dock.hide()
    controller.source_changed.connect(lambda: _open_timeline(window, timeline_dock, controller))
    controller.error.connect(window.report_error)
    _add_menu(window, controller, (timeline_dock, hotspot_dock, pair_dock))
    return controller


def _open_timeline(window, dock, controller) -> None:
    if controller.active and dock.isHidden():
        dock.show()
        window.resizeDocks([dock], [TIMELINE_HEIGHT], Qt.Orientation.Vertical)
        # the hotspots are what a running simulation is about; the statistics tab behind them
        # then skips its per-frame pair finding over the edited level
        window.docks["hotspots"].raise_()


def show_frames(window, frames: int) -> None:
    """Simulate ``frames`` frames and bring the timeline and hotspot docks to the front
    (screenshot mode's ``--frames``)."""
    controller = window.timeline
    controller.step(int(frames))
    _open_timeline(window, window.docks["timeline"], controller)
    window.docks["hotspots"].raise_()
    window.hotspot_panel.refresh()
    window.state.flush()


def _action(window, text, slot, shortcut=None, tip=None, checkable=False) -> QAction:
    act = QAction(text, window)
    if shortcut:
        act.setShortcut(QKeySequence(shortcut))
    if tip:
        act.setStatusTip(tip)
    act.setCheckable(checkable)
    act.triggered.connect(slot)
    return act


def _add_menu(window, controller, docks) -> None:
    bar = window.menuBar()
    help_action = next((a for a in bar.actions() if a.text().replace("&", "") == "Help"), None)
    menu = bar.addMenu("&Simulation")
    if help_action is not None:  # keep Help last
        bar.insertMenu(help_action, menu)
    window.act_play = _action(window, "▶ &Play / pause", lambda: controller.toggle(), "F9",
                              "Run the moving entities (the level itself is not edited)")
    window.act_step = _action(window, "&Step one frame", lambda: controller.request_step(), "F10")
    window.act_stop = _action(window, "S&top (back to the edited level)", lambda: controller.stop(),
                              "Shift+F9")
    for act in (window.act_play, window.act_step, window.act_stop):
        menu.addAction(act)
    toolbar = window.findChild(QToolBar, "toolbar_main")
    if toolbar is not None:
        toolbar.addSeparator()
        for act in (window.act_play, window.act_step, window.act_stop):
            toolbar.addAction(act)
    menu.addSeparator()
    window.act_animate = _animate_action(window, controller)
    menu.addAction(window.act_animate)
    loop = _action(window, "&Loop playback", controller.set_loop, checkable=True)
    loop.toggled.connect(lambda on: window.timeline_panel.loop_box.setChecked(on))
    window.timeline_panel.loop_box.toggled.connect(loop.setChecked)
    record = _action(window, "&Record frames", controller.set_record, checkable=True)
    record.setChecked(controller.record)
    record.toggled.connect(lambda on: window.timeline_panel.record_box.setChecked(on))
    window.timeline_panel.record_box.toggled.connect(record.setChecked)
    menu.addAction(loop)
    menu.addAction(record)
    menu.addSeparator()
    heat = menu.addMenu("&Heatmap")
    for metric in METRICS.values():  # every registered heatmap metric, in the table's order
        heat.addAction(_action(window, metric.label, lambda checked=False, m=metric.key:
                               window.state.set_overlay_settings(metric=m), tip=metric.legend))
    menu.addSeparator()
    menu.addAction(_action(window, "&Open recording…", lambda: _open_recording(window, controller),
                           tip="A .npz recording or a JSON frame-lines file written by a game"))
    menu.addAction(_action(window, "&Import frame lines (JSON)…",
                           lambda: _open_recording(window, controller, json_only=True)))
    menu.addAction(_action(window, "Save recording &as…", lambda: _save_recording(window, controller)))
    panels = _panels_menu(window)
    if panels is not None:
        for dock in docks:
            panels.addAction(dock.toggleViewAction())


#: QSettings key remembering the *Animate level entities* choice
ANIMATE_SETTING = "simulation/animate_level_entities"


def _animate_action(window, controller) -> QAction:
    settings = getattr(window, "settings", None)
    if settings is not None:
        controller.set_animate(str(settings.value(ANIMATE_SETTING, "true")).lower() == "true")

    def toggled(on: bool) -> None:
        controller.set_animate(on)
        if settings is not None:
            settings.setValue(ANIMATE_SETTING, "true" if on else "false")
        window.statusBar().showMessage(
            "Level entities move as their class does (monsters wander and shoot)" if on else
            "Only entities with motion keys move", 4000)

    act = QAction("&Animate level entities", window)
    act.setCheckable(True)
    act.setChecked(controller.animate)
    act.setStatusTip("Monsters wander inside their rooms and shoot, items stay; explicit motion "
                     "keys win (the level itself is not edited)")
    act.toggled.connect(toggled)
    return act


def _panels_menu(window):
    for top in window.menuBar().actions():
        if top.text().replace("&", "") == "View" and top.menu() is not None:
            for act in top.menu().actions():
                if act.menu() is not None and act.text().replace("&", "") == "Panels":
                    return act.menu()
    return None


def _open_recording(window, controller, json_only: bool = False) -> None:
    filters = "Frame lines (*.jsonl *.json *.ndjson);;All files (*)" if json_only else \
        "Recordings (*.npz *.jsonl *.json *.ndjson);;All files (*)"
    path, _ = QFileDialog.getOpenFileName(window, "Open recording", "", filters)
    if path and controller.load_recording(path):
        window.statusBar().showMessage(f"Loaded {path}: {len(controller.recording)} frames", 5000)


def _save_recording(window, controller) -> None:
    path, _ = QFileDialog.getSaveFileName(window, "Save recording", "recording.npz", "Recording (*.npz)")
    if not path:
        return
    if not path.lower().endswith(".npz"):
        path += ".npz"
    if controller.save_recording(path):
        window.statusBar().showMessage(f"Saved {path}", 4000)
