"""Screenshot mode draws compare mode (``--compare BACKEND``); its report holds both sides."""
from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_compare_screenshot_and_report(tmp_path, qapp):
    from PySide6.QtGui import QImage

    from editor.qt.app_main import run_gui

    out, report_path = tmp_path / "compare.png", tmp_path / "report.json"
    code = run_gui(["--screenshot", str(out), "--no-gl", "--backend", "octree", "--compare", "bvh",
                    "--report", str(report_path), "--size", "1280x800"])
    assert code == 0
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1280, 800)
    report = json.loads(report_path.read_text())
    sides = report["compare"]
    assert (sides["a"]["backend"], sides["b"]["backend"]) == ("octree", "bvh")
    comparison = sides["comparison"]
    assert comparison["a"]["nodes"] == sides["a"]["nodes"] > 0
    assert comparison["b"]["nodes"] == sides["b"]["nodes"] > 0
    assert sides["a"]["colour_range"] == sides["b"]["colour_range"]  # one scale
    assert report["backend"] == "octree"  # the editor's own part is still there


def test_unknown_compare_backend_is_one_line(tmp_path, qapp, capsys):
    from editor.qt.app_main import run_gui

    code = run_gui(["--screenshot", str(tmp_path / "x.png"), "--no-gl", "--compare", "nosuch"])
    err = capsys.readouterr().err
    assert code != 0 and "nosuch" in err and "Traceback" not in err
    assert not (tmp_path / "x.png").exists()
