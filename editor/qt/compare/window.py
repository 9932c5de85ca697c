"""The compare window (View → Compare…): two sides of the open level, linked, measured.

Top: the two sides' backends and parameters, the overlay metric both views colour by, the
difference metric, and *Measure*. Middle: the two top views, each showing the level with its
side's tree, on one colour scale (said under them); camera, selection, the tools' ray and
frustum and the timeline's frame are shared. While the timeline shows a frame, the per-frame
figures of A and B sit under the views. Bottom: the A, B, B/A table of the ``compare``
command's figures, the A minus B heatmap and the objects whose node counts differ most.

The sides' trees are built on worker threads (:mod:`.side_build`); each view says
"building…" until its tree arrives, and the measurement starts once both are shown.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QSplitter, QVBoxLayout, QWidget

from editor.model import heatmap_metrics as heatmaps
from editor.model.commands import SetSelection
from editor.model.compare.difference import REGION_METRICS
from editor.model.compare.sides import check_side, default_sides, document_record
from spatial.errors import PartitionStudioError

from ..views.view2d import View2D
from .controls import SideControls
from .difference_view import CostliestList, DifferencePlot, FramePlot, difference
from .frame_figures import FrameFiguresPanel
from .links import QueryLink, link_cameras
from .side_build import SIDE_VIEW, SideBuilds
from .side_state import SharedScale, SideState
from .table import CompareTable
from .timeline_follow import TimelineFollower
from .worker import CompareWorker, PrepareWorker

REGION_LABELS = {"query_visits": "query visits", "pair_tests": "pair tests"}


class CompareWindow(QWidget):
    """See the module docstring. ``measured(report dict)`` after each measurement."""

    measured = Signal(object)

    def __init__(self, main_window) -> None:
        super().__init__(main_window, Qt.WindowType.Window)
        self.setObjectName("compare_window")
        self.setWindowTitle("Compare partitions")
        self.main = main_window
        self.scale = SharedScale()
        a, b = default_sides(main_window.document.scene.settings)
        self.controls = [SideControls("A", a), SideControls("B", b)]
        self.sides = [SideState(c.spec(), self.scale, self) for c in self.controls]
        self.views = [View2D(side, main_window.tools, SIDE_VIEW) for side in self.sides]
        for view, name in zip(self.views, ("compare_view_a", "compare_view_b")):
            view.setObjectName(name)
        link_cameras(self.views)
        self.query_link = QueryLink(main_window.state, self.sides)
        self.scale_label = QLabel()
        self.scale_label.setObjectName("compare_scale")
        self.status = QLabel()
        self.status.setObjectName("compare_status")
        self.worker: CompareWorker | None = None
        self.preparing: PrepareWorker | None = None
        self.comparison = None
        self.builds = SideBuilds(self.sides, self)
        # the window paints once before a worker competes with it for the interpreter lock:
        # the first paint's many short calls into Python would each wait for the lock
        self.builds.hold()
        self.builds.built.connect(self._on_side_built)
        self.builds.failed.connect(self._on_side_failed)
        self.frame_figures = FrameFiguresPanel()
        controller = getattr(main_window, "timeline", None)
        self.follower = TimelineFollower(controller, self.sides, self.views, self) \
            if controller is not None else None
        if self.follower is not None:
            self.follower.figures_changed.connect(self._on_frame_figures)
            self.follower.problem.connect(self.status.setText)
        self._build()
        main_window.state.document_replaced.connect(self._on_document_replaced)
        self.apply_sides()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        bar = QHBoxLayout()
        for c in self.controls:
            bar.addWidget(c, 1)
        self.metric_box = QComboBox()
        self.metric_box.setObjectName("compare_metric")
        for key, entry in heatmaps.METRICS.items():
            self.metric_box.addItem(entry.label, key)
        self.metric_box.setCurrentIndex(self.metric_box.findData("pair_tests"))
        self.metric_box.currentIndexChanged.connect(self._on_metric)
        bar.addWidget(QLabel("colour:"))
        bar.addWidget(self.metric_box)
        self.region_metric = QComboBox()
        self.region_metric.setObjectName("compare_region_metric")
        for key in REGION_METRICS:
            self.region_metric.addItem(REGION_LABELS[key], key)
        self.region_metric.currentIndexChanged.connect(lambda _i: self._show_difference())
        bar.addWidget(QLabel("difference:"))
        bar.addWidget(self.region_metric)
        self.measure_button = QPushButton("Measure")
        self.measure_button.setObjectName("compare_measure")
        self.measure_button.clicked.connect(self.apply_sides)
        bar.addWidget(self.measure_button)
        views = QSplitter(Qt.Orientation.Horizontal)
        for view in self.views:
            views.addWidget(view)
        self.table = CompareTable()
        self.diff_plot = DifferencePlot()
        self.frame_plot = FramePlot()
        middle = QSplitter(Qt.Orientation.Vertical)
        middle.addWidget(self.diff_plot)
        middle.addWidget(self.frame_plot)
        middle.setSizes([3, 2])
        self.costliest = CostliestList()
        self.costliest.itemActivated.connect(self._select_object)
        self.costliest.itemClicked.connect(self._select_object)
        bottom = QSplitter(Qt.Orientation.Horizontal)
        for w in (self.table, middle, self.costliest):
            bottom.addWidget(w)
        bottom.setStretchFactor(0, 0)  # the table keeps its width; the plots and list share
        bottom.setStretchFactor(1, 3)
        bottom.setStretchFactor(2, 2)
        bottom.setSizes([400, 500, 340])
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(views)
        body.addWidget(self.frame_figures)  # hidden until the sides show a timeline frame
        body.addWidget(bottom)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 0)
        body.setStretchFactor(2, 2)
        body.setSizes([560, 150, 380])
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(body, 1)
        info = QHBoxLayout()
        info.addWidget(self.scale_label, 1)
        info.addWidget(self.status, 1)
        layout.addLayout(info)
        for side in self.sides:
            side.overlay_changed.connect(lambda _g: self._show_scale())
        self.resize(1400, 900)

    # ------------------------------------------------------------------ sides
    @property
    def state(self):
        """The editor's state (screenshot mode flushes it before a grab)."""
        return self.main.state

    #: no OpenGL view in this window (screenshot mode composites GL views only)
    view3d = None

    def choose(self, a: str | None = None, b: str | None = None) -> None:
        """Pick the backends of A and/or B in the boxes and measure again."""
        for controls, name in zip(self.controls, (a, b)):
            if name is not None:
                index = controls.backend.findData(name)
                if index < 0:
                    raise PartitionStudioError(f"no backend named '{name}'")
                controls.backend.setCurrentIndex(index)
        self.apply_sides()

    def flush(self) -> None:
        """Bring both sides' arrays up to date now (before a grab)."""
        self.main.state.flush()
        for side in self.sides:
            side.flush()

    def apply_sides(self) -> None:
        """Rebuild both sides from the controls and measure them. A backend whose kernels
        were never compiled is prepared first on a worker (and a child process), as the
        editor's own backend switch is."""
        from editor.warmup import needs_warm_up

        specs = []
        scene = self.main.document.scene
        # what the sides' trees are built over, and measured on
        record = document_record(scene, self.main.document.display_name())
        for name, controls in zip("AB", self.controls):
            try:  # a bad name or value: one line, and the sides on show stay as they are
                spec = controls.spec()
                check_side(scene, spec, record)
            except PartitionStudioError as exc:
                self.status.setText(f"{name}: {exc}")
                return
            specs.append(spec)
        cold = sorted({s.backend for s in specs if needs_warm_up(s.backend)})
        if self.preparing is not None:
            self.preparing.cancel()
            self.preparing = None
        if cold:
            self.preparing = PrepareWorker(cold, self.main.document.index.name)
            # the document may be edited while the kernels compile: a fresh snapshot then
            self.preparing.ready.connect(lambda: self._build_sides(specs))
            self.status.setText(f"preparing {', '.join(cold)} (first use: compiling)…")
            self.preparing.start()
            return
        self._build_sides(specs, record)

    def _build_sides(self, specs, record=None) -> None:
        """Build both sides on workers; each view says so until its tree is shown."""
        self.preparing = None
        if self.worker is not None:  # the sides it measured are about to go
            self.worker.cancel()
            self.worker = None
        metric = self.metric_box.currentData()
        for side, spec, view, name in zip(self.sides, specs, self.views, "AB"):
            side.overlay_settings = type(side.overlay_settings)(metric=metric)
            view.title.setText(f"{name}: {spec.label()} — building…")
        self.status.setText("building the trees of A and B…")
        self.builds.start(self.main.document, specs, record)

    def _on_side_built(self, number: int) -> None:
        side, view = self.sides[number], self.views[number]
        view.title.setText(f"{'AB'[number]}: {side.spec.label()}")
        if self.builds.busy:
            return  # the other side is still building
        self.frame_figures.set_names(*(s.spec.label() for s in self.sides))
        self.query_link.sync()
        if self.follower is not None:
            self.follower.restart()
        # next turn: the new trees are painted first, before the measurement's worker loads
        # kernels, which holds the interpreter lock for a while
        QTimer.singleShot(0, self.measure)

    def _on_frame_figures(self, figures) -> None:
        if self.follower is not None:
            self.frame_figures.show_figures(figures, self.follower.history)

    def _on_side_failed(self, number: int, text: str) -> None:
        # e.g. a plugin's build raised: one line, and the side keeps what it showed
        side, name = self.sides[number], "AB"[number]
        shown = side.spec.label() if side.document is not None else "nothing"
        self.views[number].title.setText(f"{name}: {shown}")
        self.status.setText(f"{name}: {text}")

    def measure(self) -> None:
        """Measure both sides on a worker thread; the table fills when it is done."""
        if self.worker is not None:
            self.worker.cancel()
        record = self.builds.current_record() or \
            document_record(self.main.document.scene, self.main.document.display_name())
        self.record = record
        a, b = self.sides
        self.worker = CompareWorker(record, a.spec, b.spec, recording=self.timeline_recording())
        self.worker.done.connect(self._on_measured)
        self.worker.failed.connect(lambda text: self.status.setText(f"measurement failed: {text}"))
        self.status.setText("measuring both sides…")
        self.worker.start()

    def timeline_recording(self):
        """The editor's recording (a simulation run or a loaded one), when it has frames to
        play; the sides then replay it instead of the seeded drift."""
        timeline = getattr(self.main, "timeline", None)
        recording = timeline.recording if timeline is not None else None
        return recording if recording is not None and len(recording) > 1 else None

    def _on_measured(self, comparison) -> None:
        self.comparison = comparison
        report = comparison.as_dict()
        self.table.show_report(report)
        self.frame_plot.show_frames(report)
        self._show_difference()
        a, b = (s.spec.backend for s in self.sides)
        self.costliest.show_costs(self.main.document.scene, self.sides[0].index,
                                  self.sides[1].index, a, b)
        self.status.setText(f"measured on {comparison.queries.describe()['rays']} rays, "
                            f"{len(comparison.queries.frusta)} frusta, "
                            f"{len(comparison.queries.box_lo)} boxes; {comparison.frames_source}")
        self.measured.emit(report)

    def _show_difference(self) -> None:
        if self.comparison is None or self.sides[0].index is None:
            return
        metric = self.region_metric.currentData()
        grid = difference(self.sides[0].index, self.sides[1].index, self.comparison.queries,
                          self.record, metric)
        self.diff_plot.show_grid(grid, REGION_LABELS[metric])

    def _show_scale(self) -> None:
        metric = self.metric_box.currentData()
        label = heatmaps.metric(metric).label
        self.scale_label.setText(f"colour: {label}, one scale for A and B: "
                                 f"{self.scale.vmin:,.0f} … {self.scale.vmax:,.0f}")

    def _on_metric(self, _index: int) -> None:
        for side in self.sides:
            side.set_overlay_settings(metric=self.metric_box.currentData())

    def _select_object(self, item) -> None:
        oid = item.data(256)
        if oid is not None and oid in self.main.document.scene:
            self.main.document.push(SetSelection([oid]))

    def _on_document_replaced(self, _document) -> None:
        self.apply_sides()

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        if self.builds.held:
            QTimer.singleShot(0, self.builds.release)

    def closeEvent(self, event) -> None:
        for worker in (self.worker, self.preparing):
            if worker is not None:
                worker.cancel()
        self.builds.close()
        if self.follower is not None:
            self.follower.close()
        self.query_link.close()
        self.main.state.document_replaced.disconnect(self._on_document_replaced)
        for side in self.sides:
            side.detach()
        super().closeEvent(event)


def open_compare(main_window) -> CompareWindow:
    """Show the compare window of ``main_window`` (made on first use)."""
    window = getattr(main_window, "compare_window", None)
    if window is None or not window.isVisible():
        window = CompareWindow(main_window)
        main_window.compare_window = window
    window.show()
    window.raise_()
    return window
