"""The Statistics panel counts pairs on a worker thread, over a snapshot of the index."""
from __future__ import annotations

import numpy as np

from editor.model import Transform


def test_pair_count_arrives_from_the_worker_and_follows_edits(qtbot, window):
    doc, st, panel = window.document, window.state, window.stats_panel
    panel.release()
    panel.stats = {}
    panel._cancel_count()
    panel._count_pairs(doc, doc.index, doc.index.stats())
    assert panel.pair_count_pending(), "the count runs off the GUI thread"
    # an edit while the count runs: the old count is dropped and the new index counted
    brush = doc.scene.brush_ids()[0]
    doc.push(Transform([brush], delta=np.array([16.0, 0.0, 0.0])))
    st.flush()
    panel._timer.stop()
    qtbot.waitUntil(lambda: not panel.pair_count_pending(), timeout=20000)
    if not panel.stats:  # the edited index is counted next, from the panel's timer
        panel._count_pairs(doc, doc.index, doc.index.stats())
        qtbot.waitUntil(lambda: bool(panel.stats), timeout=20000)
    pairs = doc.index.pairs("all")
    assert panel.stats["candidates"] == pairs.tests
    assert panel.stats["overlapping"] == len(pairs.pairs)
    assert panel.values["pairs"].text().startswith(f"{pairs.tests} / {len(pairs.pairs)}")
