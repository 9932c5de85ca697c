"""The hotspot window's earlier formulation, kept as the reference its results are pinned to.

Each distinct cell is one row of arrays sorted by the 64-bit hash of its bounds: a frame's new
cells are put in with ``np.insert``, its tests added with ``np.add.at`` at the rows a binary
search finds, and the cells whose tests all left the window are cut out. Straightforward, and
slow where the product's window must be fast (a live game's frame of tens of thousands of
cells); :mod:`editor.model.hotspots` must give exactly what this gives.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from editor.model.hotspots import Hotspot, pair_keys  # pair keys are not what changed
from spatial.contract import NodeTable


def _cells(nodes: NodeTable, rows: np.ndarray) -> np.ndarray:
    """The core cells of ``rows`` as ``(k, 6)`` float64 rows (``-0.0`` made ``0.0``, so equal
    bounds are equal bytes)."""
    return np.ascontiguousarray(np.hstack([nodes.core_lo[rows], nodes.core_hi[rows]]) + 0.0,
                                dtype=np.float64)


#: odd 64-bit multipliers of the cell hash (one per bound)
_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                 0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53], dtype=np.uint64)


def _hashes(cells: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each cell row's bytes: sorting and matching ``uint64`` is many times
    faster than 48-byte keys. Equal cells hash equal."""
    words = np.ascontiguousarray(cells, dtype=np.float64).view(np.uint64).reshape(-1, 6)
    with np.errstate(over="ignore"):
        mixed = words * _MIX
        mixed ^= mixed >> np.uint64(29)
        return np.bitwise_xor.reduce(mixed * _MIX[::-1], axis=1) if len(words) else \
            np.empty(0, dtype=np.uint64)


class ReferenceHotspotWindow:
    """The hotspot window as arrays sorted by cell hash, grown with ``np.insert`` and summed
    with ``np.add.at`` (see the module docstring).

    Parameters
    ----------
    window : int
        Number of most recent frames summed.
    """

    def __init__(self, window: int = 60) -> None:
        if window < 1:
            raise ValueError(f"hotspot window must be at least 1 frame, got {window}")
        self.window = int(window)
        self._reset()

    def _reset(self) -> None:
        """Forget every frame: the state of a new window."""
        # per frame: (frame, hashes (k,), tests (k,)) of the rows that made pair tests
        self._frames: deque[tuple[int, np.ndarray, np.ndarray]] = deque()
        # per frame: its overlapping pairs as sorted keys (see pair_keys)
        self._pair_frames: deque[np.ndarray] = deque()
        # per distinct cell in the window, sorted by hash
        self._hash = np.empty(0, dtype=np.uint64)
        self._cells = np.empty((0, 6), dtype=np.float64)
        self._total = np.empty(0, dtype=np.int64)
        self._seen = np.empty(0, dtype=np.int64)
        self._depth = np.empty(0, dtype=np.int64)
        self._latest: NodeTable | None = None

    def clear(self) -> None:
        self._reset()

    def copy(self) -> ReferenceHotspotWindow:
        """An independent copy: pushes to either never show in the other (a live session's
        window is pushed on its processing thread while the display reads a copy)."""
        other = ReferenceHotspotWindow(self.window)
        other._frames = deque(self._frames)  # the per-frame arrays are never written after a push
        other._pair_frames = deque(self._pair_frames)
        other._hash, other._cells = self._hash, self._cells  # replaced, never written in place
        # the sums are written in place by push
        other._total, other._seen, other._depth = self._total.copy(), self._seen.copy(), self._depth.copy()
        other._latest = self._latest
        return other

    def push(self, frame: int, nodes: NodeTable, node_tests: np.ndarray | None,
             pairs: np.ndarray | None = None) -> None:
        """Add one frame's per-row pair tests (``node_tests`` aligned with ``nodes``) and its
        overlapping pairs (``(k, 2)`` ids; None when the frame has none to tell)."""
        if node_tests is None or len(node_tests) != len(nodes):
            node_tests = np.zeros(len(nodes), dtype=np.int64)
        rows = np.flatnonzero(np.asarray(node_tests) > 0)
        tests = np.asarray(node_tests, dtype=np.int64)[rows]
        depths = np.asarray(nodes.depth, dtype=np.int64)[rows]
        cells = _cells(nodes, rows)
        hashes = _hashes(cells)
        self._add(hashes, cells, tests, depths)
        self._frames.append((frame, hashes, tests))
        self._pair_frames.append(np.unique(pair_keys(pairs)))
        while len(self._frames) > self.window:
            _, old_hashes, old_tests = self._frames.popleft()
            self._remove(old_hashes, old_tests)
            self._pair_frames.popleft()
        self._latest = nodes  # rows of the ranking are looked up lazily, in ranking()

    def _add(self, hashes: np.ndarray, cells: np.ndarray, tests: np.ndarray,
             depths: np.ndarray) -> None:
        fresh_hashes, first = np.unique(hashes, return_index=True)
        at = np.searchsorted(self._hash, fresh_hashes)
        known = at < len(self._hash)
        known[known] = self._hash[at[known]] == fresh_hashes[known]
        new = ~known
        if new.any():  # insert the cells not in the window yet, keeping the hash order
            where = at[new]
            pick = first[new]
            self._hash = np.insert(self._hash, where, fresh_hashes[new])
            self._cells = np.insert(self._cells, where, cells[pick], axis=0)
            zeros = np.zeros(len(where), dtype=np.int64)
            self._total = np.insert(self._total, where, zeros)
            self._seen = np.insert(self._seen, where, zeros)
            self._depth = np.insert(self._depth, where, zeros)
        position = np.searchsorted(self._hash, hashes)
        np.add.at(self._total, position, tests)
        np.add.at(self._seen, position, 1)
        self._depth[position] = depths  # repeated positions: the last row's depth stays

    def _remove(self, hashes: np.ndarray, tests: np.ndarray) -> None:
        position = np.searchsorted(self._hash, hashes)
        np.subtract.at(self._total, position, tests)
        np.subtract.at(self._seen, position, 1)
        keep = self._total > 0
        if not keep.all():
            self._hash, self._cells = self._hash[keep], self._cells[keep]
            self._total, self._seen, self._depth = self._total[keep], self._seen[keep], self._depth[keep]

    def _lookup(self, cells: np.ndarray) -> np.ndarray:
        """The row in the window's sums of each of ``cells`` (-1 where absent)."""
        if not len(self._hash) or not len(cells):
            return np.full(len(cells), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._hash, _hashes(cells)), len(self._hash) - 1)
        return np.where(np.all(self._cells[at] == cells, axis=1), at, -1)

    def pair_frames(self, pairs: np.ndarray) -> np.ndarray:
        """For each of ``pairs`` (``(k, 2)`` ids, either order), the frames of the window in
        which it overlapped."""
        keys = pair_keys(pairs)
        counts = np.zeros(len(keys), dtype=np.int64)
        for frame_keys in self._pair_frames:
            if len(frame_keys):
                at = np.minimum(np.searchsorted(frame_keys, keys), len(frame_keys) - 1)
                counts += frame_keys[at] == keys
        return counts

    def totals_for(self, nodes: NodeTable) -> np.ndarray:
        """Windowed pair tests for every row of ``nodes`` (0 for cells without tests)."""
        at = self._lookup(_cells(nodes, np.arange(len(nodes))))
        if not len(self._total):
            return np.zeros(len(nodes), dtype=np.int64)
        return np.where(at >= 0, self._total[np.maximum(at, 0)], 0).astype(np.int64)

    def ranking(self, top: int = 10) -> list[Hotspot]:
        """The ``top`` cells with the most pair tests in the window, heaviest first.

        Ties are broken by depth (deeper first) then by bounds, so the order is reproducible.
        """
        if not len(self._total):
            return []
        candidates = np.arange(len(self._total))
        if 0 < top < len(candidates):  # only cells that can make the top (ties included)
            cut = np.partition(self._total, len(candidates) - top)[len(candidates) - top]
            candidates = np.flatnonzero(self._total >= cut)
        bounds = self._cells[candidates]
        # lexsort: the last key is the primary one
        order = np.lexsort([bounds[:, i] for i in range(5, -1, -1)]
                           + [-self._depth[candidates], -self._total[candidates]])
        chosen = candidates[order[:top]]
        bounds = self._cells
        rows_now = np.full(len(chosen), -1, dtype=np.int64)
        if self._latest is not None and len(self._latest):
            at = self._lookup(_cells(self._latest, np.arange(len(self._latest))))
            slot = np.full(len(self._total), -1, dtype=np.int64)
            slot[chosen] = np.arange(len(chosen))
            hit = np.flatnonzero(at >= 0)
            hit = hit[slot[at[hit]] >= 0]
            rows_now[slot[at[hit]]] = hit  # ascending rows: the newest row of a cell stays
        out = []
        for i, k in enumerate(chosen.tolist()):
            cell = bounds[k].tolist()
            out.append(Hotspot(tuple(cell[:3]), tuple(cell[3:]), int(self._total[k]),
                               int(self._seen[k]), int(self._depth[k]), int(rows_now[i])))
        return out
