"""The brushes of a 2D view as cached graphics items per outline chunk (its fills, its edges).

A single item for the whole level meant every edit re-rasterised every brush outline of the
view into its pixmap cache (on e3m4, 3,441 hulls and their edges, three views per edit) and
repainted the whole viewport. With items per chunk of neighbouring brushes
(:class:`~.brush_outlines.BrushOutlines`), an edit re-rasterises the chunks it touched and
Qt repaints only their patches of the viewport; the other chunks are blitted from their caches
when a repaint crosses them.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtGui import QGuiApplication, QPixmapCache
from PySide6.QtWidgets import QGraphicsItem

from .brush_outlines import BrushOutlines, OutlineChunk
from .items2d import ChunkPathsItem, ItemGroup

#: stacking order of the brush items in the view (under walls, entities and the overlay):
#: every chunk's fill under every chunk's edges, as when one item drew them all, so a
#: neighbour's translucent fill never dims an edge
FILL_Z = 0.0
EDGE_Z = 0.05

#: screens' worth of pixels Qt's pixmap cache keeps room for: the fill and edge caches of every
#: chunk of the three 2D views (a view is about a quarter of the screen; chunks' rectangles
#: overlap where brushes cross their tile), plus the views' other cached items
CACHED_SCREENS = 12

#: chunks a view wraps in items per event-loop turn when a whole new level arrives: a
#: 50,000-brush level has about 1,200 chunks a view (7,300 items in the three views), and
#: making all their items and then rasterising every one in the first frame froze the window
#: for most of a second; in slices, each turn makes and first paints at most this many per
#: view, and the window stays live
ARRIVAL_SLICE = 120
#: ms between two slices: the window paints the last one in between
ARRIVAL_PAUSE_MS = 30
#: pauses a slice waits at most for :attr:`BrushLayer.wait_for` (then it goes ahead anyway)
ARRIVAL_MAX_WAITS = 40


def reserve_pixmap_cache() -> int:
    """Raise Qt's pixmap cache limit (KiB) to hold every chunk's cached pixmaps at once.

    The chunk items paint from pixmap caches kept in Qt's global pixmap cache, 10 MiB by
    default. The chunks of a big level's three views need more than that, so the cache
    evicted pixmaps it would blit again the next frame: every repaint after an edit
    re-rasterised thousands of chunks (24,000 ``drawPath`` calls in four drag steps on 50,000
    brushes) instead of blitting them. Returns the limit now in force.
    """
    screen = QGuiApplication.primaryScreen()
    pixels = screen.size().width() * screen.size().height() if screen is not None else 1920 * 1080
    need_kib = pixels * 4 * CACHED_SCREENS // 1024
    if QPixmapCache.cacheLimit() < need_kib:
        QPixmapCache.setCacheLimit(need_kib)
    return QPixmapCache.cacheLimit()


class BrushLayer:
    """Keeps two cached :class:`~.items2d.ChunkPathsItem` per chunk of ``outlines`` in
    ``view_box``: its hull fills (children of one group item) and its edges (of another).

    Parameters
    ----------
    view_box : pyqtgraph.ViewBox
        Where the items live. They do not count for its auto-range: the views frame the
        level from the scene's bounds, and an item added for a new chunk would otherwise
        move the view under the cursor in the middle of an edit.
    outlines : BrushOutlines
    fill_brush, edge_pen
        How hulls are filled and edges stroked.
    """

    def __init__(self, view_box, outlines: BrushOutlines, fill_brush, edge_pen) -> None:
        self.view_box = view_box
        self.outlines = outlines
        self.fill_brush = fill_brush
        self.edge_pen = edge_pen
        reserve_pixmap_cache()
        self._items: dict[int, tuple[ChunkPathsItem, ChunkPathsItem]] = {}
        #: chunks of a new chunk list still waiting for their items (see :data:`ARRIVAL_SLICE`)
        self._waiting: deque[OutlineChunk] = deque()
        self._arrival = QTimer()
        self._arrival.setSingleShot(True)
        # not 0: a zero-delay timer fires before the window's repaint (a 5 ms timer of Qt's),
        # so two slices would be made and then painted in one frame
        self._arrival.setInterval(ARRIVAL_PAUSE_MS)
        self._arrival.timeout.connect(self._next_slice)
        #: event-loop turns that made items for an arriving level
        self.arrival_slices = 0
        #: ``wait_for()`` True: a heavier frame is due (the 3D view's first full frame of the
        #: level), so the next slice waits a pause rather than being painted in that frame
        self.wait_for: Callable[[], bool] | None = None
        self._waits = 0
        # every chunk's fill under every chunk's edges: two groups, each added to the view once
        self._fills, self._edges = ItemGroup(FILL_Z), ItemGroup(EDGE_Z)
        for group in (self._fills, self._edges):
            view_box.addItem(group, ignoreBounds=True)

    def items(self) -> list[ChunkPathsItem]:
        """The chunk items (fill and edges of each chunk), in chunk order."""
        return [item for c in self.outlines.chunks for item in self._items.get(id(c), ())]

    def items_of(self, chunk: OutlineChunk) -> tuple[ChunkPathsItem, ...]:
        """The fill and edge items of ``chunk`` (none while it never held a brush)."""
        return self._items.get(id(chunk), ())

    def pending(self) -> int:
        """Chunks of an arriving level not yet wrapped in items (0: the view is complete)."""
        return len(self._waiting)

    def finish(self) -> None:
        """Wrap every waiting chunk in its items now (a screenshot shows the whole level)."""
        self._arrival.stop()
        self._add_items(list(self._waiting))
        self._waiting.clear()

    def sync(self) -> None:
        """Bring the items in line with the outlines' last update: new items for a new chunk
        list (in slices of :data:`ARRIVAL_SLICE` chunks, one per event-loop turn, when it is
        big), new paths for the dirty chunks only."""
        outlines = self.outlines
        if outlines.rebuilt_all:
            # a new chunk list: new groups (dropping a group drops its items with it)
            self._items = {}
            self._arrival.stop()
            for group in (self._fills, self._edges):
                self.view_box.removeItem(group)
            self._fills, self._edges = ItemGroup(FILL_Z), ItemGroup(EDGE_Z)
            for group in (self._fills, self._edges):
                self.view_box.addItem(group, ignoreBounds=True)
            self._waiting = deque(chunk for chunk in outlines.dirty if chunk.ids)
            self.arrival_slices = self._waits = 0
            if len(self._waiting) <= ARRIVAL_SLICE:
                self.finish()  # a level of a slice or less is drawn at once, as always
            else:
                # the first frame shows the level in the other views (3D, overlay) and the
                # slices follow, one a turn, each painted in the frame after it
                self._arrival.start()
            return
        # a chunk still waiting reads its paths when its turn comes: nothing to do for it now
        waiting = {id(chunk) for chunk in self._waiting}
        self._add_items([chunk for chunk in outlines.dirty if id(chunk) not in waiting])

    def _next_slice(self) -> None:
        """Wrap the next :data:`ARRIVAL_SLICE` waiting chunks in items; the rest wait for the
        next turn (after this one's frame is painted)."""
        if self.wait_for is not None and self._waits < ARRIVAL_MAX_WAITS and self.wait_for():
            self._waits += 1
            self._arrival.start()
            return
        take = min(ARRIVAL_SLICE, len(self._waiting))
        self._add_items([self._waiting.popleft() for _ in range(take)])
        self.arrival_slices += 1
        if self._waiting:
            self._arrival.start()

    def _add_items(self, chunks) -> None:
        for chunk in chunks:
            pair = self._items.get(id(chunk))
            if pair is None and not chunk.ids:
                continue  # an empty tile needs no items until a brush moves in
            if pair is None:
                pair = (ChunkPathsItem(), ChunkPathsItem())
                for item, group in zip(pair, (self._fills, self._edges)):
                    item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
                    item.setParentItem(group)
                self._items[id(chunk)] = pair
            fill, edges = chunk.layers(self.fill_brush, self.edge_pen)
            pair[0].set_layers([fill])
            pair[1].set_layers([edges])
