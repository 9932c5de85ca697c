"""Compare mode: two partitions of the open level side by side (View → Compare…).

* :mod:`.side_state` — an :class:`~editor.qt.editor_state.EditorState` per side whose index is
  the side's own, following every edit of the shared document;
* :mod:`.scale` — one colour scale over both sides' overlays;
* :mod:`.links` — what the two views share: camera, and the ray and frustum of the tools;
* :mod:`.table` — the A, B, B/A table (the ``compare`` command's numbers);
* :mod:`.difference_view` — the difference heatmap and the objects that cost most more;
* :mod:`.window` — the compare window that puts them together;
* :mod:`.tree_diff_view` — the nodes an edit created, split, merged or removed.

The measuring is Qt-free in :mod:`editor.model.compare`.
"""
