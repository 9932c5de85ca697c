"""The editor state of one side of compare mode.

A :class:`SideState` shows the shared document (its level, selection and edits) but its own
index: an :class:`~editor.model.index_sync.IndexSync` of the side's backend and parameters,
built through the document's one path to an index and following every edit incrementally, as
the editor's own index does. It is displayed through the state's ``frame_source`` hook, so the
views, overlay and queries read it exactly as they read the editor's index. Its overlay is
coloured on the scale it shares with the other side (:class:`SharedScale`).

While the editor's timeline shows a frame, the side shows that frame in a tree of its own
backend (:meth:`SideState.show_frame`, a :class:`~editor.model.compare.frames.SideReplay` of
the timeline's recording); :meth:`SideState.show_document` goes back to the edited level.
"""
from __future__ import annotations

from editor.model.compare.frames import SideReplay
from editor.model.compare.sides import SideSpec, scene_side_params
from editor.model.frame_step import FrameStats
from editor.model.index_sync import IndexSync
from editor.model.recording import Recording
from spatial.contract import NodeTable, SpatialIndex

from ..editor_state import EditorState
from ..overlay import OverlayGeometry
from ..scene_geometry import SceneGeometry
from .scale import rescaled, shared_range


class SideSource:
    """The ``frame_source`` of a side: its own index and node table, or those of the timeline
    frame it shows."""

    def __init__(self, state: SideState) -> None:
        self.state = state

    def shown_index(self) -> SpatialIndex | None:
        frame_index = self.state.frames.index
        return frame_index if frame_index is not None else self.state.index

    def shown_nodes(self) -> NodeTable | None:
        frame_index = self.state.frames.index
        if frame_index is not None:
            # the frame's own active pair search filled the pair-test column, as the editor's
            # overlay shows it during a simulation
            return frame_index.nodes()
        index = self.state.index
        if index is None:  # detached: the side shows nothing of its own
            return None
        if self.state.overlay_settings.metric == "pair_tests":
            index.pairs("all")  # fills the per-node pair-test column
        return index.nodes()


class SharedScale:
    """Colours every side's overlay on one value range (see :mod:`.scale`)."""

    def __init__(self) -> None:
        self.states: list[SideState] = []
        self.vmin = self.vmax = 0.0

    def changed(self, source: SideState) -> None:
        """``source`` has a new overlay: recolour every side on the shared range and tell the
        views of each side whose colours changed."""
        vmin, vmax = shared_range([s.raw_overlay for s in self.states])
        moved = (vmin, vmax) != (self.vmin, self.vmax)
        self.vmin, self.vmax = vmin, vmax
        for state in self.states:
            if state.raw_overlay is None or (state is not source and not moved):
                continue
            state.overlay = rescaled(state.raw_overlay, vmin, vmax)
            state.overlay_changed.emit(state.overlay)


class SideState(EditorState):
    """One side of compare mode (see the module docstring)."""

    def __init__(self, spec: SideSpec, scale: SharedScale, parent=None) -> None:
        super().__init__(parent)
        self.spec = spec
        self.scale = scale
        self.sync: IndexSync | None = None
        #: the overlay in its own colours (``overlay`` is it on the shared scale)
        self.raw_overlay: OverlayGeometry | None = None
        #: the timeline frame shown instead of the document (none until :meth:`show_frame`)
        self.frames = SideReplay(self._frame_index)
        scale.states.append(self)

    def set_document(self, document, geometry=None, built: SpatialIndex | None = None) -> None:
        """Show ``document`` with this side's own index (the document stays open: it is the
        editor's). ``geometry`` and ``built``: its draw arrays and its tree made on a worker
        from a snapshot of the document as it is now; without them they are made here."""
        scene = document.scene
        replaced = document is not self.document
        # built before the old one goes: a side that cannot be built (over the memory budget)
        # raises here and leaves this side as it was
        # a backend of its own: the side keeps it when the document's settings change
        if built is not None:
            sync = IndexSync(scene, built)
        else:
            sync = IndexSync(scene, self.spec.backend, scene_side_params(scene, self.spec))
        self.detach()
        self.frames.forget()  # a frame replayed into the previous backend
        self.sync = sync
        self.frame_source = SideSource(self)
        self.document = document
        document.scene_changed.connect(self._on_scene_changed)
        document.index_changed.connect(self._on_index_changed)
        self._geometry = geometry if geometry is not None else SceneGeometry()
        self._touched = None
        self._dirty = {"scene", "overlay", "queries", "selection"}
        self.flush()
        if replaced:  # the views frame the level; a new tree of the same one keeps the camera
            self.document_replaced.emit(document)

    def detach(self) -> None:
        """Stop following the document (the window closed or shows another level)."""
        if self.document is not None:
            self.document.scene_changed.disconnect(self._on_scene_changed)
            self.document.index_changed.disconnect(self._on_index_changed)
            self.document = None
        if self.sync is not None:
            self.sync.close()
            self.sync = None

    @property
    def index(self) -> SpatialIndex | None:
        """This side's live index (None before the first document, and once detached)."""
        return self.sync.index if self.sync is not None else None

    def _frame_index(self) -> SpatialIndex:
        """A new, unbuilt index of this side's backend and parameters (a frame's replay)."""
        index = self.index
        assert index is not None, "a frame is shown only by a side showing a document"
        return type(index)(index.params)

    def show_frame(self, recording: Recording, frame: int) -> FrameStats:
        """Show recorded ``frame`` of the timeline in this side's own kind of tree; the overlay
        follows on the next turn of the event loop. Returns the frame's stats."""
        stats = self.frames.show(recording, frame)
        self._dirty |= {"overlay", "queries"}
        self._schedule()
        return stats

    def show_document(self) -> None:
        """Show the edited document's tree again (the timeline stopped)."""
        if self.frames.replay is None:
            return
        self.frames.forget()
        self._dirty |= {"overlay", "queries"}
        self._schedule()

    def _adopt_overlay(self, geometry: OverlayGeometry) -> None:
        """Keep the side's own colours; the shared scale recolours both sides from them."""
        self.raw_overlay = geometry
        self.scale.changed(self)
