"""The editor on real levels, driven through the window: File → Open with a typed name, the
backend chooser, Ctrl+S, F5, the WAD map picker and load errors.

Each level is the one ``stats`` reads, so the tree the window shows is compared with the tree
the command line reports. Levels come from ../shared/data and Debian's ``freedoom``; tests
skip with the reason when they are absent.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialog

from editor.cli import run_cli
from editor.qt.prompts import LevelPicker, Prompts
from tests.conftest import SHARED_DATA

FREEDOOM1 = Path("/usr/share/games/doom/freedoom1.wad")

LEVELS = {
    "e1m1": SHARED_DATA / "quake" / "quake_id1_e1m1.map",
    "e3m4": SHARED_DATA / "quake" / "librequake_e3m4_valve220.map",
    "freedoom1-E1M1": f"{FREEDOOM1}:E1M1",
    "freedoom1-E1M2": f"{FREEDOOM1}:E1M2",
    "oa_dm5": SHARED_DATA / "meshes" / "oa_dm5_world.obj",
}


def level(key: str) -> str:
    name = str(LEVELS[key])
    file = Path(name.split(".wad:")[0] + ".wad") if ".wad:" in name else Path(name)
    if not file.exists():
        why = "install the Debian package 'freedoom'" if ".wad" in name else "needs ../shared/data"
        pytest.skip(f"{file} is absent: {why}")
    return name


class ScriptedPrompts(Prompts):
    """The window's dialogs with scripted answers; errors are shown for real (non-modal)."""

    def __init__(self, parent) -> None:
        super().__init__(parent)
        self.open_answers: list[str] = []
        self.part_answer: str | None = None
        self.parts_offered: list[dict] | None = None
        self.save_asked = 0

    def open_path(self, start, filters):
        self.filters = filters
        return self.open_answers.pop(0) if self.open_answers else None

    def choose_part(self, file, parts):
        self.parts_offered = parts
        return self.part_answer

    def save_path(self, start, filters):
        self.save_asked += 1
        self.save_filters = filters
        return self.save_answer

    save_answer: tuple[str, str] | None = None

    def ask_save(self, name):
        return "discard"


@pytest.fixture
def prompts(window):
    window.prompts = ScriptedPrompts(window)
    window.activateWindow()
    window.raise_()
    return window.prompts


def _focus(window, qtbot):
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)


def _settled(window, qtbot, timeout=120_000):
    qtbot.waitUntil(lambda: window.files.load_worker is None and window.document is not None
                    and not window.document.rebuilding, timeout=timeout)


def open_typed(window, prompts, qtbot, name: str) -> None:
    """File → Open (Ctrl+O) with ``name`` typed in the dialog; waits until it is open."""
    before = window.document
    prompts.open_answers.append(name)
    _focus(window, qtbot)
    qtbot.keyClick(window, Qt.Key_O, Qt.ControlModifier)
    qtbot.waitUntil(lambda: window.document is not before or bool(window.errors), timeout=120_000)
    _settled(window, qtbot)


def stats_nodes(capsys, name: str, *argv: str) -> dict:
    capsys.readouterr()
    assert run_cli(["stats", name, *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["index"]


def choose_backend(window, qtbot, name: str) -> int:
    """Pick ``name`` in the Partition panel's backend chooser with the arrow keys; returns
    how many backends were chosen on the way (one undo step each)."""
    combo = window.params_panel.backend_combo
    target = combo.findData(name)
    combo.setFocus()
    steps = 0
    while combo.currentIndex() != target:
        qtbot.keyClick(combo, Qt.Key_Down if combo.currentIndex() < target else Qt.Key_Up)
        steps += 1
        _settled(window, qtbot)
    qtbot.waitUntil(lambda: window.document.index.name == name, timeout=120_000)
    _settled(window, qtbot)
    return steps


@pytest.mark.slow
@pytest.mark.parametrize("key", list(LEVELS))
def test_a_level_opens_on_the_octree_with_the_tree_stats_reports(window, prompts, qtbot, capsys, key):
    name = level(key)
    open_typed(window, prompts, qtbot, name)
    assert not window.errors, window.errors
    doc = window.document
    assert doc.path == name and not doc.is_dirty()
    assert doc.index.name == "octree", "a real tree by default"
    assert doc.index.stats()["nodes"] == stats_nodes(capsys, name)["nodes"]
    assert prompts.filters[0].startswith("All levels (") and "*.wad" in prompts.filters[0]


@pytest.mark.slow
@pytest.mark.parametrize("key,backend,stores", [
    ("oa_dm5", "triangle_octree", False),
    ("freedoom1-E1M1", "bsp", False),
    ("freedoom1-E1M2", "bsp", False),
    ("e1m1", "kdtree", True),
    ("e3m4", "bvh", True),
])
def test_a_backend_switch_gives_the_tree_stats_gives(window, prompts, qtbot, capsys, key, backend, stores):
    name = level(key)
    open_typed(window, prompts, qtbot, name)
    steps = choose_backend(window, qtbot, backend)
    doc = window.document
    expected = stats_nodes(capsys, name, "--backend", backend)
    assert doc.index.stats()["nodes"] == expected["nodes"]
    assert doc.index.stats()["leaves"] == expected["leaves"]
    assert doc.is_dirty() == stores, "modified only when the format can store the choice"
    _focus(window, qtbot)
    for _ in range(steps):  # the choice is undoable, one step per backend chosen
        qtbot.keyClick(window, Qt.Key_Z, Qt.ControlModifier)
        _settled(window, qtbot)
    qtbot.waitUntil(lambda: doc.index.name == "octree", timeout=120_000)
    assert doc.scene.settings.backend == "octree" and not doc.is_dirty()


@pytest.mark.slow
def test_a_map_round_trip_keeps_backend_and_parameters(window, prompts, qtbot, capsys, tmp_path):
    path = tmp_path / "e1m1.map"
    shutil.copyfile(level("e1m1"), path)
    path.chmod(0o644)
    open_typed(window, prompts, qtbot, str(path))
    choose_backend(window, qtbot, "kdtree")
    spin = window.params_panel.widgets["leaf_size"]
    spin.setFocus()
    spin.selectAll()
    qtbot.keyClicks(spin, "3")
    qtbot.keyClick(spin, Qt.Key_Return)
    doc = window.document
    qtbot.waitUntil(lambda: doc.scene.settings.params.get("leaf_size") == 3, timeout=10_000)
    _settled(window, qtbot)
    _focus(window, qtbot)
    qtbot.keyClick(window, Qt.Key_S, Qt.ControlModifier)
    assert prompts.save_asked == 0, "Ctrl+S writes back to the .map, no dialog"
    assert not doc.is_dirty() and '"_ps_backend" "kdtree"' in path.read_text()
    qtbot.keyClick(window, Qt.Key_F5)  # reload from disk
    qtbot.waitUntil(lambda: window.document is not doc, timeout=60_000)
    _settled(window, qtbot)
    again = window.document
    assert again.index.name == "kdtree" and again.index.params.leaf_size == 3
    assert again.index.stats()["nodes"] == stats_nodes(capsys, str(path))["nodes"]
    assert stats_nodes(capsys, str(path))["backend"] == "kdtree"


def test_a_bare_wad_asks_which_map(window, prompts, qtbot):
    wad = level("freedoom1-E1M1").split(":E1M1")[0]
    doc = window.document
    prompts.part_answer = None  # cancelled: nothing changes
    prompts.open_answers.append(wad)
    _focus(window, qtbot)
    qtbot.keyClick(window, Qt.Key_O, Qt.ControlModifier)
    assert window.document is doc and prompts.parts_offered is not None
    names = [p["name"] for p in prompts.parts_offered]
    assert names[:2] == ["E1M1", "E1M2"] and all(p["linedefs"] > 0 for p in prompts.parts_offered)
    prompts.part_answer = "E1M2"
    open_typed(window, prompts, qtbot, wad)
    assert window.document.path == f"{wad}:E1M2"
    assert len(window.document.scene.segment_ids()) == prompts.parts_offered[1]["linedefs"]


def test_the_level_picker_lists_maps_with_counts(qtbot):
    parts = [{"name": "E1M1", "linedefs": 812, "things": 238},
             {"name": "E1M2", "linedefs": 2080, "things": 321}]
    picker = LevelPicker("freedoom1.wad", parts)
    qtbot.addWidget(picker)
    picker.show()
    tree = picker.tree
    assert [tree.headerItem().text(c) for c in range(3)] == ["Name", "Linedefs", "Things"]
    assert [tree.topLevelItem(1).text(c) for c in range(3)] == ["E1M2", "2080", "321"]
    rect = tree.visualItemRect(tree.topLevelItem(1))
    qtbot.mouseClick(tree.viewport(), Qt.LeftButton, pos=rect.center())
    qtbot.mouseDClick(tree.viewport(), Qt.LeftButton, pos=rect.center())
    assert picker.result() == QDialog.Accepted and picker.chosen() == "E1M2"


def test_a_load_error_is_one_line_in_a_dialog_and_the_document_stays(window, prompts, qtbot, tmp_path):
    doc = window.document
    state = doc.scene.state()
    bad = tmp_path / "broken.map"
    bad.write_text('{\n"classname" "worldspawn"\n( 0 0 0 ) ( 1 0 0 ) oops\n}\n')
    prompts.open_answers.append(str(bad))
    _focus(window, qtbot)
    qtbot.keyClick(window, Qt.Key_O, Qt.ControlModifier)
    qtbot.waitUntil(lambda: bool(window.errors), timeout=10_000)
    box = prompts.error_box
    assert box.isVisible() and not box.isModal()
    assert box.text().startswith(f"{bad}:3:") and "\n" not in box.text()
    assert window.document is doc and doc.scene.state() == state and not doc.is_dirty()
    missing = f"{FREEDOOM1}:NOPE" if FREEDOOM1.exists() else str(tmp_path / "none.map")
    prompts.open_answers.append(missing)
    qtbot.keyClick(window, Qt.Key_O, Qt.ControlModifier)
    qtbot.waitUntil(lambda: len(window.errors) == 2, timeout=10_000)
    assert "\n" not in prompts.error_box.text() and str(missing).split(":")[0] in prompts.error_box.text()
    assert window.document is doc


@pytest.mark.slow
def test_a_watch_mode_reload_keeps_the_backend_and_a_new_level_gets_the_last_choice(
        window, prompts, qtbot, tmp_path):
    mesh = tmp_path / "dm5.obj"
    shutil.copyfile(level("oa_dm5"), mesh)
    mesh.chmod(0o644)
    open_typed(window, prompts, qtbot, str(mesh))
    choose_backend(window, qtbot, "triangle_octree")
    doc = window.document
    assert not doc.is_dirty(), "a mesh cannot store the choice: nothing to save"
    nodes = doc.index.stats()["nodes"]
    qtbot.wait(1100)
    with mesh.open("a") as fh:  # another program saves the mesh
        fh.write("# touched\n")
    qtbot.waitUntil(lambda: window.document is not doc, timeout=60_000)
    _settled(window, qtbot)
    assert window.document.index.name == "triangle_octree"
    assert window.document.index.stats()["nodes"] == nodes
    plain = tmp_path / "plain.map"
    plain.write_text('{\n"classname" "worldspawn"\n}\n'
                     '{\n"classname" "info_player_start"\n"origin" "0 0 24"\n}\n')
    open_typed(window, prompts, qtbot, str(plain))
    assert window.document.index.name == "triangle_octree", "the user's last choice"
    assert not window.document.is_dirty()


def test_save_as_offers_every_exporter_and_a_save_error_is_one_line(window, prompts, qtbot, tmp_path):
    doc = window.document
    state = doc.scene.state()
    prompts.save_answer = (str(tmp_path / "missing-folder" / "level.json"), "")
    _focus(window, qtbot)
    qtbot.keyClick(window, Qt.Key_S, Qt.ControlModifier | Qt.ShiftModifier)
    qtbot.waitUntil(lambda: bool(window.errors), timeout=10_000)
    assert prompts.save_filters[0].startswith("All levels (") and "*.map" in prompts.save_filters[0]
    assert any(f.endswith("(*.map)") for f in prompts.save_filters)
    text = prompts.error_box.text()
    assert "\n" not in text and text.startswith(str(tmp_path / "missing-folder" / "level.json"))
    assert window.document is doc and doc.scene.state() == state and doc.path is None
    map_filter = next(f for f in prompts.save_filters if f.endswith("(*.map)"))
    prompts.save_answer = (str(tmp_path / "level"), map_filter)  # no extension typed
    qtbot.keyClick(window, Qt.Key_S, Qt.ControlModifier | Qt.ShiftModifier)
    assert doc.path == str(tmp_path / "level.map") and (tmp_path / "level.map").exists()
    assert not doc.is_dirty()


@pytest.mark.slow
@pytest.mark.parametrize("key", ["freedoom1-E1M1", "freedoom1-E1M2"])
def test_the_doom_style_bsp_in_the_window_is_the_one_stats_builds(window, prompts, qtbot, capsys, key):
    name = level(key)
    open_typed(window, prompts, qtbot, name)
    choose_backend(window, qtbot, "bsp")
    doc = window.document
    for param, value in (("space", "2d"), ("leaf", "convex")):
        combo = window.params_panel.widgets[param]
        combo.setFocus()
        while combo.currentData() != value:
            qtbot.keyClick(combo, Qt.Key_Down)
        qtbot.waitUntil(lambda p=param, v=value: doc.scene.settings.params.get(p) == v, timeout=10_000)
        _settled(window, qtbot)
    expected = stats_nodes(capsys, name, "--backend", "bsp", "--param", "space=2d", "--param", "leaf=convex")
    got = doc.index.stats()
    assert got["segments"] == expected["segments"] > 0, "the wall segments reached the tree"
    for figure in ("nodes", "leaves", "splits"):
        assert got[figure] == expected[figure], figure
