"""The editor's shared state between window, views, tools and panels.

:class:`EditorState` holds the open :class:`~.document.Document` (replaced on open/reload), the
grid, the active tool, the overlay settings and the live ray and frustum queries. Views and
panels read it and listen to its signals; nobody holds a document reference of their own, so a
reload is one ``document_replaced`` signal.

Derived data is recomputed lazily: edits and index changes mark the scene arrays, the overlay
or the queries dirty, and one posted event recomputes them once per event-loop turn, however
many edits arrived (a drag's mouse moves collapse to one redraw per frame).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Signal

from editor.model import ChangeKind
from editor.model.heatmap_metrics import QUERIES, HeatmapMetric
from editor.model.heatmap_metrics import metric as heatmap_metric
from editor.model.picking import box_touching, pick_ray
from editor.model.placement import floor_below
from editor.model.query_answers import QueryAnswers, QueryAsk, answer
from spatial.contract import NodeTable, SpatialIndex

from .document import Document
from .overlay import OverlayGeometry, OverlaySettings, build_overlay
from .scene_geometry import SceneArrays, SceneGeometry
from .views.camera import CameraShot

#: the event type that runs :meth:`EditorState.flush`
_FLUSH_EVENT = QEvent.Type(QEvent.registerEventType())

GRID_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256)

#: a top-view ray runs this high above the floor by default (a standing player's eye)
RAY_EYE_HEIGHT = 48.0


class FrameSource(Protocol):
    """What is displayed instead of the edited document (a simulated or replayed frame, a
    side of compare mode): see :attr:`EditorState.frame_source`."""

    def shown_index(self) -> SpatialIndex | None:
        """The index on screen (None: the document's)."""

    def shown_nodes(self) -> NodeTable | None:
        """Its node table (None: read the document's index)."""


@dataclass
class RayQuery:
    """A ray the user cast, and its answer from the live index."""

    origin: np.ndarray
    direction: np.ndarray            # unit length: ``t`` is a distance in world units
    max_t: float = math.inf
    result: object = None            # spatial.contract.RayResult (trace=True)
    brute_tested: int = 0            # objects a brute-force search tests: all of them
    index_name: str = ""             # the name of the index that answered


@dataclass
class FrustumQuery:
    """A camera frustum the user placed, and its answer from the live index."""

    shot: CameraShot
    result: object = None            # spatial.contract.QueryResult (trace=True)
    brute_tested: int = 0
    index_name: str = ""


class EditorState(QObject):
    """See the module docstring.

    Signals
    -------
    document_replaced(Document)
    scene_arrays_changed(SceneArrays)
    selection_changed(frozenset)
    overlay_changed(OverlayGeometry)
    queries_changed()
    grid_changed()
    tool_changed(str)
    status_message(str)
    """

    document_replaced = Signal(object)
    scene_arrays_changed = Signal(object)
    selection_changed = Signal(object)
    overlay_changed = Signal(object)
    #: a node table was read (before the overlay is built from it): settings that depend on
    #: the tree (the readable depth limit) are applied to the very first overlay
    node_table_read = Signal(object)
    queries_changed = Signal()
    grid_changed = Signal()
    tool_changed = Signal(str)
    status_message = Signal(str)
    inspected_node_changed = Signal(int)
    overlay_visible_changed = Signal(bool)
    query_layer_visible_changed = Signal(bool)
    ray_height_changed = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.grid_size = 16
        self.snap = True
        self.show_grid = True
        self.tool = "select"
        self.entity_class = "info_player_start"
        self.overlay_settings = OverlaySettings()
        self.overlay_visible = True
        self.overlay: OverlayGeometry | None = None
        self.node_table: NodeTable | None = None
        # reads the index ``node_table`` was read from (see :attr:`node_table_index`)
        self._node_table_index_reader: Callable[[], SpatialIndex | None] | None = None
        #: names the tree ``node_table`` was read from (an index's id, a live frame's reader's)
        self.node_table_origin = 0
        #: what is displayed instead of the edited document (a simulated or replayed frame):
        #: an object with ``shown_index()`` and ``shown_nodes()``, each None for "the document"
        self.frame_source: FrameSource | None = None
        self.query_layer_visible = True
        #: height of rays drawn in the top view (None: eye height above the floor at the start)
        self.ray_height: float | None = None
        #: depth range of the last brush created, per depth axis (the next one takes it)
        self.last_brush_range: dict[int, tuple[float, float]] = {}
        #: origin height of the last entity placed (the top view's next working height)
        self.placed_height: float | None = None
        self.scene_arrays: SceneArrays | None = None
        self.ray: RayQuery | None = None
        self.frustum: FrustumQuery | None = None
        self.inspected_node = -1
        self.timings: dict[str, float] = {}
        #: kernel families not loaded into this process yet (``editor.qt.kernel_readiness``):
        #: the gestures that would call them wait, and picking answers without them
        self.kernels_waiting: set[str] = set()
        self._geometry = SceneGeometry()
        self._dirty: set[str] = set()
        #: objects edited since the last flush (None: the whole scene is new)
        self._touched: set | None = None
        self._flush_posted = False
        #: (id of the index, its version) that :attr:`node_table` was read from (None: a frame)
        self._table_read: tuple[int, int] | None = None
        #: (index, its node table) read on the loading thread, for the first flush only
        self._prepared_nodes: tuple[SpatialIndex, NodeTable] | None = None
        #: (index, its version, a copy of it) made on the loading thread, until taken or stale
        self._index_copy: tuple[SpatialIndex, int, SpatialIndex] | None = None
        #: (index, its version, its stats) computed on the loading thread, until taken or stale
        self._stats: tuple[SpatialIndex, int, dict] | None = None

    # ------------------------------------------------------------------ document
    def offer_nodes(self, index: SpatialIndex, nodes: NodeTable) -> None:
        """``nodes``: the node table of ``index``, read on a worker thread with the level.
        The next :meth:`set_document` takes it for its first overlay when its document holds
        that very index, instead of reading it again on the window's thread."""
        self._prepared_nodes = (index, nodes)

    def offer_index_copy(self, index: SpatialIndex, version: int, copy: SpatialIndex) -> None:
        """``copy``: a copy of ``index`` at ``version``, made on the loading thread. The
        Statistics panel's first pair count takes it (:meth:`take_index_copy`) instead of
        copying the index on the window's thread."""
        self._index_copy = (index, version, copy)

    def offer_stats(self, index: SpatialIndex, version: int, stats: dict) -> None:
        """``stats``: ``index.stats()`` at ``version``, computed on the loading thread. The
        Statistics panel's first refresh takes it (:meth:`take_stats`)."""
        self._stats = (index, version, stats)

    def take_stats(self, index: SpatialIndex, version: int) -> dict | None:
        """The offered stats of ``index`` if it is still at ``version`` (once), else None."""
        offered, self._stats = self._stats, None
        if offered is not None and offered[0] is index and offered[1] == version:
            return offered[2]
        return None

    def take_index_copy(self, index: SpatialIndex, version: int) -> SpatialIndex | None:
        """The offered copy of ``index`` if it is still at ``version`` (once), else None."""
        offered, self._index_copy = self._index_copy, None
        if offered is not None and offered[0] is index and offered[1] == version:
            return offered[2]
        return None

    def set_document(self, document: Document, geometry: SceneGeometry | None = None) -> None:
        """Show ``document`` (the previous one is closed). ``geometry``: its draw arrays
        prepared on a worker thread (:func:`~.scene_geometry.prepare_geometry`)."""
        old = self.document
        if old is not None:
            old.scene_changed.disconnect(self._on_scene_changed)
            old.index_changed.disconnect(self._on_index_changed)
            old.rebuild_finished.disconnect()
            old.close()
        self.document = document
        document.scene_changed.connect(self._on_scene_changed)
        document.index_changed.connect(self._on_index_changed)
        # a rebuild is one event, not a burst: show its tree in the very next frame instead of
        # after whatever else the event loop has queued
        document.rebuild_finished.connect(lambda ms: self.flush())
        self._geometry = geometry if geometry is not None else SceneGeometry()
        self._touched = None
        self.inspected_node = -1
        self.last_brush_range = {}
        self.placed_height = None
        self._dirty = {"scene", "overlay", "queries", "selection"}
        self.flush()
        self._prepared_nodes = None  # offered for this first flush only
        self.document_replaced.emit(document)

    def _on_scene_changed(self, ids, kind) -> None:
        if kind & ~ChangeKind.SELECTION & ~ChangeKind.SETTINGS:
            self._dirty.add("scene")
            if self._touched is not None:
                self._touched.update(ids)
        if kind & ChangeKind.SELECTION:
            self._dirty.add("selection")
        self._schedule()

    def _on_index_changed(self) -> None:
        self._index_copy = None  # a copy of the index before this change: never counted
        self._dirty |= {"overlay", "queries"}
        self._schedule()

    def _schedule(self) -> None:
        # a posted event, not a zero-delay timer: Qt delivers posted events before its timers
        # and before the (low-priority) repaint requests, so the frame after an edit already
        # shows it instead of painting the old arrays first and the new ones a frame later
        if not self._flush_posted:
            self._flush_posted = True
            QCoreApplication.postEvent(self, QEvent(_FLUSH_EVENT))

    def event(self, ev) -> bool:
        if ev.type() == _FLUSH_EVENT:
            if self._flush_posted:
                self.flush()
            return True
        return super().event(ev)

    def flush_pending(self) -> bool:
        """True while edits wait for :meth:`flush` (it runs before the next frame)."""
        return self._flush_posted or bool(self._dirty)

    def flush(self) -> None:
        """Recompute whatever is dirty now (views call this before a screenshot)."""
        self._flush_posted = False
        dirty, self._dirty = self._dirty, set()
        if self.document is None:
            return
        if "scene" in dirty:
            start = time.perf_counter()
            touched, self._touched = self._touched, set()
            self.scene_arrays = self._geometry.update(self.document.scene, touched)
            self.timings["scene_ms"] = (time.perf_counter() - start) * 1e3
            self.scene_arrays_changed.emit(self.scene_arrays)
            dirty.add("selection")
        if "queries" in dirty or ("overlay" in dirty and not self.table_is_current()):
            # one node table for both, so traced rows and drawn boxes always agree
            self.node_table = self._fetch_table()
            self.node_table_read.emit(self.node_table)
        if "queries" in dirty:
            self._rerun_queries()
            if self.metric.recomputes_on(QUERIES):
                dirty.add("overlay")
        if "overlay" in dirty:
            self._rebuild_overlay(fetch=False)
        if "selection" in dirty:
            self.selection_changed.emit(self.document.selection)

    # ------------------------------------------------------------------ overlay
    @property
    def metric(self) -> HeatmapMetric:
        """The heatmap metric the overlay shows (:mod:`editor.model.heatmap_metrics`)."""
        return heatmap_metric(self.overlay_settings.metric)

    def set_overlay_settings(self, **changes) -> None:
        """Change overlay settings (metric, min_depth, max_depth, leaves_only, max_boxes...)."""
        values = dict(self.overlay_settings.__dict__)
        values.update(changes)
        self.overlay_settings = OverlaySettings(**values)
        self._dirty.add("overlay")
        self._schedule()

    def frame_shown(self) -> None:
        """Another frame of the timeline is on display: its tree is drawn, and the ray and
        frustum placed are answered by it (their traced rows are rows of its node table)."""
        self._dirty.add("overlay")
        if self.ray is not None or self.frustum is not None:
            self._dirty.add("queries")
        self._schedule()

    def set_overlay_visible(self, visible: bool) -> None:
        changed = bool(visible) != self.overlay_visible
        self.overlay_visible = bool(visible)
        self._dirty.add("overlay")
        self._schedule()
        if changed:
            self.overlay_visible_changed.emit(self.overlay_visible)

    def query_visits(self) -> np.ndarray | None:
        """Per node row: 2 visited by the last query, 1 culled by it, 0 untouched."""
        table = self.node_table
        if table is None:
            return None
        visits = np.zeros(len(table), dtype=np.int8)
        for q in (self.frustum, self.ray):
            res = getattr(q, "result", None)
            if res is None:
                continue
            culled = getattr(res, "culled", None)
            if culled is not None and len(culled):
                visits[culled[culled < len(visits)]] = 1
            if res.visited is not None and len(res.visited):
                visits[res.visited[res.visited < len(visits)]] = 2
        return visits

    def _open_document(self) -> Document:
        """The open document, for the queries, picking and the overlay: :meth:`flush` runs them
        only with one, and the views and tools wait for one before a gesture."""
        assert self.document is not None, "no document is open yet"
        return self.document

    @property
    def node_table_index(self) -> SpatialIndex | None:
        """The index :attr:`node_table` was read from. A live game's frame brings its index
        over from the processing process only when this is read (the overlay needs only the
        frame's node table)."""
        reader = self._node_table_index_reader
        return reader() if reader is not None else None

    @node_table_index.setter
    def node_table_index(self, index: SpatialIndex | None) -> None:
        self._node_table_index_reader = None if index is None else (lambda: index)
        self.node_table_origin = id(index)

    def _shows_frame(self) -> bool:
        """A frame is displayed instead of the document (told without reading its index)."""
        source = self.frame_source
        if source is None:
            return False
        shows = getattr(source, "shows_frame_index", None)
        return shows() if shows is not None else source.shown_index() is not None

    def shown_names(self) -> dict[int, str] | None:
        """The names a game gave the objects of the frame on display (None: the document's
        objects are on display, named by the document)."""
        if not self._shows_frame():
            return None
        names = getattr(self.frame_source, "shown_names", None)
        return names() if names is not None else None

    def shown_index(self):
        """The index on screen: the displayed frame's (simulation, replay) or the document's."""
        source = self.frame_source.shown_index() if self.frame_source is not None else None
        return source if source is not None else self._open_document().index

    def table_is_current(self) -> bool:
        """Whether :attr:`node_table` is the document's index as it is now (read since its
        last change, no frame shown instead, no metric preparing columns of its own): a
        change of the overlay's settings alone then draws it again without reading the tree
        again (on a 2,000,000-triangle mesh a read costs about a second)."""
        doc = self.document
        return (self.node_table is not None and doc is not None
                and not self._shows_frame()
                and self.metric.prepare is None
                and self._table_read == (id(doc.index), doc.index_version))

    def _fetch_table(self):
        self._table_read = None
        nodes = self.frame_source.shown_nodes() if self.frame_source is not None else None
        if nodes is not None:
            reader = getattr(self.frame_source, "shown_index_reader", None)
            if reader is not None and self._shows_frame():
                self._node_table_index_reader = reader()
                self.node_table_origin = id(self._node_table_index_reader)
            else:
                self.node_table_index = self.shown_index()
            return nodes
        index = self.node_table_index = self._open_document().index
        self._table_read = (id(index), self._open_document().index_version)
        prepare = self.metric.prepare
        prepared, self._prepared_nodes = self._prepared_nodes, None
        if prepared is not None and prepared[0] is index and prepare is None:
            # read with the level on the loading thread, and the index has not changed since
            # (the first flush): on a 2,000,000-triangle mesh a read costs seconds here
            return prepared[1]
        if prepare is not None:
            prepare(index)  # e.g. a pair search fills the per-node pair-test column
        return index.nodes()

    def _rebuild_overlay(self, fetch: bool = True) -> None:
        start = time.perf_counter()
        if fetch or self.node_table is None:
            self.node_table = self._fetch_table()
            self.node_table_read.emit(self.node_table)
        if self.inspected_node >= len(self.node_table):
            self.inspected_node = -1
        self._adopt_overlay(self._built_overlay(self.node_table))
        self.timings["overlay_ms"] = (time.perf_counter() - start) * 1e3

    def _built_overlay(self, table) -> OverlayGeometry:
        """The overlay arrays of ``table`` with this state's settings, query visits and (for a
        BSP with split planes on) the split planes of :attr:`node_table_index`."""
        planes = None
        index = self.node_table_index if self.overlay_settings.show_planes else None
        if index is not None and hasattr(index, "node_planes"):
            planes = index.node_planes()
        return build_overlay(table, self.overlay_settings, self.query_visits(), planes=planes)

    def _adopt_overlay(self, geometry: OverlayGeometry) -> None:
        """Make ``geometry`` the overlay the views draw (a compare side rescales it first)."""
        self.overlay = geometry
        self.overlay_changed.emit(self.overlay)

    # ------------------------------------------------------------------ grid and tools
    def set_grid_size(self, size: int) -> None:
        if size not in GRID_SIZES:
            raise ValueError(f"grid size must be one of {GRID_SIZES}, got {size}")
        self.grid_size = int(size)
        self.grid_changed.emit()

    def step_grid(self, steps: int) -> None:
        i = GRID_SIZES.index(self.grid_size) if self.grid_size in GRID_SIZES else 4
        self.set_grid_size(GRID_SIZES[max(0, min(len(GRID_SIZES) - 1, i + steps))])

    def set_snap(self, on: bool) -> None:
        self.snap = bool(on)
        self.grid_changed.emit()

    def set_show_grid(self, on: bool) -> None:
        self.show_grid = bool(on)
        self.grid_changed.emit()

    def snap_value(self, value):
        """``value`` rounded to the grid (unchanged when snapping is off)."""
        if not self.snap:
            return value
        g = self.grid_size
        return np.round(np.asarray(value, dtype=np.float64) / g) * g

    def set_tool(self, name: str) -> None:
        """Make ``name`` the active tool; the previous tool's query results are cleared."""
        if name != self.tool:
            self.tool = name
            self.clear_queries()
            self.tool_changed.emit(name)

    # ------------------------------------------------------------------ queries
    def cast_ray(self, origin, direction, max_t: float = math.inf) -> RayQuery:
        """Cast a ray through the live index (trace on) and remember it as the ray query."""
        d = np.asarray(direction, dtype=np.float64).reshape(3)
        n = np.linalg.norm(d)
        if not n:
            raise ValueError("ray direction must not be zero")
        self.flush()  # pending index changes first: traced rows must match the node table
        self.ray = RayQuery(np.asarray(origin, dtype=np.float64).reshape(3), d / n, float(max_t))
        self._rerun_queries()
        if self.metric.recomputes_on(QUERIES):
            self._rebuild_overlay(fetch=False)
        return self.ray

    def set_frustum(self, shot: CameraShot | None) -> FrustumQuery | None:
        """Place (or clear, with ``None``) the frustum query and run it."""
        self.flush()
        self.frustum = None if shot is None else FrustumQuery(shot)
        self._rerun_queries()
        if self.metric.recomputes_on(QUERIES):
            self._rebuild_overlay(fetch=False)
        return self.frustum

    def clear_ray(self) -> None:
        self.ray = None
        self._rerun_queries()

    def clear_queries(self) -> bool:
        """Forget the ray and the frustum (the query layer empties); True if there were any."""
        had = self.ray is not None or self.frustum is not None
        if had and self.document is not None:
            self.ray = self.frustum = None
            self._rerun_queries()
            if self.metric.recomputes_on(QUERIES):
                self._rebuild_overlay(fetch=False)
        return had

    def set_ray_height(self, height: float | None) -> None:
        """Fix the height of rays drawn in the top view (None: automatic, eye height above the
        floor where the ray starts). A level ray already cast moves to the new height."""
        self.ray_height = None if height is None else float(height)
        ray = self.ray
        if height is not None and ray is not None and ray.direction[2] == 0 \
                and ray.origin[2] != self.ray_height:
            origin = ray.origin.copy()
            origin[2] = self.ray_height
            self.cast_ray(origin, ray.direction, ray.max_t)
        self.ray_height_changed.emit(self.ray_height)

    def top_view_ray_height(self, x: float, y: float) -> float:
        """The height a ray drawn in the top view from ``(x, y)`` runs at: the fixed
        :attr:`ray_height`, else :data:`RAY_EYE_HEIGHT` above the floor there (found by a
        downward ray through the index), else the middle of the level."""
        if self.ray_height is not None:
            return self.ray_height
        doc = self._open_document()
        floor = floor_below(doc.scene, doc.index, x, y, clearance=RAY_EYE_HEIGHT)
        if floor is not None:
            return floor + RAY_EYE_HEIGHT
        lo, hi = doc.scene.bounds()
        return float((lo[2] + hi[2]) / 2)

    def set_query_layer_visible(self, visible: bool) -> None:
        """Show or hide the query layer (ray, frustum, their hits, visited and culled nodes)."""
        if bool(visible) != self.query_layer_visible:
            self.query_layer_visible = bool(visible)
            self.query_layer_visible_changed.emit(self.query_layer_visible)
            self.queries_changed.emit()

    def _rerun_queries(self) -> None:
        # the traced rows must be rows of the node table on screen: a live frame's answers
        # come with its table, else the shown index is asked
        ray, frustum = self.ray, self.frustum
        ask = QueryAsk(None if ray is None else (ray.origin, ray.direction, ray.max_t),
                       None if frustum is None else frustum.shot.planes())
        answers = self._frame_answers(ask)
        if answers is None:
            answers = answer(self.shown_index(), ask)
        for query, result in ((ray, answers.ray), (frustum, answers.frustum)):
            if query is not None:
                query.result, query.brute_tested = result, answers.objects
                query.index_name = answers.index_name
        self.queries_changed.emit()

    def _frame_answers(self, ask: QueryAsk) -> QueryAnswers | None:
        """The shown frame's answers to ``ask``, made where its index lives (a live game's
        processing), or None. Told of every ask, so the next frames come with answers."""
        source = self.frame_source
        asker = getattr(source, "shown_query_answers", None) if source is not None else None
        if asker is None or not self._shows_frame():
            return None
        return asker(ask)

    def pick(self, origin, direction) -> list[int]:
        """Ids hit by a ray through the live index, nearest first (picking is a CPU ray cast).
        While picking's kernels are not loaded (``"pick"`` in :attr:`kernels_waiting`) the
        boxes come from the index's object table in numpy: the same ids, no kernel called."""
        doc = self._open_document()
        return pick_ray(doc.scene, doc.index, origin, direction,
                        compiled="pick" not in self.kernels_waiting)

    def box_candidates(self, lo, hi) -> np.ndarray:
        """Ids of the objects whose boxes touch ``lo``..``hi`` (a box selection), ascending;
        like :meth:`pick`, without a kernel while picking's are not loaded."""
        return box_touching(self._open_document().index, lo, hi,
                            compiled="pick" not in self.kernels_waiting)

    def inspect_node(self, row: int) -> None:
        self.inspected_node = int(row)
        self.inspected_node_changed.emit(self.inspected_node)
