"""Brush outlines of one 2D view, kept in chunks so an edit redraws only the chunks it touched.

Every brush is drawn as its projected hull (a faint fill) and its projected edges. Brushes are
grouped in chunks of :data:`CHUNK_SIZE`, each chunk one pair of painter paths; an edit rebuilds
the paths of the chunks holding the brushes it changed (a new brush joins the last chunk) and
reuses the others as they are. Hulls are cached per brush by the identity of its tessellation,
which changes exactly when the brush does.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtGui import QPainterPath

from ..scene_geometry import convex_hull
from .items2d import polygons_path, segments_path

#: brushes per chunk: small enough that rebuilding one is cheap, big enough that a big level
#: is a few hundred paths, not thousands
CHUNK_SIZE = 128


class BrushOutlines:
    """The chunked hull and edge paths of every brush, seen along one axis pair."""

    def __init__(self, axes: tuple[int, int]) -> None:
        self.axes = list(axes)
        self._hulls: dict[int, tuple[object, np.ndarray]] = {}
        self._chunks: list[list[int]] = []
        self._chunk_of: dict[int, int] = {}
        self._paths: list[tuple[QPainterPath, QPainterPath]] = []
        self._pieces: dict = {}
        self._prepared: dict | None = None
        self.rebuilt_chunks = 0   # chunks rebuilt by the last update (what an edit cost)

    def __len__(self) -> int:
        return len(self._chunk_of)

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

    def _chunk_paths(self, chunk: list[int]) -> tuple[QPainterPath, QPainterPath]:
        pieces = self._pieces
        hulls = [self._hull(oid, pieces[oid]) for oid in chunk]
        if chunk:
            edges = np.concatenate([pieces[oid].vertices[pieces[oid].edges].reshape(-1, 3)
                                    for oid in chunk])[:, self.axes]
        else:
            edges = np.empty((0, 2))
        return polygons_path(hulls), segments_path(edges)

    def update(self, arrays) -> None:
        """Follow :class:`~editor.qt.scene_geometry.SceneArrays` after an edit (or a new scene
        when ``arrays.changed`` is None)."""
        self._pieces = arrays.brush_pieces or {}
        self._prepared = (arrays.hulls or {}).get(tuple(self.axes))
        if arrays.changed is None:
            ids = [int(i) for i in arrays.brush_ids]
            self._hulls = {oid: hit for oid, hit in self._hulls.items()
                           if oid in self._pieces and hit[0] is self._pieces[oid]}
            self._chunks = [ids[k:k + CHUNK_SIZE] for k in range(0, len(ids), CHUNK_SIZE)]
            self._chunk_of = {oid: c for c, chunk in enumerate(self._chunks) for oid in chunk}
            self._paths = [self._chunk_paths(chunk) for chunk in self._chunks]
            self.rebuilt_chunks = len(self._chunks)
            return
        dirty = set()
        for oid in arrays.changed:
            c = self._chunk_of.get(oid)
            alive = oid in self._pieces
            if c is not None:
                dirty.add(c)
                if not alive:
                    self._chunks[c].remove(oid)
                    del self._chunk_of[oid]
                    self._hulls.pop(oid, None)
            elif alive:
                if not self._chunks or len(self._chunks[-1]) >= CHUNK_SIZE:
                    self._chunks.append([])
                    self._paths.append((QPainterPath(), QPainterPath()))
                c = len(self._chunks) - 1
                self._chunks[c].append(oid)
                self._chunk_of[oid] = c
                dirty.add(c)
        for c in dirty:
            self._paths[c] = self._chunk_paths(self._chunks[c])
        self.rebuilt_chunks = len(dirty)

    def layers(self, fill_brush, edge_pen) -> list:
        """``(path, pen, brush)`` layers for :class:`~.items2d.PathsItem`."""
        out = [(fill, None, fill_brush) for fill, _ in self._paths]
        out += [(edges, edge_pen, None) for _, edges in self._paths]
        return out

    def outline_segments(self) -> dict[int, np.ndarray]:
        """Brush id -> its drawn hull (for checks against a from-scratch build)."""
        return {oid: self._hulls[oid][1] for oid in self._chunk_of if oid in self._hulls}
