"""The motion of one point entity, edited with proper widgets instead of typed ``_ps_*`` keys.

A behaviour chooser (class default, none, every registered behaviour) and one widget per
parameter of the behaviour in effect, built from its typed ``params``
(:class:`~editor.model.motion.MotionParam`): spin boxes with bounds and units for numbers,
three spin boxes for a vector, a checked line for way points, a chooser for choices, plus the
keys every behaviour shares (world bounds, may sleep). A value the entity sets itself is shown in
bold; the others show what the simulation would use (its class default or the behaviour's
default) in grey, with the source in the tooltip.

Every change is one ``SetProperties`` command on the undo stack (the panel never edits the
scene); :meth:`MotionEditor.show_entity` follows the model with every widget's signals blocked.
"""
from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from editor.model.class_motion import class_default, family, path_corners
from editor.model.entities import Entity, format_number, format_vector
from editor.model.motion import (
    AT_BOUNDS_CHOICES,
    AT_BOUNDS_KEY,
    MOTION_KEY,
    MOTION_PREFIX,
    NO_MOTION,
    SLEEP_KEY,
    MotionParam,
)

from ..quiet import signals_blocked
from .base import form_host, push_button

#: spin boxes stop here when a parameter is unbounded
SPIN_LIMIT = 1e6
#: the chooser's data for "no key: the class decides"
CLASS_DEFAULT = ""

COMMON_PARAMS = (
    MotionParam(AT_BOUNDS_KEY, "choice", "bounce", "bounce or despawn at the world bounds",
                choices=AT_BOUNDS_CHOICES),
)


def _behaviours() -> dict:
    from spatial.registry import default_registry
    return default_registry().motions


class MotionEditor(QGroupBox):
    """See the module docstring.

    Signals
    -------
    edit_requested(dict)
        ``{key: value or None}``: the keys to set (or delete) on the shown entity, as one command.
    """

    edit_requested = Signal(dict)

    def __init__(self, parent=None) -> None:
        super().__init__("Motion", parent)
        self.setObjectName("motion_editor")
        self.entity: Entity | None = None
        self.params: dict[str, MotionParam] = {}
        self.widgets: dict[str, QWidget] = {}
        self.labels: dict[str, QLabel] = {}
        self._form_behaviour: str | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.family_label = QLabel()
        self.family_label.setObjectName("motion_family")
        self.family_label.setWordWrap(True)
        layout.addWidget(self.family_label)
        self.behaviour = QComboBox()
        self.behaviour.setObjectName("motion_behaviour")
        self.behaviour.setToolTip("How the entity moves while the simulation plays")
        self.behaviour.currentIndexChanged.connect(self._on_behaviour_chosen)
        layout.addWidget(self.behaviour)
        self.form_host, self.form = form_host()
        layout.addWidget(self.form_host)
        self.sleep_box = QCheckBox("May fall asleep when idle")
        self.sleep_box.setObjectName(f"motion{SLEEP_KEY}")
        self.sleep_box.toggled.connect(lambda on: self._request({SLEEP_KEY: "1" if on else "0"}))
        layout.addWidget(self.sleep_box)
        self.clear_button = push_button(
            "Clear motion keys", self._clear,
            "Remove every _ps_ key: the entity moves as its class does", "motion_clear")
        layout.addWidget(self.clear_button)

    # ------------------------------------------------------------------ model -> widgets
    def show_entity(self, entity: Entity | None, scene=None) -> None:
        """Show ``entity``'s motion (``None`` hides the editor); widgets emit nothing meanwhile.

        ``scene`` (optional) resolves what the class default depends on (path corners)."""
        self.entity = entity
        shown = entity is not None and entity.is_point
        self.setVisible(shown)
        if entity is None or not shown:
            return
        corners = path_corners(scene) if scene is not None and entity.get("target") else None
        default = class_default(entity, corners)
        named = (entity.get(MOTION_KEY) or "").strip()
        in_effect = named or (default[MOTION_KEY] if default else "")
        self.family_label.setText(f"Class: {family(entity, corners)}")
        self.family_label.setToolTip("The class default applies while Simulation ▸ Animate level "
                                     "entities is on; the entity's own keys always win")
        self._fill_behaviours(default, named)
        self._build_form(in_effect, default if not named or named == (default or {}).get(MOTION_KEY) else None)
        with signals_blocked(self.sleep_box):
            self.sleep_box.setChecked((entity.get(SLEEP_KEY) or "1").strip() != "0")
            self.sleep_box.setFont(_font(self.sleep_box, SLEEP_KEY in entity))
        self.clear_button.setEnabled(any(k.startswith(MOTION_PREFIX) for k, _ in entity.properties))

    def _fill_behaviours(self, default: dict | None, named: str) -> None:
        behaviours = _behaviours()
        label = f"Class default ({default[MOTION_KEY]})" if default else "Class default (stands still)"
        items = [(label, CLASS_DEFAULT, "the entity moves as its class does (no _ps_motion key)"),
                 ("None (stands still)", NO_MOTION, "stands still whatever its class")]
        items += [(name, name, behaviours[name].description) for name in sorted(behaviours)]
        if named and named not in behaviours and named != NO_MOTION:
            items.append((f"{named} (unknown)", named, "not a registered behaviour"))
        combo = self.behaviour
        with signals_blocked(combo):
            # refilled only when the list changes: this runs inside the chooser's own signal too
            if [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())] != \
                    [(text, data) for text, data, _ in items]:
                combo.clear()
                for text, data, tip in items:
                    combo.addItem(text, data)
                    combo.setItemData(combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
            combo.setCurrentIndex(max(combo.findData(named), 0))

    def _build_form(self, behaviour: str, class_keys: dict | None) -> None:
        # The widgets are rebuilt only when the behaviour changes: a value edit comes back here
        # from the model while the edited widget is still inside its own signal.
        if behaviour != self._form_behaviour:
            while self.form.rowCount():
                self.form.removeRow(0)
            self.widgets.clear()
            self.labels.clear()
            factory = _behaviours().get(behaviour)
            params = tuple(getattr(factory.factory, "params", ())) if factory is not None else ()
            self.params = {p.key: p for p in params + COMMON_PARAMS}
            for param in self.params.values():
                widget = self._make_widget(param)
                label = QLabel(param.key.removeprefix(MOTION_PREFIX).replace("_", " "))
                self.form.addRow(label, widget)
                self.widgets[param.key], self.labels[param.key] = widget, label
            self._form_behaviour = behaviour
        for key, param in self.params.items():
            widget, label = self.widgets[key], self.labels[key]
            value, source = self._value(param, class_keys)
            self._set_widget(param, widget, value)
            explicit = self.entity is not None and key in self.entity
            widget.setToolTip(f"{key}: {param.help}" + ("" if explicit else f" ({source})"))
            label.setToolTip(widget.toolTip())
            label.setFont(_font(label, explicit))
            label.setStyleSheet("" if explicit else "color: gray")

    def _value(self, param: MotionParam, class_keys: dict | None) -> tuple[str | None, str]:
        own = self.entity.get(param.key) if self.entity is not None else None
        if own is not None:
            return own, "set on the entity"
        if class_keys and param.key in class_keys:
            return class_keys[param.key], "class default"
        return param.default, "behaviour default" if param.default is not None else "required"

    # ------------------------------------------------------------------ widgets
    def _make_widget(self, param: MotionParam) -> QWidget:
        name = f"motion{param.key}"
        if param.kind == "number":
            spin = _spin(param.lo, param.hi, param.unit)
            spin.setObjectName(name)
            spin.valueChanged.connect(lambda v, k=param.key: self._request({k: format_number(v)}))
            return spin
        if param.kind == "vector":
            host = _VectorEditor()
            host.setObjectName(name)
            row = QHBoxLayout(host)
            row.setContentsMargins(0, 0, 0, 0)
            for axis in "xyz":
                spin = _spin(-math.inf, math.inf, "")
                spin.setObjectName(f"{name}_{axis}")
                spin.valueChanged.connect(lambda _v, k=param.key, h=host: self._request(
                    {k: format_vector(s.value() for s in h.spins)}))
                row.addWidget(spin)
                host.spins.append(spin)
            return host
        if param.kind == "choice":
            combo = QComboBox()
            combo.setObjectName(name)
            combo.addItems(list(param.choices))
            combo.currentTextChanged.connect(lambda text, k=param.key: self._request({k: text}))
            return combo
        line = QLineEdit()
        line.setObjectName(name)
        line.setPlaceholderText("x y z; x y z; ...")
        line.editingFinished.connect(lambda k=param.key, w=line: self._on_points_edited(k, w))
        return line

    def _set_widget(self, param: MotionParam, widget: QWidget, value: str | None) -> None:
        # the widget _make_widget made for param.kind
        with signals_blocked(widget, *(widget.spins if isinstance(widget, _VectorEditor) else [])):
            if isinstance(widget, QDoubleSpinBox):
                widget.setValue(_number(value, 0.0))
            elif isinstance(widget, _VectorEditor):
                parts = (value or "0 0 0").split()
                for spin, text in zip(widget.spins, parts + ["0"] * (3 - len(parts))):
                    spin.setValue(_number(text, 0.0))
            elif isinstance(widget, QComboBox):
                widget.setCurrentIndex(max(widget.findText((value or "").strip()), 0))
            elif isinstance(widget, QLineEdit):
                widget.setText(value or "")

    # ------------------------------------------------------------------ widgets -> commands
    def _request(self, changes: dict) -> None:
        if self.entity is not None:
            self.edit_requested.emit(changes)

    def _on_behaviour_chosen(self, _index: int) -> None:
        name = self.behaviour.currentData()
        self._request({MOTION_KEY: name if name else None})

    def _on_points_edited(self, key: str, line: QLineEdit) -> None:
        text = line.text().strip()
        if self.entity is None or text == (self.entity.get(key) or "").strip():
            return
        try:
            points = [p for p in text.split(";") if p.strip()]
            for p in points:
                values = [float(v) for v in p.split()]
                if len(values) != 3 or not all(math.isfinite(v) for v in values):
                    raise ValueError(p)
            if not points:
                raise ValueError(text)
        except ValueError:
            line.setStyleSheet("background: #fdd")
            line.setToolTip(f"{key}: expected 'x y z; x y z; ...', got {text!r}")
            return
        line.setStyleSheet("")
        self._request({key: "; ".join(" ".join(p.split()) for p in points)})

    def _clear(self) -> None:
        if self.entity is not None:
            keys = {k: None for k, _ in self.entity.properties if k.startswith(MOTION_PREFIX)}
            if keys:
                self.edit_requested.emit(keys)


class _VectorEditor(QWidget):
    """Three spin boxes in a row, for a vector parameter."""

    def __init__(self) -> None:
        super().__init__()
        self.spins: list[QDoubleSpinBox] = []


def _spin(lo: float, hi: float, unit: str) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setDecimals(3)
    spin.setRange(max(lo, -SPIN_LIMIT), min(hi, SPIN_LIMIT))
    spin.setKeyboardTracking(False)  # one command when typing ends, not one per keystroke
    if unit:
        spin.setSuffix(f" {unit}")
    return spin


def _number(text: str | None, fallback: float) -> float:
    try:
        value = float(text) if text is not None else fallback
    except ValueError:
        return fallback
    return value if math.isfinite(value) else fallback


def _font(widget: QWidget, bold: bool):
    font = widget.font()
    font.setBold(bold)
    return font
