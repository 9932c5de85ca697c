"""Where pair tests pile up: per-node pair tests summed over a sliding window of frames.

Node rows are renumbered whenever the tree changes shape, so the window does not add up rows.
It keys each node by its **core cell** (``core_lo``/``core_hi`` of the node table): a cell of an
octree, quadtree or grid keeps the same core bounds for as long as it exists, and comes back
with the same key when it is pruned and re-created, so a region that keeps costing pair tests
accumulates under one key. (For trees whose nodes move, such as a BVH, a node whose bounds
change becomes a new key; its cost still shows frame by frame.) Keying by object instead would
blame movers rather than the places where they crowd, which is not what a level designer tunes.

Use: ``window.push(frame, nodes, node_tests, pairs)`` once per frame, then ``window.ranking(top)``
returns :class:`Hotspot` records, heaviest first; ``window.totals_for(nodes)`` gives the
windowed sum for every row of a current node table (a heatmap column), and
``window.pair_frames(pairs)`` in how many frames of the window each pair overlapped.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from spatial.contract import NodeTable

from .cell_slots import CellSlots


@dataclass(frozen=True)
class Hotspot:
    """A region and the pair tests made in it over the window."""

    lo: tuple[float, float, float]
    hi: tuple[float, float, float]
    pair_tests: int
    frames: int          # frames of the window in which it made at least one test
    depth: int           # depth when last seen
    row: int             # row in the latest pushed node table, -1 if the node is gone

    def as_dict(self) -> dict:
        return {"lo": list(self.lo), "hi": list(self.hi), "pair_tests": self.pair_tests,
                "frames": self.frames, "depth": self.depth, "row": self.row}


def _bounds(nodes: NodeTable, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The core cells of ``rows`` as two ``(k, 3)`` float64 arrays (``-0.0`` made ``0.0``, so
    equal bounds are equal bytes)."""
    lo = np.take(np.asarray(nodes.core_lo, dtype=np.float64), rows, axis=0)
    hi = np.take(np.asarray(nodes.core_hi, dtype=np.float64), rows, axis=0)
    lo += 0.0
    hi += 0.0
    return lo, hi


#: odd 64-bit multipliers of the cell hash (one per bound)
_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                 0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53], dtype=np.uint64)
_SHIFT = np.uint64(29)


def _hashes(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each cell ``lo``..``hi`` (contiguous ``(k, 3)`` float64 each): matching
    ``uint64`` is many times faster than 48-byte keys. Equal cells hash equal.

    Each bound's word is mixed with multipliers of its own and the six are xor-ed. The work
    runs on the flat ``3k`` words with the multipliers repeated, not on ``(k, 3)`` rows against
    three multipliers: numpy would run a 3-wide inner loop once per row, many times slower."""
    n = len(lo)
    (lo_first, lo_second), (hi_first, hi_second) = _multipliers(3 * n)
    mixed = lo.view(np.uint64).reshape(-1) * lo_first
    mixed ^= mixed >> _SHIFT
    mixed *= lo_second
    other = hi.view(np.uint64).reshape(-1) * hi_first
    other ^= other >> _SHIFT
    other *= hi_second
    mixed ^= other
    words = mixed.reshape(n, 3)
    out = words[:, 0] ^ words[:, 1]
    out ^= words[:, 2]
    return out


#: the multipliers of lo's and of hi's words, repeated for :func:`_hashes` (grown on demand)
_REPEATED = ((np.empty(0, dtype=np.uint64),) * 2,) * 2


def _multipliers(words: int) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``((first, second) of lo's words, (first, second) of hi's)`` for ``words`` flat words."""
    global _REPEATED
    if len(_REPEATED[0][0]) < words:
        repeats = max(1024, -(-2 * words // 3))  # three words a repeat: room for twice as many
        backwards = _MIX[::-1]
        # replaced whole: a caller on another thread sees the old tuple or the new one
        _REPEATED = ((np.tile(_MIX[:3], repeats), np.tile(backwards[:3], repeats)),
                     (np.tile(_MIX[3:], repeats), np.tile(backwards[3:], repeats)))
    (lo_first, lo_second), (hi_first, hi_second) = _REPEATED
    return (lo_first[:words], lo_second[:words]), (hi_first[:words], hi_second[:words])


def pair_keys(pairs: np.ndarray | None) -> np.ndarray:
    """One int64 per pair of ids (``min * 2^31 + max``; ids are below 2^31), order-free."""
    if pairs is None or not len(pairs):
        return np.empty(0, dtype=np.int64)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return np.minimum(pairs[:, 0], pairs[:, 1]) * (1 << 31) + np.maximum(pairs[:, 0], pairs[:, 1])


class HotspotWindow:
    """Sliding-window sums of per-node pair tests keyed by core cell (see module docstring).

    The sums are kept up to date one frame at a time in array operations (a push runs once per
    game frame, with tens of thousands of cells): each distinct cell of the window holds a
    slot of :class:`~.cell_slots.CellSlots`, found by a 64-bit hash of its bounds, and the sums
    are arrays indexed by slot, so a frame adds its tests at its cells' slots and the frame
    leaving the window takes them off the same slots. Two different cells sharing a hash (about
    one chance in 10^10 with 100,000 cells) would be summed as one.

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
        # per frame: (frame, slots (k,), tests (k,), slots distinct) of the rows that made
        # pair tests
        self._frames: deque[tuple[int, np.ndarray, np.ndarray, bool]] = deque()
        # per frame: its overlapping pairs as sorted keys (see pair_keys)
        self._pair_frames: deque[np.ndarray] = deque()
        self._slots = CellSlots()
        # per slot: tests and rows summed over the window, depth when last pushed
        self._total = np.empty(0, dtype=np.int64)
        self._seen = np.empty(0, dtype=np.int64)
        self._depth = np.empty(0, dtype=np.int64)
        self._latest: NodeTable | None = None
        self._latest_slots: np.ndarray | None = None  # slot of each row of _latest, when asked

    def clear(self) -> None:
        self._reset()

    def copy(self) -> HotspotWindow:
        """An independent copy: pushes to either never show in the other (a live session's
        window is pushed on its processing thread while the display reads a copy)."""
        other = HotspotWindow(self.window)
        other._frames = deque(self._frames)  # the per-frame arrays are never written after a push
        other._pair_frames = deque(self._pair_frames)
        # the slots and the sums are written in place by push
        other._slots = self._slots.copy()
        other._total, other._seen, other._depth = self._total.copy(), self._seen.copy(), self._depth.copy()
        other._latest, other._latest_slots = self._latest, self._latest_slots
        return other

    def push(self, frame: int, nodes: NodeTable, node_tests: np.ndarray | None,
             pairs: np.ndarray | None = None) -> None:
        """Add one frame's per-row pair tests (``node_tests`` aligned with ``nodes``) and its
        overlapping pairs (``(k, 2)`` ids; None when the frame has none to tell)."""
        if node_tests is None or len(node_tests) != len(nodes):
            node_tests = np.zeros(len(nodes), dtype=np.int64)
        node_tests = np.asarray(node_tests)
        rows = np.flatnonzero(node_tests > 0)
        tests = node_tests[rows].astype(np.int64)
        depths = np.asarray(nodes.depth)[rows].astype(np.int64)
        slots = self._hold(nodes, rows)
        distinct = _distinct(slots, self._slots.capacity)
        self._add(slots, tests, distinct)
        self._depth[slots] = depths  # repeated slots: the last row's depth stays
        self._frames.append((frame, slots, tests, distinct))
        self._pair_frames.append(_sorted_keys(pairs))
        while len(self._frames) > self.window:
            _, old_slots, old_tests, old_distinct = self._frames.popleft()
            self._remove(old_slots, old_tests, old_distinct)
            self._pair_frames.popleft()
        self._latest = nodes  # rows of the ranking are looked up lazily, in ranking()
        self._latest_slots = None

    def _hold(self, nodes: NodeTable, rows: np.ndarray) -> np.ndarray:
        """The slot of the core cell of each of ``rows``, new cells given one."""
        lo, hi = _bounds(nodes, rows)
        hashes = _hashes(lo, hi)
        slots = self._slots.lookup(hashes)
        missing = np.flatnonzero(slots < 0)
        if len(missing):
            fresh, first, inverse = np.unique(hashes[missing], return_index=True, return_inverse=True)
            new = missing[first]
            slots[missing] = self._slots.add(fresh, np.hstack([lo[new], hi[new]]))[inverse]
            grow = self._slots.capacity - len(self._total)
            if grow > 0:
                zeros = np.zeros(grow, dtype=np.int64)
                self._total = np.concatenate([self._total, zeros])
                self._seen = np.concatenate([self._seen, zeros])
                self._depth = np.concatenate([self._depth, zeros])
        return slots

    def _add(self, slots: np.ndarray, tests: np.ndarray, distinct: bool) -> None:
        if distinct:  # one row per cell (the rule): plain fancy indexing adds exactly
            self._total[slots] += tests
            self._seen[slots] += 1
        else:  # two rows of one cell (equal bounds, or a shared hash) in one frame
            np.add.at(self._total, slots, tests)
            np.add.at(self._seen, slots, 1)

    def _remove(self, slots: np.ndarray, tests: np.ndarray, distinct: bool) -> None:
        if distinct:
            self._total[slots] -= tests
            self._seen[slots] -= 1
        else:
            np.subtract.at(self._total, slots, tests)
            np.subtract.at(self._seen, slots, 1)
        gone = slots[self._total[slots] <= 0]
        if not distinct:
            gone = np.unique(gone)
        if len(gone):  # cells without tests left in the window
            self._total[gone] = self._seen[gone] = self._depth[gone] = 0
            self._slots.release(gone)

    def _lookup(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The slot in the window's sums of each of the cells ``lo``..``hi`` (-1 where absent)."""
        slots = self._slots.lookup(_hashes(lo, hi))
        found = np.flatnonzero(slots >= 0)
        held = self._slots.cells[slots[found]]
        same = np.all(held[:, :3] == lo[found], axis=1) & np.all(held[:, 3:] == hi[found], axis=1)
        slots[found[~same]] = -1  # another cell with the same hash
        return slots

    def _slots_of(self, nodes: NodeTable) -> np.ndarray:
        """The slot of every row of ``nodes`` (-1 where absent); kept for the latest table."""
        if nodes is self._latest and self._latest_slots is not None:
            return self._latest_slots
        slots = self._lookup(*_bounds(nodes, np.arange(len(nodes))))
        if nodes is self._latest:
            self._latest_slots = slots
        return slots

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
        if not self._slots.count:
            return np.zeros(len(nodes), dtype=np.int64)
        at = self._slots_of(nodes)
        return np.where(at >= 0, self._total[np.maximum(at, 0)], 0).astype(np.int64)

    def ranking(self, top: int = 10) -> list[Hotspot]:
        """The ``top`` cells with the most pair tests in the window, heaviest first.

        Ties are broken by depth (deeper first) then by bounds, so the order is reproducible.
        """
        candidates = np.flatnonzero(self._slots.held)
        if not len(candidates):
            return []
        if 0 < top < len(candidates):  # only cells that can make the top (ties included)
            totals = self._total[candidates]
            cut = np.partition(totals, len(candidates) - top)[len(candidates) - top]
            candidates = candidates[totals >= cut]
        bounds = self._slots.cells[candidates]
        # lexsort: the last key is the primary one
        order = np.lexsort([bounds[:, i] for i in range(5, -1, -1)]
                           + [-self._depth[candidates], -self._total[candidates]])
        chosen = candidates[order[:top]]
        bounds = self._slots.cells
        rows_now = np.full(len(chosen), -1, dtype=np.int64)
        if self._latest is not None and len(self._latest):
            at = self._slots_of(self._latest)
            place = np.full(len(self._total), -1, dtype=np.int64)
            place[chosen] = np.arange(len(chosen))
            hit = np.flatnonzero(at >= 0)
            hit = hit[place[at[hit]] >= 0]
            rows_now[place[at[hit]]] = hit  # ascending rows: the newest row of a cell stays
        out = []
        for i, k in enumerate(chosen.tolist()):
            cell = bounds[k].tolist()
            out.append(Hotspot(tuple(cell[:3]), tuple(cell[3:]), int(self._total[k]),
                               int(self._seen[k]), int(self._depth[k]), int(rows_now[i])))
        return out


def _distinct(slots: np.ndarray, capacity: int) -> bool:
    """No slot twice in ``slots``."""
    if len(slots) < 2:
        return True
    marks = np.zeros(capacity, dtype=bool)
    marks[slots] = True
    return int(np.count_nonzero(marks)) == len(slots)


def _sorted_keys(pairs: np.ndarray | None) -> np.ndarray:
    """The distinct keys of ``pairs`` ascending; pairs as an index returns them (sorted rows,
    ``a < b``) give ascending keys already, which are only checked."""
    keys = pair_keys(pairs)
    if len(keys) > 1 and not bool(np.all(keys[1:] > keys[:-1])):
        keys = np.unique(keys)
    return keys
