"""The Tune dialog: search the backend's parameters for the lowest per-frame cost, then apply or export.

The search is :func:`spatial.tuner.tune` (or :func:`spatial.tuner.compare_backends` for every
backend) on the workload :func:`editor.model.tuning.scene_workload` makes of the open scene. The
workload is taken on the GUI thread when the search starts; the trials then run on a
:class:`TuneWorker` thread and report back through queued signals, so the window stays live.
Stop (or closing the dialog) sets the :class:`~spatial.tuner.CancelToken` and the search ends
before its next trial or measurement stage.

Nothing touches the scene until **Apply**, which pushes one undoable ``SetSettings`` with the
chosen trial's backend and parameters (the document becomes dirty; undo restores the old ones).
**Export…** writes the chosen trial through the registered ``kind="params"`` exporters (JSON,
C header, Unreal ini, Godot settings).

The scatter plots every measured trial, cost against memory estimate; the Pareto front (no
other trial is both cheaper and smaller) is joined by a line, the defaults and the chosen trial
are marked. The table lists the cheapest trials; selecting a row chooses what Apply and Export use.
"""
from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from editor.model.commands import SetSettings
from spatial.cost import CostWeights
from spatial.tuner import CancelToken, Trial, TuneResult

from ..panels.base import push_button
from ..quiet import signals_blocked
from ..throttle import Throttle
from ..workers import _Cancellable
from .engine_choice import EngineChoice

if TYPE_CHECKING:  # imported where an engine search runs
    from spatial.engines.tuning import EngineTuning

#: colours of the trials of each backend (in name order) when several are compared
BACKEND_COLOURS = [(120, 160, 220), (230, 110, 110), (110, 210, 130), (200, 140, 230),
                   (230, 190, 90), (90, 210, 210), (240, 140, 190), (170, 170, 170)]
#: rows of the best-trials table
TABLE_ROWS = 12
ALL_BACKENDS = "*all*"
#: tooltips of the cost weights (the formula is in spatial.cost)
WEIGHT_HELP = {
    "pair_test": "cost of one candidate pair test per frame (pairs 'active')",
    "node_visit": "cost of visiting one node in a ray or frustum query",
    "object_test": "cost of testing one object's box in a ray or frustum query",
    "rays_per_frame": "ray casts a game makes per frame",
    "frusta_per_frame": "frustum (visibility) queries per frame",
    "node": "cost per node of the tree (size penalty)",
    "memory_mb": "cost per MiB of the structure's memory estimate",
    "update_ms": "cost per ms of incremental update per frame (wall clock: not reproducible)",
    "build_ms": "cost per ms of a full build (wall clock: not reproducible)",
}


class TuneWorker(_Cancellable):
    """Run one search on a worker thread.

    ``job(cancel, on_trial, on_stage)`` does the search and returns its outcome. Signals:
    ``stage(text)`` when a preparation step starts, ``trial(backend, TuneProgress)`` after every
    trial, ``done(outcome)``, ``failed(message)``.
    Cancelling sets the search's :class:`~spatial.tuner.CancelToken`; ``done`` still arrives,
    with the trials measured so far.
    """

    stage = Signal(str)
    trial = Signal(str, object)
    done = Signal(object)
    failed = Signal(str)

    def __init__(self, job) -> None:
        super().__init__()
        self._job = job
        self.token = CancelToken()

    def cancel(self) -> None:
        super().cancel()
        self.token.cancel()

    def run(self) -> None:
        try:
            outcome = self._job(self.token, lambda name, progress: self.trial.emit(name, progress),
                                self.stage.emit)
        except Exception as exc:  # a backend bug must reach the dialog, not kill the thread
            self.failed.emit(f"{type(exc).__name__}: {exc}")
            return
        self.done.emit(outcome)


@dataclasses.dataclass
class _Row:
    """One measured trial with the backend it belongs to (its cost and report are known)."""

    backend: str
    trial: Trial
    cost: float = dataclasses.field(init=False)
    memory_bytes: int = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        if self.trial.cost is None or self.trial.report is None:
            raise ValueError(f"trial {self.trial.index} of {self.backend} was not measured")
        self.cost = self.trial.cost
        self.memory_bytes = int(self.trial.report["memory_bytes"])


def _ranking(results) -> list[dict]:
    """The backends' best trials, cheapest first (a backend with no measured trial has none)."""
    ranking = []
    for r in results:
        best = r.best
        if best is None or best.cost is None:
            continue
        ranking.append({"backend": r.backend, "cost": best.cost,
                        "default_cost": r.defaults.cost if r.defaults else None,
                        "params": best.params, "trials": len(r.trials)})
    return sorted(ranking, key=lambda entry: entry["cost"])


def pareto_front(cost: np.ndarray, memory: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both cost and memory, by memory."""
    order = np.lexsort((cost, memory))
    front, best = [], math.inf
    for i in order:
        if cost[i] < best:
            front.append(i)
            best = cost[i]
    return np.array(front, dtype=np.int64)


class TuneDialog(QDialog):
    """Tune the open document's backend parameters.

    Parameters
    ----------
    document : editor.qt.document.Document
        The open level; only read until Apply.
    parent : QWidget, optional
    registry : spatial.registry.Registry, optional
        Default: the process-wide registry.
    """

    def __init__(self, document, parent=None, registry=None) -> None:
        super().__init__(parent)
        from spatial.registry import default_registry
        self.document = document
        self.registry = registry or default_registry()
        self.setObjectName("tune_dialog")
        self.setWindowTitle(f"Tune parameters — {document.display_name()}")
        self.worker: TuneWorker | None = None
        self.rows: list[_Row] = []           # every measured trial, all backends
        self.results: dict[str, TuneResult] = {}  # backend -> TuneResult of the finished search
        self.defaults: dict[str, Trial] = {}  # backend -> its defaults trial
        self.chosen: _Row | None = None
        self.errors: list[str] = []
        self.not_evaluated: dict[str, str] = {}
        self.engine_tuning: EngineTuning | None = None  # of an engine search
        self._redraw = Throttle(self._refresh, parent=self)
        self._build()
        self.resize(1180, 760)

    # ------------------------------------------------------------------ construction
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        layout.addLayout(top)
        top.addWidget(self._build_settings(), 0)
        top.addWidget(self._build_weights(), 1)
        layout.addLayout(self._build_run_row())
        layout.addWidget(self.summary)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self._build_plot())
        split.addWidget(self._build_table())
        split.setSizes([520, 620])
        layout.addWidget(split, 1)
        layout.addLayout(self._build_buttons())
        self._update_buttons()

    def _build_run_row(self) -> QHBoxLayout:
        run_row = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("tune_run")
        self.run_button.setDefault(True)
        self.run_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("tune_stop")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setFormat("")
        self.summary = QLabel("Set the budget and press Run. The scene is not changed until Apply.")
        self.summary.setObjectName("tune_summary")
        self.summary.setWordWrap(True)
        run_row.addWidget(self.run_button)
        run_row.addWidget(self.stop_button)
        run_row.addWidget(self.progress, 1)
        return run_row

    def _build_plot(self) -> QWidget:
        self.plot = pg.PlotWidget()
        self.plot.setObjectName("tune_plot")
        self.plot.setBackground("#1b1e23")
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self._memory_unit = (1024, "KiB")
        self.plot.setLabel("bottom", "memory estimate (KiB)")
        self.plot.setLabel("left", "cost per frame (work units)")
        self.plot.setTitle("Trials: cost vs memory (lower left is better)", color="#ccd")
        self.legend = legend = self.plot.addLegend(offset=(-10, 10), labelTextColor="#ccd")
        legend.setBrush(pg.mkBrush(27, 30, 35, 200))
        self._legend_backends: list[str] = []
        # PlotDataItems (not bare scatter items) so that the log axes below apply to them
        self.trial_points = pg.PlotDataItem(pen=None, symbol="o", symbolSize=7, symbolPen=None,
                                            symbolBrush=pg.mkBrush(120, 160, 220, 150), name="trial")
        # rings, so the front stays visible around the chosen star when they coincide
        self.front_line = pg.PlotDataItem(pen=pg.mkPen("#ffb020", width=2), symbol="o", symbolSize=15,
                                          symbolBrush=None, symbolPen=pg.mkPen("#ffb020", width=2),
                                          name="Pareto front")
        self.default_points = pg.PlotDataItem(pen=None, symbol="s", symbolSize=14, symbolBrush=None,
                                              symbolPen=pg.mkPen("#ffffff", width=2), name="defaults")
        self.chosen_point = pg.PlotDataItem(pen=None, symbol="star", symbolSize=13,
                                            symbolPen=pg.mkPen("#000", width=1),
                                            symbolBrush=pg.mkBrush("#40e070"), name="chosen")
        for item in (self.trial_points, self.front_line, self.default_points, self.chosen_point):
            self.plot.addItem(item)
        return self.plot

    def _build_table(self) -> QWidget:
        self.table = QTableWidget(0, 6)
        self.table.setObjectName("tune_table")
        self.table.setHorizontalHeaderLabels(["#", "backend", "cost", "vs defaults", "KiB", "parameters"])
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        for c in range(5):
            header.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(True)
        self.table.itemSelectionChanged.connect(self._on_row_selected)
        return self.table

    def _build_buttons(self) -> QHBoxLayout:
        buttons = QHBoxLayout()
        buttons.addWidget(QLabel("Format"))
        self.format_combo = QComboBox()
        self.format_combo.setObjectName("tune_format")
        for name, exporter in self.registry.exporters_of_kind("params").items():
            self.format_combo.addItem(name, name)
            self.format_combo.setItemData(self.format_combo.count() - 1, exporter.description,
                                          Qt.ItemDataRole.ToolTipRole)
        buttons.addWidget(self.format_combo)
        self.export_button = push_button(
            "Export…", self.export_dialog,
            "Write the chosen trial's parameters in the chosen format", "tune_export")
        buttons.addWidget(self.export_button)
        buttons.addStretch(1)
        self.apply_button = push_button(
            "Apply", self.apply,
            "Use the chosen trial's backend and parameters (one undo step)", "tune_apply")
        self.close_button = push_button("Close", self.reject)
        buttons.addWidget(self.apply_button)
        buttons.addWidget(self.close_button)
        return buttons

    def _build_settings(self) -> QWidget:
        box = QGroupBox("Search")
        form = QFormLayout(box)
        self.backend_combo = QComboBox()
        self.backend_combo.setObjectName("tune_backend")
        current = self.document.index.name
        self.backend_combo.addItem(f"current ({current})", current)
        for name in sorted(self.registry.backends):
            if name not in (current, "brute"):
                self.backend_combo.addItem(name, name)
        self.backend_combo.addItem("all backends (ranked)", ALL_BACKENDS)
        self.backend_combo.setToolTip("Backend whose parameters are searched; 'all backends' tunes "
                                      "each (brute force excluded) in one shared budget")
        form.addRow("Backend", self.backend_combo)
        self.engine_choice = EngineChoice(self.document.path)
        self.engine_choice.combo.currentIndexChanged.connect(self._update_buttons)
        form.addRow("Engine", self.engine_choice.combo)
        form.addRow("Units per metre", self.engine_choice.units)
        self.budget_spin = QDoubleSpinBox()
        self.budget_spin.setObjectName("tune_budget")
        self.budget_spin.setRange(0.5, 3600.0)
        self.budget_spin.setDecimals(1)
        self.budget_spin.setValue(10.0)
        self.budget_spin.setSuffix(" s")
        self.budget_spin.setToolTip("Wall-clock budget of the search (compiling kernels the first "
                                    "time comes on top)")
        form.addRow("Budget", self.budget_spin)
        self.seed_spin = QSpinBox()
        self.seed_spin.setObjectName("tune_seed")
        self.seed_spin.setRange(0, 2**31 - 1)
        self.seed_spin.setToolTip("Seed of the workload (motion, rays, frusta) and of the search")
        form.addRow("Seed", self.seed_spin)
        return box

    def _build_weights(self) -> QWidget:
        box = QGroupBox("Cost weights (cost = Σ weight × measured term, per frame)")
        grid = QGridLayout(box)
        self.weight_spins: dict[str, QDoubleSpinBox] = {}
        defaults = CostWeights()
        for k, f in enumerate(dataclasses.fields(CostWeights)):
            spin = QDoubleSpinBox()
            spin.setObjectName(f"weight_{f.name}")
            spin.setRange(0.0, 1e6)
            spin.setDecimals(3)
            spin.setValue(getattr(defaults, f.name))
            spin.setToolTip(WEIGHT_HELP.get(f.name, f.name))
            label = QLabel(f.name.replace("_", " "))
            label.setToolTip(spin.toolTip())
            row, col = divmod(k, 3)
            grid.addWidget(label, row, 2 * col)
            grid.addWidget(spin, row, 2 * col + 1)
            self.weight_spins[f.name] = spin
        return box

    # ------------------------------------------------------------------ reading the form
    def weights(self) -> CostWeights:
        return CostWeights(**{name: spin.value() for name, spin in self.weight_spins.items()})

    def set_backend_choice(self, name: str) -> None:
        """Choose a backend name, or :data:`ALL_BACKENDS`."""
        self.backend_combo.setCurrentIndex(max(0, self.backend_combo.findData(name)))

    @property
    def running(self) -> bool:
        return self.worker is not None

    # ------------------------------------------------------------------ the search
    def start(self) -> None:
        """Start a search with the form's settings (the workload is taken here, on this thread)."""
        if self.running:
            return
        from editor.model.tuning import scene_fixed_params, scene_workload
        from spatial.tuner import compare_backends, tune, warm_up

        scene = self.document.scene
        seed = self.seed_spin.value()
        budget = self.budget_spin.value()
        weights = self.weights()
        choice = self.backend_combo.currentData()
        # the workload holds copies of the scene's arrays (its IndexInput): the trials on the
        # worker thread never read the scene the user goes on editing
        workload = scene_workload(scene, seed, source=self.document.display_name())
        engine_job = self.engine_choice.job(workload, budget, seed, weights,
                                            self.document.display_name())
        if engine_job is not None:
            job = engine_job
        elif choice == ALL_BACKENDS:
            classes = [cls for name, cls in sorted(self.registry.backends.items()) if name != "brute"]

            def job(cancel, on_trial, on_stage):
                # compile every backend's kernels before the clock starts, as tune() does for
                # one backend: otherwise the first trial of each pays for its compiler
                for cls in classes:
                    if cancel.cancelled:
                        break
                    on_stage(f"compiling {cls.name}…")
                    warm_up(cls, workload)
                return compare_backends(classes, workload, budget_s=budget, seed=seed, weights=weights,
                                        cancel=cancel, on_trial=on_trial)
        else:
            cls = self.registry.backend(choice)
            fixed = scene_fixed_params(scene, cls)

            def job(cancel, on_trial, on_stage):
                return tune(cls, workload, budget_s=budget, seed=seed, weights=weights, cancel=cancel,
                            on_trial=lambda p: on_trial(cls.name, p), fixed=fixed)

        self.rows, self.results, self.defaults, self.chosen = [], {}, {}, None
        self.not_evaluated, self.engine_tuning = {}, None
        self._budget = budget
        self._scene_info = {"source": self.document.path or "demo",
                            "objects": int(len(workload.ids))}
        self._refresh()
        self.worker = TuneWorker(job)
        self.worker.stage.connect(self.progress.setFormat)
        self.worker.trial.connect(self._on_trial)
        self.worker.done.connect(self._on_done)
        self.worker.failed.connect(self._on_failed)
        self.progress.setValue(0)
        self.progress.setFormat("compiling and measuring the defaults…")
        self.summary.setText(f"Workload: {workload.description}")
        self.worker.start()
        self._update_buttons()

    def stop(self) -> None:
        """Cancel the running search; the trials measured so far stay."""
        if self.worker is not None:
            self.worker.cancel()
            self.progress.setFormat("stopping…")

    def _on_trial(self, backend: str, progress) -> None:
        if self.worker is None:
            return
        trial = progress.trial
        if trial.phase == "default":
            self.defaults[backend] = trial
        if trial.ok:
            self.rows.append(_Row(backend, trial))
        fraction = min(progress.elapsed_s / max(progress.budget_s, 1e-9), 1.0)
        if self.backend_combo.currentData() == ALL_BACKENDS:
            self.progress.setFormat(f"{backend}: trial {trial.index}  —  {len(self.rows)} measured")
        else:
            fraction = min(progress.elapsed_s / self._budget, 1.0)
            best = progress.best.cost if progress.best is not None else float("nan")
            self.progress.setFormat(f"trial {trial.index}  —  best {best:,.1f}  —  %p%")
        self.progress.setValue(int(fraction * 1000))
        # trials can finish faster than the plot and table redraw: one redraw per burst
        self._redraw.request()

    def _on_done(self, outcome) -> None:
        from spatial.engines.tuning import EngineTuning
        from spatial.tuner import Comparison
        self.worker = None
        if isinstance(outcome, EngineTuning):
            self.engine_tuning = outcome
            self.results = {outcome.result.backend: outcome.result}
        elif isinstance(outcome, Comparison):
            self.results = {r.backend: r for r in outcome.results}
            self.not_evaluated = dict(outcome.not_evaluated)
        else:
            self.results = {outcome.backend: outcome}
        for result in self.results.values():  # the final records (timeouts included)
            if result.defaults is not None:
                self.defaults[result.backend] = result.defaults
        self.rows = [_Row(r.backend, t) for r in self.results.values() for t in r.trials if t.ok]
        self.chosen = _tie_resolved_choice(self.rows, self.results)
        self.progress.setValue(1000)
        self.progress.setFormat(f"done: {len(self.rows)} trials measured")
        self._redraw.run_now()
        self._update_summary(outcome)
        self._update_buttons()

    def _on_failed(self, message: str) -> None:
        self.worker = None
        self.errors.append(message)
        self.progress.setFormat("failed")
        self.summary.setText(f"The search failed: {message}")
        self._update_buttons()

    def _update_summary(self, outcome) -> None:
        parts = []
        stopped = any(r.cancelled for r in self.results.values())
        if self.chosen is not None:
            base = self.defaults.get(self.chosen.backend)
            best = self.chosen.cost
            text = f"Best: {self.chosen.backend}, cost {best:,.1f}"
            if base is not None and base.ok and base.cost:
                saved = (1 - best / base.cost) * 100
                text += f" against the defaults' {base.cost:,.1f} " + \
                    (f"({saved:.1f} % cheaper)" if saved > 0 else "(the defaults are the best found)")
            parts.append(text)
        else:
            parts.append("No trial could be measured; raise the budget.")
        for result in self.results.values():  # knobs that made no difference
            parts += [entry["text"] for entry in result.plateau]
        if self.engine_tuning is not None:
            parts += self.engine_tuning.settings.notes
        if stopped:
            parts.append("stopped before the budget ran out")
        if self.not_evaluated:
            parts.append("not evaluated: " + "; ".join(f"{k} ({v})" for k, v in self.not_evaluated.items()))
        self.summary.setText(" — ".join(parts))

    # ------------------------------------------------------------------ display
    def _refresh(self) -> None:
        rows = self.rows
        if not rows:
            for item in (self.trial_points, self.front_line, self.default_points, self.chosen_point):
                item.setData([], [])
            self.table.setRowCount(0)
            return
        cost = np.array([r.cost for r in rows])
        self._choose_memory_unit(max(r.memory_bytes for r in rows))
        memory = np.array([self._memory(r) for r in rows])
        backends = sorted({r.backend for r in rows})
        brushes = {b: pg.mkBrush(*BACKEND_COLOURS[k % len(BACKEND_COLOURS)], 170)
                   for k, b in enumerate(backends)}
        self.trial_points.setData(memory, cost, symbolBrush=[brushes[r.backend] for r in rows])
        self._update_backend_legend(backends if len(backends) > 1 else [], brushes)
        # a few pathological trials can cost 100x the rest: log axes keep the good ones apart
        self.plot.setLogMode(x=_wide(memory), y=_wide(cost))
        self._set_header(3, "vs its defaults" if len(backends) > 1 else "vs defaults")
        front = pareto_front(cost, memory)
        self.front_line.setData(memory[front], cost[front])
        base = [r for r in rows if r.trial.phase == "default"]
        self.default_points.setData([self._memory(r) for r in base], [r.cost for r in base])
        if self.chosen is not None:
            self.chosen_point.setData([self._memory(self.chosen)], [self.chosen.cost])
        self._fill_table()

    def _update_backend_legend(self, backends: list[str], brushes: dict) -> None:
        """One legend entry per backend when several share the plot."""
        if backends == self._legend_backends:
            return
        for name in self._legend_backends:
            self.legend.removeItem(name)
        if backends and not self._legend_backends:
            self.legend.removeItem(self.trial_points)  # the colours below name the backends
        elif self._legend_backends and not backends:
            self.legend.addItem(self.trial_points, "trial")
        for name in backends:
            self.legend.addItem(pg.ScatterPlotItem(size=7, pen=None, brush=brushes[name]), name)
        self.legend.setColumnCount(2 if len(backends) > 3 else 1)
        self._legend_backends = list(backends)

    def _choose_memory_unit(self, largest_bytes: int) -> None:
        unit = (1024, "KiB") if largest_bytes < 4 * 2**20 else (2**20, "MiB")
        if unit != self._memory_unit:
            self._memory_unit = unit
            self.plot.setLabel("bottom", f"memory estimate ({unit[1]})")
            self._set_header(4, unit[1])

    def _set_header(self, column: int, text: str) -> None:
        header = self.table.horizontalHeaderItem(column)
        if header is not None:  # the table is made with its header labels
            header.setText(text)

    def _memory(self, row: _Row) -> float:
        return row.memory_bytes / self._memory_unit[0]

    def best_rows(self) -> list[_Row]:
        """The cheapest measured trials, best first (what the table shows)."""
        return sorted(self.rows, key=lambda r: (r.cost, r.backend, r.trial.index))[:TABLE_ROWS]

    def _fill_table(self) -> None:
        best = self.best_rows()
        with signals_blocked(self.table):
            self.table.setRowCount(len(best))
            selected = -1
            for k, row in enumerate(best):
                t = row.trial
                base = self.defaults.get(row.backend)
                versus = ""
                if base is not None and base.ok and base.cost:
                    versus = "defaults" if t is base or t.phase == "default" else \
                        f"{(row.cost / base.cost - 1) * 100:+.1f} %"
                changed = {k2: v for k2, v in t.params.items()
                           if base is None or base.params.get(k2) != v}
                params = ", ".join(f"{k2}={_fmt(v)}" for k2, v in changed.items()) or "(defaults)"
                cells = [str(t.index), row.backend, f"{row.cost:,.1f}", versus, f"{self._memory(row):,.1f}", params]
                for c, text in enumerate(cells):
                    item = QTableWidgetItem(text)
                    if c in (0, 2, 3, 4):
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    if c == 5:
                        item.setToolTip("\n".join(f"{k2} = {_fmt(v)}" for k2, v in t.params.items()))
                    self.table.setItem(k, c, item)
                if self.chosen is not None and row.backend == self.chosen.backend and t is self.chosen.trial:
                    selected = k
            if selected >= 0:
                self.table.selectRow(selected)
            self.table.resizeRowsToContents()

    def _on_row_selected(self) -> None:
        picked = self.table.selectionModel().selectedRows()
        if not picked or self.running:
            return
        best = self.best_rows()
        if picked[0].row() < len(best):
            self.chosen = best[picked[0].row()]
            self.chosen_point.setData([self._memory(self.chosen)], [self.chosen.cost])
            self._update_buttons()

    def _update_buttons(self) -> None:
        ready = not self.running and self.chosen is not None
        self.run_button.setEnabled(not self.running)
        self.stop_button.setEnabled(self.running)
        engine = self.engine_tuning is not None
        # an engine's knobs are exported as its settings, never applied to our backend
        self.apply_button.setEnabled(ready and not engine)
        self.export_button.setEnabled(ready and (engine or self.format_combo.count() > 0))
        self.format_combo.setEnabled(not engine)
        for w in (self.budget_spin, self.seed_spin, *self.weight_spins.values()):
            w.setEnabled(not self.running)
        self.engine_choice.set_enabled(not self.running)
        self.backend_combo.setEnabled(not self.running and not self.engine_choice.name())

    # ------------------------------------------------------------------ apply / export
    def apply(self) -> bool:
        """Push one undoable ``SetSettings`` with the chosen trial; True if anything changed."""
        if self.chosen is None or self.running:
            return False
        row = self.chosen
        command = SetSettings(backend=row.backend, params=dict(row.trial.params),
                              text=f"Apply tuned {row.backend} parameters")
        try:
            changed = self.document.push(command)
        except Exception as exc:
            self.errors.append(str(exc))
            self.summary.setText(f"Could not apply: {exc}")
            return False
        self.summary.setText(f"Applied {row.backend} trial {row.trial.index} (Edit → Undo restores "
                             "the previous parameters)." if changed else
                             "The document already uses these parameters.")
        return changed

    def export_document(self) -> dict:
        """The params JSON document of the chosen trial (see :mod:`plugins.param_exporters`)."""
        from editor.model.tuning import scene_content_hash
        from spatial.tuned_params import tuned_params_document

        row = self.chosen
        if row is None:
            raise ValueError("no trial was measured: there is nothing to export")
        result = dataclasses.replace(self.results[row.backend], best=row.trial)
        comparison = None
        if len(self.results) > 1:
            comparison = {"ranking": _ranking(self.results.values()), "not_evaluated": self.not_evaluated}
        scene = {**self._scene_info, "hash": scene_content_hash(self.document.scene)}
        return tuned_params_document(result, scene, comparison)

    def export_to(self, path: str, fmt: str | None = None) -> None:
        """Write the chosen trial to ``path`` in ``fmt`` (default: the format combo's); after an
        engine search, in that engine's own settings syntax."""
        if self.engine_tuning is not None:
            if self.chosen is None:  # as export_document says when nothing was measured
                raise ValueError("no trial was measured: there is nothing to export")
            self.engine_choice.export(self.engine_tuning, self.chosen.trial, path)
            return
        name = fmt or self.format_combo.currentData()
        self.registry.exporters[name].save(self.export_document(), path)

    def export_dialog(self) -> None:
        if self.chosen is None:
            return
        if self.engine_tuning is not None:
            profile = self.engine_tuning.settings.profile
            path, _ = QFileDialog.getSaveFileName(self, f"Export {profile.title} settings",
                                                  f"{profile.name}-settings{profile.suffix}",
                                                  f"{profile.syntax} (*{profile.suffix})")
            if path:
                self._export_reporting(path)
            return
        exporter = self.registry.exporters[self.format_combo.currentData()]
        patterns = " ".join(exporter.patterns)
        suffix = exporter.patterns[0].lstrip("*")
        path, _ = QFileDialog.getSaveFileName(self, "Export tuned parameters",
                                              f"{self.chosen.backend}-params{suffix}",
                                              f"{exporter.description} ({patterns})")
        if path:
            self._export_reporting(path)

    def _export_reporting(self, path: str) -> None:
        try:
            self.export_to(path)
        except Exception as exc:
            self.errors.append(str(exc))
            self.summary.setText(f"Could not export: {exc}")
            return
        what = self.engine_tuning.settings.profile.syntax if self.engine_tuning is not None else \
            self.format_combo.currentText()
        self.summary.setText(f"Exported {what} to {path}")

    # ------------------------------------------------------------------ closing
    def done(self, code: int) -> None:  # noqa: D401 - Qt override: closing cancels a search
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.cancel()
            # its late results are dropped; workers.py keeps the thread alive until it ends
            for signal in (worker.stage, worker.trial, worker.done, worker.failed):
                signal.disconnect()
        super().done(code)


def _tie_resolved_choice(rows: list[_Row], results: dict) -> _Row | None:
    """The row of the cheapest result's ``best`` (the tuner's tie-resolved pick), else the
    cheapest row."""
    finished = [r for r in results.values() if r.best is not None and r.best.cost is not None]
    if finished:
        best = min(finished, key=lambda r: r.best.cost)
        for row in rows:
            if row.backend == best.backend and row.trial is best.best:
                return row
    return min(rows, key=lambda row: row.cost, default=None)  # row.cost: its trial's cost


def _wide(values: np.ndarray) -> bool:
    """True when positive ``values`` span enough to read better on a log axis."""
    return bool(len(values) > 1 and values.min() > 0 and values.max() / values.min() > 10)


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
