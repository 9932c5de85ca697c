"""Watch mode follows the file through delete-and-create and waits for a slow writer."""
from __future__ import annotations

import os
import threading
import time

from editor.model import AddObjects, UndoStack, point_entity
from editor.model.loading import load_document
from editor.model.native import dumps_scene


def _outside_version(path: str, light_z: float) -> tuple[str, int]:
    """The text of ``path``'s level with one more light, and that light's id."""
    scene = load_document(path)
    new_id = scene.allocate_ids(1)[0]
    UndoStack(scene).push(AddObjects({new_id: point_entity("light", (0, 0, light_z))}))
    return dumps_scene(scene), new_id


def test_watch_follows_the_file_through_delete_and_create(window, tmp_path, qtbot):
    path = str(tmp_path / "level.json")
    assert window.files.save_to(path)
    qtbot.wait(1100)  # past the window that ignores our own save
    for round_ in range(2):  # and keeps following it afterwards
        doc = window.document
        text, new_id = _outside_version(path, 100 + round_)
        os.remove(path)
        qtbot.wait(400)  # the deleted file alone brings no error and no reload
        assert window.document is doc and not window.errors
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        qtbot.waitUntil(lambda doc=doc: window.document is not doc, timeout=10_000)
        assert new_id in window.document.scene
    assert not window.errors


def test_a_slow_writer_is_read_once_it_settles(window, tmp_path, qtbot):
    path = str(tmp_path / "level.json")
    assert window.files.save_to(path)
    qtbot.wait(1100)
    doc = window.document
    text, new_id = _outside_version(path, 200)
    data = text.encode()
    chunk = max(1, len(data) // 5)

    def write_slowly() -> None:
        with open(path, "wb") as fh:  # pauses longer than the settle delay: partial versions
            for start in range(0, len(data), chunk):
                fh.write(data[start:start + chunk])
                fh.flush()
                time.sleep(0.6)

    writer = threading.Thread(target=write_slowly)
    writer.start()
    qtbot.waitUntil(lambda: not writer.is_alive(), timeout=20_000)
    qtbot.waitUntil(lambda: window.document is not doc, timeout=10_000)
    assert new_id in window.document.scene
    assert len(window.errors) <= 1, window.errors


def test_an_unsaved_backend_choice_alone_never_asks_and_is_kept(window, tmp_path, qtbot):
    path = str(tmp_path / "level.json")
    assert window.files.save_to(path)
    qtbot.wait(1100)
    doc = window.document
    chosen = "brute" if doc.index.name != "brute" else "bvh"
    combo = window.params_panel.backend_combo
    combo.setCurrentIndex(combo.findData(chosen))  # the Partition panel's chooser
    qtbot.waitUntil(lambda: doc.index.name == chosen and not doc.rebuilding, timeout=60_000)
    assert doc.is_dirty()
    asked = []
    window.ask_reload = lambda: asked.append(1) or False
    text, new_id = _outside_version(path, 300)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    qtbot.waitUntil(lambda: window.document is not doc, timeout=10_000)
    fresh = window.document
    assert not asked, "a backend choice alone does not ask to lose changes"
    assert new_id in fresh.scene
    assert fresh.scene.settings.backend == chosen and fresh.index.name == chosen
    assert not window.errors


def test_watch_follows_a_rename_over_the_file(window, tmp_path, qtbot):
    path = str(tmp_path / "level.json")
    assert window.files.save_to(path)
    qtbot.wait(1100)
    for round_ in range(2):  # an editor saving atomically, twice
        doc = window.document
        text, new_id = _outside_version(path, 400 + round_)
        temporary = tmp_path / f"level.json.{round_}.new"
        temporary.write_text(text)
        os.replace(temporary, path)
        qtbot.waitUntil(lambda doc=doc: window.document is not doc, timeout=10_000)
        assert new_id in window.document.scene
    assert not window.errors
