"""Parameters whose worst-case memory exceeds the budget are refused in the editor too."""
from __future__ import annotations

from spatial.memory_budget import MEMORY_BUDGET_ENV

from .conftest import switch_backend


def test_absurd_parameters_are_refused_with_the_document_and_index_untouched(window, qtbot,
                                                                            monkeypatch):
    doc, st = window.document, window.state
    switch_backend(window, qtbot, "quadtree")
    monkeypatch.setenv(MEMORY_BUDGET_ENV, "256")
    index, settings, state = doc.index, doc.scene.settings, doc.scene.state()
    nodes, depth = len(index.nodes()), index.params.max_depth
    commands, dirty = len(doc.stack), doc.is_dirty()
    messages = []
    st.status_message.connect(messages.append)
    spin = window.params_panel.widgets["max_depth"]
    spin.setValue(24)  # the editor's own widget: the edit goes through the undo stack
    st.flush()
    assert len(messages) == 1 and "\n" not in messages[0]
    assert "quadtree with max_depth=24" in messages[0]
    assert "memory budget of 256 MB" in messages[0]
    assert messages[0] in window.statusBar().currentMessage()
    assert doc.scene.settings == settings and doc.scene.state() == state
    assert len(doc.stack) == commands and doc.is_dirty() == dirty
    assert doc.index is index and index.params.max_depth == depth
    assert len(index.nodes()) == nodes
    assert spin.value() == depth, "the widget shows the document's value again"
