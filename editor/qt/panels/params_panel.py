"""Backend chooser and parameter editor, built from the backend's ``Params`` specs.

Every spec becomes a widget with its bounds, unit (suffix) and help (tooltip): an int spin
box, a float spin box, a combo for choices, a check box for flags. A change pushes the undoable
``SetSettings`` command (consecutive changes of one field merge into one undo step); the
document rebuilds the index from it. Model changes update the widgets with signals blocked.
"""
from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from editor.model import ChangeKind
from spatial.params import ParamSpec, param_specs

from ..quiet import signals_blocked
from .base import form_host


def _decimals(spec) -> int:
    lo = spec.lo if spec.lo is not None else 0.0
    if isinstance(spec.default, float) and 0 < abs(spec.default) < 1:
        return max(3, int(-math.floor(math.log10(abs(spec.default)))) + 2)
    if lo and 0 < abs(lo) < 0.01:
        return 6
    return 3


class ParamsPanel(QWidget):
    """Backend combo + one row per parameter."""

    def __init__(self, state, registry=None, parent=None) -> None:
        super().__init__(parent)
        from spatial.registry import default_registry
        self.state = state
        self.registry = registry or default_registry()
        self.setObjectName("params_panel")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.backend_combo = QComboBox()
        self.backend_combo.setObjectName("backend_combo")
        self.backend_combo.setToolTip("Spatial index backend (every registered backend that suits "
                                      "the level; a Doom map adds its own shipped tree)")
        # until a level is open there is no backend to show: say so rather than list the first
        self.backend_combo.addItem("loading the level…", None)
        self.backend_combo.setEnabled(False)
        self.backend_combo.currentIndexChanged.connect(self._on_backend_chosen)
        row = QHBoxLayout()
        row.addWidget(QLabel("Backend"))
        row.addWidget(self.backend_combo, 1)
        layout.addLayout(row)
        self.description = QLabel()
        self.description.setWordWrap(True)
        self.description.setStyleSheet("color: #9aa;")
        layout.addWidget(self.description)
        self.form_host, self.form = form_host()
        layout.addWidget(self.form_host)
        self.reset_button = QPushButton("Defaults")
        self.reset_button.setToolTip("Reset every parameter of this backend to its default")
        self.reset_button.clicked.connect(self._reset)
        layout.addWidget(self.reset_button)
        layout.addStretch(1)
        self.widgets: dict[str, QWidget] = {}
        self._specs: list[ParamSpec] = []
        self._backend: str | None = None
        state.document_replaced.connect(self._on_document_replaced)

    # ------------------------------------------------------------------ model -> widgets
    def _fill_backends(self, metadata: dict) -> None:
        """List the backends that suit a document with ``metadata`` (see ``suits_source``)."""
        with signals_blocked(self.backend_combo):
            self.backend_combo.clear()
            for name in sorted(self.registry.backends):
                cls = self.registry.backends[name]
                if not cls.suits_source(metadata):
                    continue
                self.backend_combo.addItem(name, name)
                self.backend_combo.setItemData(self.backend_combo.count() - 1,
                                               getattr(cls, "description", ""), Qt.ItemDataRole.ToolTipRole)

    def _on_document_replaced(self, document) -> None:
        self._fill_backends(document.scene.settings.metadata)
        self.backend_combo.setEnabled(True)
        document.scene_changed.connect(self._on_scene_changed)
        document.index_changed.connect(self._sync_from_model)
        self._sync_from_model()

    def _on_scene_changed(self, ids, kind) -> None:
        if kind & ChangeKind.SETTINGS:
            self._sync_from_model()

    def _sync_from_model(self) -> None:
        doc = self.state.document
        index = doc.index
        name = index.name
        with signals_blocked(self.backend_combo):
            self.backend_combo.setCurrentIndex(max(0, self.backend_combo.findData(name)))
        self.description.setText(getattr(type(index), "description", ""))
        if name != self._backend:
            self._build_form(type(index))
        for spec in self._specs:
            self._set_widget(spec, getattr(index.params, spec.name))

    def _build_form(self, cls) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        self.widgets.clear()
        self._backend = cls.name
        self._specs = param_specs(cls.Params)
        for spec in self._specs:
            w = self._make_widget(spec)
            w.setObjectName(f"param_{spec.name}")
            tip = spec.help + (f" [{spec.unit}]" if spec.unit else "")
            if spec.lo is not None or spec.hi is not None:
                tip += f"\nRange {spec.lo} .. {spec.hi}; default {spec.default}"
            w.setToolTip(tip)
            label = QLabel(spec.name.replace("_", " "))
            label.setToolTip(tip)
            self.form.addRow(label, w)
            self.widgets[spec.name] = w
        if not self._specs:
            self.form.addRow(QLabel("This backend has no parameters."))

    def _make_widget(self, spec) -> QWidget:
        if spec.choices:
            combo = QComboBox()
            for c in spec.choices:
                combo.addItem(str(c), c)
            combo.currentIndexChanged.connect(lambda _=0, s=spec: self._on_edited(s))
            return combo
        if spec.kind is bool:
            box = QCheckBox()
            box.toggled.connect(lambda _=False, s=spec: self._on_edited(s))
            return box
        if spec.kind is int:
            spin = QSpinBox()
            spin.setRange(int(spec.lo) if spec.lo is not None else -2**31 + 1,
                          int(min(spec.hi, 2**31 - 1)) if spec.hi is not None else 2**31 - 1)
            if spec.unit:
                spin.setSuffix(f" {spec.unit}")
            spin.setKeyboardTracking(False)
            spin.valueChanged.connect(lambda _=0, s=spec: self._on_edited(s))
            return spin
        if spec.kind is float:
            real = QDoubleSpinBox()
            real.setDecimals(_decimals(spec))
            real.setRange(spec.lo if spec.lo is not None else -1e12, spec.hi if spec.hi is not None else 1e12)
            span = (spec.hi - spec.lo) if spec.lo is not None and spec.hi is not None else 10.0
            real.setSingleStep(0.1 if span <= 10 else (1.0 if span <= 1000 else max(abs(spec.default), 1.0)))
            if spec.unit:
                real.setSuffix(f" {spec.unit}")
            real.setKeyboardTracking(False)
            real.valueChanged.connect(lambda _=0.0, s=spec: self._on_edited(s))
            return real
        line = QLineEdit()
        line.editingFinished.connect(lambda s=spec: self._on_edited(s))
        return line

    def _set_widget(self, spec, value) -> None:
        w = self.widgets.get(spec.name)
        if w is None:
            return
        with signals_blocked(w):
            if isinstance(w, QComboBox):
                w.setCurrentIndex(max(0, w.findData(value)))
            elif isinstance(w, QCheckBox):
                w.setChecked(bool(value))
            elif isinstance(w, (QSpinBox, QDoubleSpinBox)):
                w.setValue(value)
            elif isinstance(w, QLineEdit):
                w.setText(str(value))

    def _value(self, spec):
        w = self.widgets[spec.name]
        if isinstance(w, QComboBox):
            return w.currentData()
        if isinstance(w, QCheckBox):
            return w.isChecked()
        if isinstance(w, (QSpinBox, QDoubleSpinBox)):
            return w.value()
        assert isinstance(w, QLineEdit), "_make_widget makes no other kind"
        return w.text()

    # ------------------------------------------------------------------ widgets -> commands
    def current_values(self) -> dict:
        return {spec.name: self._value(spec) for spec in self._specs}

    def _on_edited(self, spec) -> None:
        self.set_param(spec.name, self._value(spec))

    def set_param(self, name: str, value) -> None:
        """Change one parameter through the undoable settings command."""
        doc = self.state.document
        if self._backend is None:
            return  # no document shown yet: there is no form to edit
        values = dict(doc.scene.settings.params) if doc.scene.settings.backend == self._backend else {}
        values[name] = value
        try:  # the command parses and checks them, once, and the document keeps the result
            doc.push(doc.settings_command(backend=self._backend, params=values, text=f"Set {name} = {value}",
                                          merge_id=("param", self._backend, name)))
        except Exception as exc:
            self.state.status_message.emit(f"Parameter {name}: {exc}")
            self._sync_from_model()

    def _on_backend_chosen(self, i: int) -> None:
        name = self.backend_combo.itemData(i)
        self.choose_backend(name)

    def choose_backend(self, name: str) -> None:
        doc = self.state.document
        if doc is None or name is None or name == doc.index.name:
            return
        try:
            doc.push(doc.settings_command(backend=name, params={}, text=f"Use {name} backend"))
        except Exception as exc:
            self.state.status_message.emit(f"Backend {name}: {exc}")
            self._sync_from_model()

    def _reset(self) -> None:
        doc = self.state.document
        doc.push(doc.settings_command(backend=self._backend, params={},
                                      text=f"Reset {self._backend} parameters"))
