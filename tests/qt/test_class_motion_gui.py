"""Simulation ▸ Animate level entities brings a real level to life in the window."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QComboBox

from tests.conftest import shared_file


def menu_action(window, menu_title: str, text: str):
    for top in window.menuBar().actions():
        if top.text().replace("&", "") == menu_title and top.menu() is not None:
            for act in top.menu().actions():
                if act.text().replace("&", "").startswith(text):
                    return act
    raise AssertionError(f"no {menu_title} ▸ {text} action")


def heatmap_action(window, label: str):
    heat = menu_action(window, "Simulation", "Heatmap").menu()
    return next(a for a in heat.actions() if a.text().replace("&", "") == label)


def open_on_octree(window, path):
    assert window.open_file(str(path), background=False)
    combo = window.findChild(QComboBox, "backend_combo")
    combo.setCurrentIndex(combo.findData("octree") if combo.findData("octree") >= 0
                          else combo.findText("octree"))
    window.state.flush()
    assert window.document.index.name == "octree"


@pytest.mark.slow
def test_animate_level_entities_from_the_menu_keeps_e1m1_busy(window, qtbot):
    open_on_octree(window, shared_file("quake", "quake_id1_e1m1.map"))
    controller = window.timeline
    animate = menu_action(window, "Simulation", "Animate level entities")
    assert animate.isCheckable() and animate.isChecked()  # on by default, as in `simulate`
    dirty_before = window.document.is_dirty()

    animate.trigger()  # off: only entities with motion keys move, and e1m1 has none
    assert not controller.animate
    step = menu_action(window, "Simulation", "Step one frame")
    for _ in range(40):
        step.trigger()
    assert controller.frame == 40
    assert controller.last_stats.awake == 0 and controller.last_stats.candidates == 0

    animate.trigger()  # on again: the quiet run is dropped, the next one animates
    assert controller.animate and not controller.active
    play = menu_action(window, "Simulation", "▶ Play")
    play.trigger()
    qtbot.waitUntil(lambda: controller.frame >= 240, timeout=60_000)
    play.trigger()  # pause
    assert controller.play_state == "paused"
    stats = controller.last_stats
    assert stats.candidates > 0 and 0 < stats.awake < stats.dynamic
    assert sum(s.spawned for s in controller.history.values()) > 0  # grunts fire tracers

    window.hotspot_panel.refresh()
    tests = [int(window.hotspot_panel.tree.topLevelItem(k).text(1))
             for k in range(window.hotspot_panel.tree.topLevelItemCount())]
    assert tests and max(tests) > 0
    assert "the 0 cells" not in window.hotspot_panel.summary.text()
    for label in ("Lifespan", "Awake"):
        heatmap_action(window, label).trigger()
        window.state.flush()
        legend = window.overlay_panel.legend
        assert legend.vmax > legend.vmin, f"{label} heatmap shows one value only"
    assert window.document.is_dirty() == dirty_before  # playing never edits the level
