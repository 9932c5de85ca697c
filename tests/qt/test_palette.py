"""The entity palette lists the level's own classes first and arms the entity tool."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from .conftest import click

FREEDOOM1 = Path("/usr/share/games/doom/freedoom1.wad")


def _click_class(qtbot, panel, name: str) -> None:
    lst = panel.list
    row = next(r for r in range(lst.count()) if lst.item(r).data(Qt.UserRole) == name)
    lst.scrollToItem(lst.item(row))
    rect = lst.visualItemRect(lst.item(row))
    qtbot.mouseClick(lst.viewport(), Qt.LeftButton, pos=rect.center())


def _level_section(panel) -> list[tuple[str, int]]:
    """(class, count) of the "In this level" part, in list order."""
    lst, rows = panel.list, []
    for r in range(1, lst.count()):
        item = lst.item(r)
        name = item.data(Qt.UserRole)
        if name is None:  # the next heading
            break
        rows.append((name, int(item.text().rsplit("×", 1)[1])))
    return rows


def test_the_levels_classes_come_first_with_their_counts(window):
    doc, panel = window.document, window.palette_panel
    truth = Counter(doc.scene[i].classname for i in doc.scene.point_entity_ids())
    assert panel.list.item(0).text().startswith("In this level")
    section = _level_section(panel)
    assert dict(section) == dict(truth)
    assert [c for _, c in section] == sorted(truth.values(), reverse=True), "most used first"


def test_placing_from_the_palette_counts_the_new_entity(window, qtbot):
    panel = window.palette_panel
    top = window.views2d["Top"]
    _click_class(qtbot, panel, "item_health")
    assert window.state.tool == "entity" and window.state.entity_class == "item_health"
    before = dict(_level_section(panel)).get("item_health", 0)
    click(top, (101, 37))
    qtbot.waitUntil(lambda: dict(_level_section(panel)).get("item_health", 0) == before + 1)
    window.act_undo.trigger()
    qtbot.waitUntil(lambda: dict(_level_section(panel)).get("item_health", 0) == before)


def test_headings_cannot_be_chosen_and_filter_keeps_classes_only(window, qtbot):
    panel = window.palette_panel
    heading = panel.list.item(0)
    assert not heading.flags() & Qt.ItemIsSelectable
    qtbot.keyClicks(panel.filter, "monster_")
    shown = [panel.list.item(r) for r in range(panel.list.count()) if not panel.list.item(r).isHidden()]
    assert shown and all(i.data(Qt.UserRole).startswith("monster_") for i in shown)


def test_a_doom_map_lists_its_things(window, qtbot):
    if not FREEDOOM1.exists():
        pytest.skip(f"{FREEDOOM1} is absent (Debian package freedoom)")
    assert window.open_file(f"{FREEDOOM1}:E1M1", background=False)
    window.state.flush()
    qtbot.waitUntil(lambda: bool(_level_section(window.palette_panel)))
    names = dict(_level_section(window.palette_panel))
    assert any(n.startswith("monster_") for n in names), names
    assert "air_bubbles" not in names, "the Quake catalogue is not what this level holds"
