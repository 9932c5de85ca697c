"""The editor's timeline stops at the work budget with the same line as the command line."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.test_cli_nothing_lost import EMITTER_LEVEL


def test_playing_an_emitter_stops_at_the_work_budget(window, tmp_path, qtbot, monkeypatch):
    monkeypatch.setenv("PARTITION_STUDIO_WORK_BUDGET_PAIRS", "20000")
    level = tmp_path / "emitter.map"
    level.write_text(EMITTER_LEVEL)
    assert window.open_file(str(level), background=False)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    qtbot.keyClick(window, Qt.Key_F9)  # Simulation → Play
    qtbot.waitUntil(lambda: bool(window.errors), timeout=60_000)
    message = window.errors[-1]
    assert message.startswith(f"{level}: frame ") and "work budget of 20,000" in message, message
    assert window.timeline.play_state == "paused"
    assert len(window.errors) == 1
