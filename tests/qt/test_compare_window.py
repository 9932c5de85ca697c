"""Compare mode on freedoom1 E1M1: ours against the shipped BSP, linked views, the CLI's numbers."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from editor.cli import run_cli
from editor.model.compare.report import FIGURES
from tests.qt.conftest import _send, view_pos

FREEDOOM1 = Path("/usr/share/games/doom/freedoom1.wad")
E1M1 = f"{FREEDOOM1}:E1M1"
#: figures read from counters (the others are wall-clock times and differ run to run)
COUNTED = [key for key, _ in FIGURES if not key.endswith("_ms")]


def pan(view, start, end, steps: int = 6) -> None:
    """Drag with the middle button (pans the view) from world ``start`` to world ``end``."""
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtTest import QTest

    p0, p1 = view_pos(view, *start), view_pos(view, *end)
    _send(view, QEvent.MouseButtonPress, p0, Qt.MiddleButton, Qt.MiddleButton, Qt.NoModifier)
    for k in range(1, steps + 1):
        QTest.qWait(11)  # pyqtgraph's mouse-move rate limit
        _send(view, QEvent.MouseMove, p0 + (p1 - p0) * (k / steps), Qt.NoButton, Qt.MiddleButton,
              Qt.NoModifier)
    _send(view, QEvent.MouseButtonRelease, p1, Qt.MiddleButton, Qt.NoButton, Qt.NoModifier)


def open_compare(window, qtbot):
    window.act_compare.trigger()
    compare = window.compare_window
    qtbot.waitExposed(compare)
    qtbot.waitUntil(lambda: compare.comparison is not None, timeout=600_000)
    return compare


@pytest.mark.slow
def test_compare_mode_on_e1m1(window, qtbot, capsys):
    if not FREEDOOM1.exists():
        pytest.skip(f"{FREEDOOM1} is absent: install the Debian package 'freedoom'")
    assert window.open_file(E1M1, background=False)
    window.state.flush()
    compare = open_compare(window, qtbot)
    a, b = compare.sides
    assert (a.index.name, b.index.name) == ("bsp", "shipped_bsp")
    assert a.node_table is not None and len(a.node_table) != len(b.node_table)

    # the camera: panning view A moves view B the same way
    view_a, view_b = compare.views
    before_b = view_b.vb.viewRange()
    (x0, x1), (y0, y1) = view_a.vb.viewRange()
    centre = ((x0 + x1) / 2, (y0 + y1) / 2)
    pan(view_a, centre, (centre[0] + (x1 - x0) / 4, centre[1]))
    qtbot.waitUntil(lambda: view_b.vb.viewRange() != before_b)
    assert view_b.vb.viewRange()[0] == pytest.approx(view_a.vb.viewRange()[0])
    assert view_b.vb.viewRange()[0][0] < before_b[0][0]  # dragged right: the view moved left

    # one colour scale for both overlays
    assert a.overlay.vmax == b.overlay.vmax == max(a.raw_overlay.vmax, b.raw_overlay.vmax)

    # the table shows the command line's numbers
    shown = compare.table.values()
    assert run_cli(["compare", E1M1, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in COUNTED:
        assert shown[key][:2] == pytest.approx(
            (_figure(report["a"], key), _figure(report["b"], key))), key
    assert compare.costliest.count() > 0 and " bsp node" in compare.costliest.item(0).text()


def _figure(side, key):
    if "." in key:
        kind, name = key.split(".")
        return side["queries"][kind][name]
    return side[key]
