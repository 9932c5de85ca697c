"""The Tune dialog's engine chooser: tune Chipmunk's knobs on the demo level and export its C."""
from __future__ import annotations

from PySide6.QtCore import Qt

from tests.engines.parsers import PARSERS

WAIT_MS = 90_000


def test_engine_search_exports_the_engines_own_settings(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    window.act_tune.trigger()
    dialog = window.tune_dialog
    combo = dialog.findChild(type(dialog.backend_combo), "tune_engine")
    assert combo.itemData(0) == "" and not dialog.engine_choice.units.isEnabled()
    combo.setFocus()
    qtbot.keyClicks(combo, "Chipmunk")  # typing picks the item, as a user would
    assert dialog.engine_choice.name() == "chipmunk"
    assert dialog.engine_choice.units.isEnabled() and not dialog.backend_combo.isEnabled()
    dialog.budget_spin.setValue(2.0)
    qtbot.mouseClick(dialog.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=WAIT_MS)
    assert not dialog.errors and dialog.engine_tuning is not None
    assert dialog.chosen is not None and dialog.chosen.trial is dialog.engine_tuning.result.best
    assert not dialog.apply_button.isEnabled()  # engine knobs are exported, not applied
    assert dialog.export_button.isEnabled()

    out = tmp_path / "space.c"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "")))
    qtbot.mouseClick(dialog.export_button, Qt.LeftButton)
    parsed = PARSERS["chipmunk"](out.read_text(encoding="utf-8"))
    # the best trial is written as the tuning settled it (Chipmunk's own timing has the last word)
    settled = dialog.engine_tuning.settings.values
    assert abs(parsed["dim"] - settled["dim"]) <= 1e-5 * parsed["dim"]
    assert parsed["count"] == settled["count"]
    assert "Exported" in dialog.summary.text()
    dialog.close()
