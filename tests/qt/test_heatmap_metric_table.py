"""A heatmap metric is declared once (editor/model/heatmap_metrics.py): registering one entry
with its value function puts it in the overlay panel, the Heatmap menu, ``--overlay``, the
overlay's colours and the screenshot report, with nothing else to edit."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QComboBox

from editor.model import heatmap_metrics
from editor.model.heatmap_metrics import QUERIES, HeatmapMetric

from .test_class_motion_gui import heatmap_action


def _leaf_flag(table, context) -> np.ndarray:
    """A new metric: 1 for a leaf, 0 for an inner node."""
    return table.is_leaf.astype(np.float64)


def _visits_twice(table, context) -> np.ndarray:
    visits = context.visits if context.visits is not None else np.zeros(len(table))
    return 2.0 * visits


@pytest.fixture
def restored_table():
    """The metric table as it was once the test is over (readers hold the same dict)."""
    saved = dict(heatmap_metrics.METRICS)
    yield heatmap_metrics.METRICS
    heatmap_metrics.METRICS.clear()
    heatmap_metrics.METRICS.update(saved)


@pytest.fixture
def leaf_metric(restored_table):
    """The table with one more metric, for this test only (before the window is built)."""
    return heatmap_metrics.register(HeatmapMetric(
        "is_leaf", "Leaf or inner", "leaf (1) or inner node (0)", _leaf_flag,
        fixed_range=(0.0, 1.0)))


def test_a_registered_metric_reaches_menu_panel_overlay_and_report(leaf_metric, qtbot, settings):
    from editor.qt.app_main import _apply_view_args, _parse
    from editor.qt.screenshot import render_report

    from .conftest import _make_window

    window = _make_window(qtbot, settings, use_gl=False)
    combo = window.findChild(QComboBox, "metric_combo")
    assert combo.findData("is_leaf") >= 0 and combo.itemText(combo.findData("is_leaf")) == "Leaf or inner"
    # the Simulation ▸ Heatmap menu offers it, and choosing it colours the overlay by it
    heatmap_action(window, "Leaf or inner").trigger()
    window.state.flush()
    geom = window.state.overlay
    assert geom.metric == "is_leaf" and (geom.vmin, geom.vmax) == (0.0, 1.0)
    table = window.state.node_table
    np.testing.assert_array_equal(geom.values, table.is_leaf[geom.rows].astype(np.float64))
    assert combo.currentData() == "is_leaf"
    assert "leaf (1) or inner node (0)" in window.overlay_panel.legend_title.text()
    # the command line accepts it, and the screenshot report names it
    heatmap_action(window, "Depth").trigger()
    window.state.flush()
    args = _parse(["--overlay", "is_leaf"])
    _apply_view_args(window, args)
    window.state.flush()
    report = render_report(window)
    assert report["overlay"] == "is_leaf" and report["overlay_legend"] == "leaf (1) or inner node (0)"


def test_an_unknown_metric_is_refused_on_the_command_line(capsys):
    from editor.qt.app_main import _parse

    with pytest.raises(SystemExit):
        _parse(["--overlay", "is_leaf"])  # not registered outside the fixture
    assert "is_leaf" in capsys.readouterr().err


def test_a_metric_that_follows_queries_recomputes_when_a_ray_is_cast(restored_table, window):
    heatmap_metrics.register(HeatmapMetric("visits_x2", "Visits twice", "2x query visits",
                                           _visits_twice, recompute_on=frozenset({QUERIES})))
    window.state.set_overlay_settings(metric="visits_x2")
    window.state.flush()
    assert window.state.overlay.vmax == 0.0
    window.state.cast_ray((0.0, -1000.0, 40.0), (0.0, 1.0, 0.0))
    assert window.state.overlay.vmax == 4.0, "the overlay recomputed for the new query"


def test_a_key_is_registered_once():
    with pytest.raises(ValueError, match="depth"):
        heatmap_metrics.register(HeatmapMetric("depth", "Depth", "again", _leaf_flag))
