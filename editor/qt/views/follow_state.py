"""What every level view follows in the editor state.

Both views (3D and 2D) keep their items in step with the same model events through handlers of
the same names; connecting them here keeps the two lists from drifting apart.
"""
from __future__ import annotations


def follow_state(view, state) -> None:
    """Connect ``view``'s ``_on_<thing>_changed`` handlers to ``state``'s change signals.

    Parameters
    ----------
    view : View3D or View2D
        Has ``_on_scene_arrays_changed``, ``_on_selection_changed``, ``_on_overlay_changed``,
        ``_on_queries_changed``, ``_on_grid_changed`` and ``frame_scene``.
    state : editor.qt.editor_state.EditorState
    """
    state.scene_arrays_changed.connect(view._on_scene_arrays_changed)
    state.selection_changed.connect(view._on_selection_changed)
    state.overlay_changed.connect(view._on_overlay_changed)
    # the query layer also marks the inspected node
    state.queries_changed.connect(view._on_queries_changed)
    state.inspected_node_changed.connect(lambda row: view._on_queries_changed())
    state.grid_changed.connect(view._on_grid_changed)
    state.document_replaced.connect(lambda document: view.frame_scene())
