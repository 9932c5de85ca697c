"""The first-frame report (``PARTITION_STUDIO_REPORT_FIRST_FRAME``) and the work that waits for
the first frame. The report test starts the real ``app.py`` in a subprocess on the test display."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from editor.qt.first_frame import ENV_VARIABLE, report_path

REPO = Path(__file__).resolve().parents[2]
PHASES = ["launched", "gui_entered", "qt_application", "modules_imported", "window_built",
          "document_loaded", "shown", "first_frame"]


@pytest.mark.slow
def test_first_frame_report_of_a_real_start(tmp_path):
    if not os.environ.get("DISPLAY") and os.environ.get("QT_QPA_PLATFORM") != "offscreen":
        pytest.skip("no display for a subprocess: needs pytest-xvfb (or Xvfb) or QT_QPA_PLATFORM=offscreen")
    report = tmp_path / "first_frame.json"
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"))  # leave the user's layout alone
    env[ENV_VARIABLE] = str(report)
    before = time.perf_counter()
    # generous: on an empty numba cache the start compiles kernels for a minute on a slow machine
    proc = subprocess.run([sys.executable, str(REPO / "app.py")], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    after = time.perf_counter()
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(report.read_text(encoding="utf-8"))
    marks = data["marks"]
    assert list(marks) == PHASES, "every start-up phase is recorded, in order"
    readings = [marks[name] for name in PHASES]
    assert readings == sorted(readings)
    # the child's clock readings fall inside the parent's run: one system-wide clock
    assert before < marks["launched"] and marks["first_frame"] < after
    assert data["first_frame_s"] == pytest.approx(marks["first_frame"] - marks["launched"])
    assert 0 < data["first_frame_s"] < after - before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("first_frame.json.tmp")] == []
    assert "Traceback" not in proc.stderr


def test_no_report_is_asked_for_without_the_variable(monkeypatch):
    monkeypatch.delenv(ENV_VARIABLE, raising=False)
    assert report_path() is None
    monkeypatch.setenv(ENV_VARIABLE, "")
    assert report_path() is None
    monkeypatch.setenv(ENV_VARIABLE, "/tmp/x.json")
    assert report_path() == "/tmp/x.json"


def test_statistics_wait_for_the_first_frame_then_fill_in(qtbot, settings):
    from editor.qt.main_window import MainWindow
    window = MainWindow(settings=settings, use_gl=False)
    window.ask_save = lambda: "discard"
    qtbot.addWidget(window)
    assert window.open_file(None, background=False)
    window.state.flush()
    panel = window.stats_panel
    assert panel.on_hold and not window.first_paint.done
    panel.refresh()  # what its timer does: nothing while the first frame is still to come
    assert panel.stats == {} and panel.values["pairs"].text() == "–"
    window.show()
    qtbot.waitUntil(lambda: window.first_paint.done, timeout=20000)
    assert not panel.on_hold
    qtbot.waitUntil(lambda: bool(panel.stats), timeout=20000)
    pairs = window.document.index.pairs("all")
    assert panel.stats["candidates"] == pairs.tests
    assert panel.stats["overlapping"] == len(pairs.pairs)
