"""Files: errors keep the document, watch mode reloads, unsaved changes are asked about,
layout and recent files persist in the (temporary) settings."""
from __future__ import annotations

import os

import numpy as np
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from editor.model import AddObjects, SetSelection, point_entity
from editor.model.loading import load_document
from editor.model.native import save_scene


def test_malformed_file_shows_an_error_and_keeps_the_document(window, tmp_path, qtbot):
    doc = window.document
    bad = tmp_path / "broken.map"
    bad.write_text('{\n"classname" "worldspawn"\n( 0 0 0 ) ( 1 0 0 ) oops\n}\n')
    assert not window.open_file(str(bad), background=False)
    assert window.document is doc, "the current document stays"
    assert window.errors and "broken.map" in window.errors[-1]
    box = window._error_box
    assert box.isVisible() and not box.isModal(), "non-blocking message box"
    assert "broken.map" in box.text()
    bad_json = tmp_path / "broken.json"
    bad_json.write_text('{"format": "partition-studio", "version": 1, "objects": 3}')
    assert not window.open_file(str(bad_json), background=False)
    assert window.document is doc
    assert "broken.json" in window.errors[-1]


def test_malformed_file_in_the_background_keeps_the_document(window, tmp_path, qtbot):
    doc = window.document
    bad = tmp_path / "big_broken.map"
    bad.write_text("{\n" + '"k" "v"\n' * 5 + "( 0 0 0 ) ( 1 0 0 )\n")
    window.open_file(str(bad), background=True)
    qtbot.waitUntil(lambda: len(window.errors) > 0, timeout=30000)
    assert window.document is doc
    assert not window.progress.isVisible()


def test_save_then_watch_reloads_outside_changes_keeping_selection(window, tmp_path, qtbot):
    doc = window.document
    path = str(tmp_path / "level.json")
    assert window.files.save_to(path)
    assert not doc.is_dirty()
    keep = doc.scene.point_entity_ids()[0]
    doc.push(SetSelection([keep]))
    qtbot.wait(1100)  # past the window that ignores our own save
    # another program edits the file: add a light
    outside = load_document(path)
    new_id = outside.allocate_ids(1)[0]
    from editor.model import UndoStack
    UndoStack(outside).push(AddObjects({new_id: point_entity("light", (0, 0, 100))}))
    save_scene(outside, path)
    qtbot.waitUntil(lambda: window.document is not doc, timeout=10000)
    fresh = window.document
    assert new_id in fresh.scene
    assert fresh.selection == {keep}
    assert fresh.index.objects.contains(np.array([new_id]))[0], "the tree was rebuilt"


def test_closing_with_unsaved_changes_asks(window, qtbot):
    doc = window.document
    doc.push(SetSelection([doc.scene.point_entity_ids()[0]]))
    asked = []
    window.ask_save = lambda: asked.append(1) or "cancel"
    assert not doc.is_dirty(), "a selection change is not an unsaved change"
    from editor.model import Transform
    doc.push(Transform([doc.scene.point_entity_ids()[0]], delta=(16, 0, 0)))
    assert not window.close()
    assert asked and window.isVisible()
    window.ask_save = lambda: "discard"
    assert window.close()


def test_layout_and_recent_files_persist(window, settings, tmp_path, qtbot):
    path = str(tmp_path / "a.json")
    window.files.save_to(path)
    window.docks["stats"].hide()
    window.close()
    from editor.qt.main_window import MainWindow
    again = MainWindow(settings=settings, use_gl=False)
    qtbot.addWidget(again)
    assert os.path.abspath(path) in [a.text() for a in again.recent_menu.actions()]
    assert again.docks["stats"].isHidden()


def test_dropping_a_file_opens_it(window, tmp_path, qtbot):
    path = str(tmp_path / "dropped.json")
    window.files.save_to(path)
    window.open_file(None, background=False)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(path)])
    ev = QDropEvent(QPointF(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    window.dropEvent(ev)
    assert window.document.path == path


def test_opening_a_quake_map(window, qtbot):
    from tests.conftest import shared_file
    path = str(shared_file("quake", "quake_id1_e1m1.map"))
    window.open_file(path)
    qtbot.waitUntil(lambda: window.document.path == path, timeout=60000)
    doc = window.document
    assert len(doc.scene.brush_ids()) > 1000
    window.state.flush()
    assert window.state.overlay.total == len(doc.index.nodes())


def test_outside_change_does_not_silently_drop_unsaved_edits(window, tmp_path, qtbot):
    doc = window.document
    path = str(tmp_path / "level.json")
    assert window.files.save_to(path)
    from editor.model import Transform
    doc.push(Transform([doc.scene.point_entity_ids()[0]], delta=(16, 0, 0)))
    asked = []
    window.ask_reload = lambda: asked.append(1) or False
    window.files.reload_from_watch()
    assert asked and window.document is doc and doc.is_dirty()
    window.ask_reload = lambda: True
    window.files.reload_from_watch()
    assert window.document is not doc and not window.document.is_dirty()
