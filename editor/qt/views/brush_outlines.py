"""Brush outlines of one 2D view, kept in spatial chunks so an edit redraws only what it touched.

Every brush is drawn as its projected hull (a faint fill) and its projected edges. Brushes are
grouped in chunks of neighbours: the square tiles of a quadtree over the view's plane, split
until a tile holds at most :data:`CHUNK_SIZE` brush centres, so a chunk covers a compact patch
of the view. A tile is a run of Z-order (Morton) codes of the quantised centres, which makes
finding a brush's tile one binary search. Each chunk is one pair of painter paths, drawn by items of
its own with their own pixmap caches (:class:`~.brush_layer.BrushLayer`): an edit rebuilds
and re-rasterises only the chunks holding the brushes it changed, and the window repaints only
their patches.

A new brush joins the tile holding its centre; a moved brush stays in its chunk while its
centre stays in the tile and moves to the tile that holds it otherwise, so chunks stay compact
however far brushes travel. A tile that grows past twice :data:`CHUNK_SIZE` is split in four.
Hulls are cached per brush by the identity of its tessellation, which changes exactly when the
brush does.
"""
from __future__ import annotations

import bisect

import numpy as np
from PySide6.QtGui import QPainterPath

from ..scene_geometry import convex_hull, convex_hulls
from .items2d import polygons_path, segments_path

#: brushes per chunk: small enough that rebuilding and re-rasterising one is cheap, big enough
#: that a big level is a few hundred items, not thousands
CHUNK_SIZE = 96

#: bits per axis of the quantised centres the Morton codes interleave
_CODE_BITS = 16
_CODE_MAX = (1 << _CODE_BITS) - 1


def morton_codes(points: np.ndarray) -> np.ndarray:
    """Z-order codes of ``(N, 2)`` integer points in ``[0, 2**16)``: the bits of the two
    coordinates interleaved, so points close on the curve are close in the plane."""
    def spread(v):
        v = v.astype(np.uint64) & np.uint64(0xFFFF)
        v = (v | (v << np.uint64(8))) & np.uint64(0x00FF00FF)
        v = (v | (v << np.uint64(4))) & np.uint64(0x0F0F0F0F)
        v = (v | (v << np.uint64(2))) & np.uint64(0x33333333)
        return (v | (v << np.uint64(1))) & np.uint64(0x55555555)
    pts = np.asarray(points).reshape(-1, 2)
    return (spread(pts[:, 0]) | (spread(pts[:, 1]) << np.uint64(1))).astype(np.int64)


class OutlineChunk:
    """Brushes whose centres fall in one quadtree tile (the Morton codes ``start`` to
    ``start + 2**shift``), and their fill and edge paths."""

    __slots__ = ("start", "shift", "ids", "fill", "edges")

    def __init__(self, start: int, shift: int) -> None:
        self.start = int(start)
        self.shift = int(shift)
        self.ids: list[int] = []
        self.fill = QPainterPath()
        self.edges = QPainterPath()

    def layers(self, fill_brush, edge_pen) -> list:
        """``(path, pen, brush)`` layers for :class:`~.items2d.PathsItem`."""
        return [(self.fill, None, fill_brush), (self.edges, edge_pen, None)]


class BrushOutlines:
    """The chunked hull and edge paths of every brush, seen along one axis pair.

    After :meth:`update`, :attr:`dirty` lists the chunks whose paths were rebuilt and
    :attr:`rebuilt_all` says whether the chunk list itself was made anew (a new scene).
    """

    def __init__(self, axes: tuple[int, int]) -> None:
        self.axes = list(axes)
        self._hulls: dict[int, tuple[object, np.ndarray]] = {}
        self.chunks: list[OutlineChunk] = []
        self._starts: list[int] = []
        self._chunk_of: dict[int, OutlineChunk] = {}
        self._pieces: dict = {}
        self._prepared: dict | None = None
        self._origin = np.zeros(2)
        self._scale = 1.0
        self.dirty: list[OutlineChunk] = []
        self.rebuilt_all = False
        self.rebuilt_chunks = 0   # chunks rebuilt by the last update (what an edit cost)

    def __len__(self) -> int:
        return len(self._chunk_of)

    def adopt(self, built: BrushOutlines) -> None:
        """Take the chunks and paths of ``built`` (same axes, made on the loading thread for
        a new scene), as :meth:`update` would have made them here."""
        if built.axes != self.axes:
            raise ValueError(f"outlines for axes {built.axes}, not {self.axes}")
        vars(self).update(vars(built))

    # ------------------------------------------------------------------ geometry
    def _hull(self, oid: int, pieces) -> np.ndarray:
        hit = self._hulls.get(oid)
        if hit is None and self._prepared is not None:
            hit = self._prepared.get(oid)  # computed with the arrays, on the loading thread
        if hit is not None and hit[0] is pieces:
            self._hulls[oid] = hit
            return hit[1]
        hull = convex_hull(pieces.vertices[:, self.axes])
        self._hulls[oid] = (pieces, hull)
        return hull

    def _hull_all(self, ids: np.ndarray) -> None:
        """The hulls of every brush of ``ids`` not known yet, in one numpy pass."""
        prepared = self._prepared or {}
        pieces, todo = self._pieces, []
        for oid in ids.tolist():
            hit = self._hulls.get(oid) or prepared.get(oid)
            if hit is not None and hit[0] is pieces[oid]:
                self._hulls[oid] = hit
            else:
                todo.append(oid)
        if not todo:
            return
        verts = [pieces[oid].vertices for oid in todo]
        counts = np.fromiter(map(len, verts), dtype=np.int64, count=len(verts))
        offsets = np.zeros(len(todo) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        points, hull_offsets = convex_hulls(np.concatenate(verts)[:, self.axes], offsets)
        bounds = hull_offsets.tolist()
        for k, oid in enumerate(todo):
            self._hulls[oid] = (pieces[oid], points[bounds[k]:bounds[k + 1]])

    def _rebuild(self, chunk: OutlineChunk) -> None:
        pieces = self._pieces
        ids = chunk.ids
        chunk.fill = polygons_path([self._hull(oid, pieces[oid]) for oid in ids])
        if ids:
            edges = np.concatenate([pieces[oid].vertices[pieces[oid].edges].reshape(-1, 3)
                                    for oid in ids])[:, self.axes]
        else:
            edges = np.empty((0, 2))
        chunk.edges = segments_path(edges)

    def _quantise(self, centres: np.ndarray) -> np.ndarray:
        q = np.rint((centres - self._origin) * self._scale)
        return np.clip(q, 0, _CODE_MAX).astype(np.int64)

    def _code(self, oid: int) -> int:
        v = self._pieces[oid].vertices[:, self.axes]
        centre = (v.min(axis=0) + v.max(axis=0)) / 2
        return int(morton_codes(self._quantise(centre[None, :]))[0])

    def _home(self, code: int) -> OutlineChunk:
        return self.chunks[max(bisect.bisect_right(self._starts, code) - 1, 0)]

    # ------------------------------------------------------------------ updates
    def update(self, arrays) -> None:
        """Follow :class:`~editor.qt.scene_geometry.SceneArrays` after an edit (or a new scene
        when ``arrays.changed`` is None)."""
        self._pieces = arrays.brush_pieces or {}
        self._prepared = (arrays.hulls or {}).get(tuple(self.axes))
        if arrays.changed is None or not self.chunks:
            self._build(arrays)
            return
        dirty: dict[int, OutlineChunk] = {}
        for oid in arrays.changed:
            old = self._chunk_of.get(oid)
            home = self._home(self._code(oid)) if oid in self._pieces else None  # None: deleted
            if old is not None and old is not home:
                old.ids.remove(oid)
                del self._chunk_of[oid]
                dirty[id(old)] = old
            if home is None:
                self._hulls.pop(oid, None)
                continue
            if old is not home:
                home.ids.append(oid)
                self._chunk_of[oid] = home
            dirty[id(home)] = home
        for chunk in list(dirty.values()):
            if len(chunk.ids) > 2 * CHUNK_SIZE:
                for part in self._split(chunk):
                    dirty[id(part)] = part
        for chunk in dirty.values():
            self._rebuild(chunk)
        self.dirty = list(dirty.values())
        self.rebuilt_all = False
        self.rebuilt_chunks = len(self.dirty)

    def _build(self, arrays) -> None:
        """Chunks from scratch: the quadtree tiles of the brush centres."""
        ids = np.asarray(arrays.brush_ids, dtype=np.int64)
        live = set(self._pieces)
        self._hulls = {oid: hit for oid, hit in self._hulls.items()
                       if oid in live and hit[0] is self._pieces[oid]}
        self._hull_all(ids)
        self.chunks, self._starts, self._chunk_of = [], [], {}
        codes = np.empty(0, dtype=np.int64)
        if len(ids):
            centres = self._centres(arrays)
            lo, hi = centres.min(axis=0), centres.max(axis=0)
            self._origin = lo
            self._scale = _CODE_MAX / max(float((hi - lo).max()), 1e-9)
            codes = morton_codes(self._quantise(centres))
        order = np.argsort(codes, kind="stable")
        codes, ids = codes[order], ids[order]
        stack = [(0, 2 * _CODE_BITS)]  # (first code, log2 of the tile's codes); children in order
        while stack:
            start, shift = stack.pop()
            first, last = np.searchsorted(codes, [start, start + (1 << shift)])
            if last - first > CHUNK_SIZE and shift > 0:
                stack.extend((start + k * (1 << (shift - 2)), shift - 2) for k in (3, 2, 1, 0))
                continue
            chunk = OutlineChunk(start, shift)
            chunk.ids = ids[first:last].tolist()
            for oid in chunk.ids:
                self._chunk_of[oid] = chunk
            self.chunks.append(chunk)
            self._starts.append(start)
            if chunk.ids:
                self._rebuild(chunk)
        self.dirty = [c for c in self.chunks if c.ids]
        self.rebuilt_all = True
        self.rebuilt_chunks = len(self.dirty)

    def _centres(self, arrays) -> np.ndarray:
        """Projected bounding-box centre of every brush, from the big mesh array (one
        ``reduceat`` per bound instead of a loop over brushes)."""
        verts = np.asarray(arrays.mesh_vertices, dtype=np.float64)[:, self.axes]
        starts = np.asarray(arrays.mesh_offsets[:-1])
        if len(verts) == 0 or np.any(np.diff(arrays.mesh_offsets) == 0):
            return np.array([self._pieces[int(oid)].vertices[:, self.axes].mean(axis=0)
                             for oid in arrays.brush_ids]).reshape(-1, 2)
        lo = np.minimum.reduceat(verts, starts, axis=0)
        hi = np.maximum.reduceat(verts, starts, axis=0)
        return (lo + hi) / 2

    def _split(self, chunk: OutlineChunk) -> list[OutlineChunk]:
        """Cut an overgrown tile in four (again while one quarter is still too full); the
        chunks that changed."""
        changed = [chunk]
        at = self.chunks.index(chunk)
        while len(chunk.ids) > CHUNK_SIZE and chunk.shift > 0:
            coded = [(self._code(oid), oid) for oid in chunk.ids]
            shift = chunk.shift - 2
            quarters = [OutlineChunk(chunk.start + k * (1 << shift), shift) for k in range(4)]
            for code, oid in coded:
                quarters[min(max(code - chunk.start, 0) >> shift, 3)].ids.append(oid)
            chunk.shift, chunk.ids = shift, quarters[0].ids
            self.chunks[at + 1:at + 1] = quarters[1:]
            self._starts[at + 1:at + 1] = [q.start for q in quarters[1:]]
            for q in quarters[1:]:
                for oid in q.ids:
                    self._chunk_of[oid] = q
            changed += quarters[1:]
            # keep splitting the fullest quarter if it is still too big
            fullest = max(range(4), key=lambda k: len(quarters[k].ids))
            chunk = self.chunks[at + fullest]
            at = at + fullest
        return changed

    # ------------------------------------------------------------------ reading
    def chunk_of(self, oid: int) -> OutlineChunk | None:
        """The chunk drawing brush ``oid`` (None when it is not drawn)."""
        return self._chunk_of.get(oid)

    def layers(self, fill_brush, edge_pen) -> list:
        """Every chunk's ``(path, pen, brush)`` layers, fills first (one item's worth)."""
        out = [(chunk.fill, None, fill_brush) for chunk in self.chunks]
        out += [(chunk.edges, edge_pen, None) for chunk in self.chunks]
        return out

    def outline_segments(self) -> dict[int, np.ndarray]:
        """Brush id -> its drawn hull (for checks against a from-scratch build)."""
        return {oid: self._hulls[oid][1] for oid in self._chunk_of if oid in self._hulls}
