"""A backend that fails to build or list its nodes leaves the editor on the working one."""
from __future__ import annotations

import json
import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from plugins.brute import BruteForce
from spatial.registry import default_registry


class NodesFail(BruteForce):
    name = "octree_nodes_fail"  # sorts just after octree: one key away
    description = "brute force whose node table raises"

    def _nodes(self):
        raise RuntimeError("no nodes today")


class BuildQuits(BruteForce):
    name = "octree_build_quits"
    description = "brute force whose build calls sys.exit"

    def _build(self, slots):
        sys.exit(3)


def _register(monkeypatch, window, cls) -> None:
    import editor.warmup as warmup

    monkeypatch.setitem(default_registry().backends, cls.name, cls)
    monkeypatch.setattr(warmup, "needs_warm_up", lambda name: False)
    window.params_panel._fill_backends(window.document.scene.settings.metadata)
    window.params_panel._sync_from_model()


def _choose(window, qtbot, name: str) -> str:
    """Move the Partition panel's backend chooser one key to ``name``; returns the backend
    indexed before."""
    combo = window.params_panel.backend_combo
    target = combo.findData(name)
    assert target >= 0, name
    assert abs(target - combo.currentIndex()) == 1, "one key away: no other backend is built"
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    combo.setFocus()
    doc = window.document
    qtbot.waitUntil(lambda: not doc.rebuilding, timeout=60_000)
    before = doc.index.name
    qtbot.keyClick(combo, Qt.Key_Down if combo.currentIndex() < target else Qt.Key_Up)
    return before


@pytest.mark.parametrize("cls, needle", [(NodesFail, "RuntimeError: no nodes today"),
                                         (BuildQuits, "called sys.exit(3)")])
def test_a_failed_switch_keeps_the_working_backend_and_saves_it(window, monkeypatch, qtbot,
                                                                tmp_path, cls, needle):
    _register(monkeypatch, window, cls)
    backend = cls.name
    doc = window.document
    assert doc.index.name == "octree"
    errors_before = len(window.errors)
    working = _choose(window, qtbot, backend)
    qtbot.waitUntil(lambda: len(window.errors) > errors_before, timeout=60_000)
    message = window.errors[-1]
    assert f"backend '{backend}' failed" in message and needle in message, message
    assert f"staying on '{working}'" in message
    assert doc.index.name == working
    assert doc.scene.settings.backend == working, "the settings name the index on screen"
    qtbot.waitUntil(lambda: window.params_panel.backend_combo.currentData() == working,
                    timeout=5000)
    out = tmp_path / "saved.json"
    assert window.files.save_to(str(out))
    assert json.loads(out.read_text())["settings"]["backend"] == working
