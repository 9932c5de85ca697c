"""Simulation ▸ Animate level entities brings a real level to life in the window."""
from __future__ import annotations

from pathlib import Path

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
    if not window.open_file(str(path), background=False):
        pytest.skip(f"the window cannot open {path} on this build")
    combo = window.findChild(QComboBox, "backend_combo")
    combo.setCurrentIndex(combo.findData("octree") if combo.findData("octree") >= 0
                          else combo.findText("octree"))
    window.state.flush()
    assert window.document.index.name == "octree"


DOOM = Path("/usr/share/games/doom/freedoom1.wad")


def level_path(level: str) -> str:
    if level == "e1m1":
        return str(shared_file("quake", "quake_id1_e1m1.map"))
    if not DOOM.exists():
        pytest.skip(f"{DOOM} is absent (Debian package freedoom)")
    return f"{DOOM}:E1M1"


@pytest.mark.slow
@pytest.mark.parametrize("level", ["e1m1", "freedoom1-E1M1"])
def test_animate_level_entities_from_the_menu_keeps_the_level_busy(window, qtbot, level):
    open_on_octree(window, level_path(level))
    controller = window.timeline
    animate = menu_action(window, "Simulation", "Animate level entities")
    assert animate.isCheckable() and animate.isChecked()  # on by default, as in `simulate`
    dirty_before = window.document.is_dirty()

    animate.trigger()  # off: only entities with motion keys move, and the level has none
    assert not controller.animate
    step = menu_action(window, "Simulation", "Step one frame")
    for _ in range(40):
        step.trigger()  # the first makes the simulation on a worker; the Steps add up
    qtbot.waitUntil(lambda: controller.frame == 40, timeout=60_000)
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
    assert sum(s.spawned for s in controller.history.values()) > 0  # shooters fire

    window.hotspot_panel.refresh()
    tests = [int(window.hotspot_panel.tree.topLevelItem(k).text(1))
             for k in range(window.hotspot_panel.tree.topLevelItemCount())]
    assert tests and max(tests) > 0
    assert "the 0 cells" not in window.hotspot_panel.summary.text()
    heatmap_action(window, "Lifespan").trigger()
    window.state.flush()
    legend = window.overlay_panel.legend
    assert legend.vmax > legend.vmin, "the lifespan heatmap shows one value only"
    heatmap_action(window, "Awake").trigger()
    window.state.flush()
    awake_nodes = controller.shown_nodes().awake
    assert awake_nodes.any() and not awake_nodes.all(), "the awake heatmap shows one colour"
    assert window.document.is_dirty() == dirty_before  # playing never edits the level
