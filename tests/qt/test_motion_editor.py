"""The properties panel's motion editor: widgets in, one undoable command per change out."""
from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QPushButton

from editor.model.commands import SetSelection


def select_class(window, classname):
    doc = window.document
    eid = next(i for i in doc.scene.point_entity_ids() if doc.scene[i].classname == classname)
    doc.push(SetSelection([eid]))
    window.state.flush()
    return eid


def editor_widget(window, cls, name):
    widget = window.properties_panel.motion_editor.findChild(cls, name)
    assert widget is not None, f"no {name} in the motion editor"
    return widget


def test_choosing_a_behaviour_and_its_parameters_pushes_one_command_each(window):
    doc = window.document
    shambler = select_class(window, "monster_shambler")
    editor = window.properties_panel.motion_editor
    assert editor.isVisibleTo(window.properties_panel)
    combo = editor_widget(window, QComboBox, "motion_behaviour")
    assert combo.currentText() == "Class default (wander)"
    assert "Quake monster" in editor.family_label.text()
    speed = editor_widget(window, QDoubleSpinBox, "motion_ps_speed")
    assert speed.value() == 80  # the class's walking speed, shown before any key exists
    depth = len(doc.stack.history)

    combo.setCurrentIndex(combo.findData("patrol"))
    assert doc.scene[shambler].get("_ps_motion") == "patrol"
    assert len(doc.stack.history) == depth + 1
    points = editor_widget(window, QLineEdit, "motion_ps_points")  # the patrol's own keys now
    points.setText("0 0 24;  64 0 24")
    points.editingFinished.emit()
    assert doc.scene[shambler].get("_ps_points") == "0 0 24; 64 0 24"
    speed = editor_widget(window, QDoubleSpinBox, "motion_ps_speed")
    assert speed.value() == 100  # patrol's default: the class speed belongs to its wander
    speed.setValue(150)
    assert doc.scene[shambler].get("_ps_speed") == "150"
    assert len(doc.stack.history) == depth + 3
    assert doc.stack.undo_text().startswith("Set _ps_speed")

    doc.stack.undo()
    assert doc.scene[shambler].get("_ps_speed") is None
    assert speed.value() == 100, "the widget follows the model"
    assert len(doc.stack.history) == depth + 3  # following the model pushed nothing


def test_bad_way_points_are_refused_without_a_command(window):
    doc = window.document
    ogre = select_class(window, "monster_ogre")  # a patroller in the demo
    before = doc.scene[ogre].get("_ps_points")
    depth = len(doc.stack.history)
    points = editor_widget(window, QLineEdit, "motion_ps_points")
    assert points.text() == before
    points.setText("1 2; 3 4 5")
    points.editingFinished.emit()
    assert doc.scene[ogre].get("_ps_points") == before and len(doc.stack.history) == depth
    assert "expected 'x y z" in points.toolTip()


def test_none_sleep_and_clear_are_commands_too(window):
    doc = window.document
    dog = select_class(window, "monster_dog")  # orbits in the demo
    combo = editor_widget(window, QComboBox, "motion_behaviour")
    assert combo.currentData() == "orbit"
    centre_x = editor_widget(window, QDoubleSpinBox, "motion_ps_center_x")
    centre_x.setValue(32)
    assert doc.scene[dog].get("_ps_center") == "32 0 24"
    sleep = editor_widget(window, QCheckBox, "motion_ps_sleep")
    sleep.setChecked(False)
    assert doc.scene[dog].get("_ps_sleep") == "0"
    combo.setCurrentIndex(combo.findData("none"))
    assert doc.scene[dog].get("_ps_motion") == "none"

    editor_widget(window, QPushButton, "motion_clear").click()
    assert not any(k.startswith("_ps_") for k, _ in doc.scene[dog].properties)
    assert doc.stack.undo_text() == "Clear motion keys"
    assert combo.currentText() == "Class default (wander)"
    doc.stack.undo()
    assert doc.scene[dog].get("_ps_motion") == "none" and doc.scene[dog].get("_ps_sleep") == "0"
    assert combo.currentData() == "none"


def test_the_editor_hides_for_brush_entities_and_empty_selections(window):
    doc = window.document
    doc.push(SetSelection([]))
    window.state.flush()
    assert not window.properties_panel.motion_editor.isVisibleTo(window.properties_panel)
    brush = doc.scene.brush_ids()[0]
    doc.push(SetSelection([brush]))
    window.state.flush()
    assert not window.properties_panel.motion_editor.isVisibleTo(window.properties_panel)
