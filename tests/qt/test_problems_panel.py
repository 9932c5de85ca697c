"""Open a map with broken brushes, see them in the Problems dock, Ctrl+S keeps them on disk."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.invalid_brush_maps import BROKEN, broken_map_text


def test_broken_brushes_are_listed_and_survive_open_and_ctrl_s(window, tmp_path, qtbot):
    path = tmp_path / "broken.map"
    path.write_text(broken_map_text())
    before = path.read_text()
    assert window.open_file(str(path), background=False)
    panel = window.problems_panel
    rows = [panel.list.item(i).text() for i in range(panel.list.count())]
    assert len(rows) == len(BROKEN)
    assert all(r.startswith(f"{path}:") and "not indexed" in r for r in rows), rows
    assert window.docks["problems"].windowTitle() == f"Problems ({len(BROKEN)})"
    # each is marked in every 2D view, apart from the level's brushes (which count one)
    assert [layer.drawn for layer in window.invalid_brush_marks] == [len(BROKEN)] * 3
    assert all(view.drawn["brushes"] == 1 for view in window.views2d.values())
    # an edit, so Ctrl+S has something to write, then the real key on the window
    doc = window.document
    from editor.model import AddObjects, point_entity
    new_id = doc.scene.allocate_ids(1)[0]
    doc.push(AddObjects({new_id: point_entity("light", (0, 0, 100))}))
    assert doc.is_dirty()
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    qtbot.keyClick(window, Qt.Key_S, Qt.ControlModifier)
    qtbot.waitUntil(lambda: not doc.is_dirty() or window.errors, timeout=10000)
    assert not window.errors, window.errors
    after = path.read_text()
    assert after != before and '"classname" "light"' in after
    start = 0
    for faces in BROKEN.values():  # each broken brush, as written, in file order
        block = "\n".join("  " + f for f in faces)
        at = after.index(block, start)
        start = at + len(block)


def test_a_level_without_problems_shows_none(window):
    assert window.problems_panel.list.count() == 0
    assert window.docks["problems"].windowTitle() == "Problems"
    assert [layer.drawn for layer in window.invalid_brush_marks] == [0, 0, 0]
