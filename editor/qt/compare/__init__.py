"""Compare mode: two partitions of the open level side by side (View → Compare…).

* :mod:`.side_state` — an :class:`~editor.qt.editor_state.EditorState` per side whose index is
  the side's own, following every edit of the shared document;
* :mod:`.scale` — one colour scale over both sides' overlays;
* :mod:`.links` — what the two views share: camera, and the ray and frustum of the tools;
* :mod:`.table` — the A, B, B/A table (the ``compare`` command's numbers);
* :mod:`.difference_view` — the difference heatmap and the objects that cost most more;
* :mod:`.controls` — a side's backend and parameter boxes;
* :mod:`.side_build` — the sides' trees built on a worker, stale results dropped;
* :mod:`.timeline_follow` — both sides on the timeline's frame;
* :mod:`.frame_figures` — A and B on that frame, and over the frames;
* :mod:`.window` — the compare window that puts them together;
* :mod:`.tree_diff_view` — the nodes an edit created, split, merged or removed;
* :mod:`.readable_view` — focus on a subtree and the automatic depth limit;
* :mod:`.screenshot` — screenshot mode's ``--compare``; :mod:`.install` — the window's hooks.

The measuring is Qt-free in :mod:`editor.model.compare`.
"""
