"""On e1m1 the hotspot list names the objects a hot cell stores; a click selects those."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from editor.model.hotspot_pairs import find_cell

E1M1 = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "quake" / "quake_id1_e1m1.map"


@pytest.mark.slow
def test_clicking_e1m1s_top_hotspot_selects_the_objects_stored_there(window, qtbot):
    if not E1M1.exists():
        pytest.skip(f"{E1M1} is not here")
    assert window.open_file(str(E1M1), background=False)
    c, panel, doc = window.timeline, window.hotspot_panel, window.document
    c.step(40)
    panel.refresh()
    top = panel.tree.topLevelItem(0)
    row = find_cell(c.shown_nodes(), panel.hotspots[0].lo, panel.hotspots[0].hi)
    stored = set(c.shown_index().node_objects(row).tolist())
    assert top.childCount() > 0 and "tests a frame" in top.child(0).text(0)
    assert top.child(0).text(0).split()[0] in ("brush", "wall") or "_" in top.child(0).text(0).split()[0]
    tree = panel.tree
    qtbot.mouseClick(tree.viewport(), Qt.LeftButton, pos=tree.visualItemRect(top).center())
    selected = set(doc.selection)
    assert selected == {oid for oid in stored if oid in doc.scene}
    assert 0 < len(selected) < 1568 // 2  # not every object inside the cell's box
    assert not doc.is_dirty()
    pair_rows = [top.child(k) for k in range(top.childCount()) if top.child(k).text(0).startswith("pair ")]
    if pair_rows:
        top.setExpanded(True)
        tree.scrollToItem(pair_rows[0])
        qtbot.mouseClick(tree.viewport(), Qt.LeftButton, pos=tree.visualItemRect(pair_rows[0]).center())
        a, b = pair_rows[0].data(0, Qt.UserRole)
        assert set(doc.selection) == {oid for oid in (a, b) if oid in doc.scene}
