"""Where pair tests pile up: per-node pair tests summed over a sliding window of frames.

Node rows are renumbered whenever the tree changes shape, so the window does not add up rows.
It keys each node by its **core cell** (``core_lo``/``core_hi`` of the node table): a cell of an
octree, quadtree or grid keeps the same core bounds for as long as it exists, and comes back
with the same key when it is pruned and re-created, so a region that keeps costing pair tests
accumulates under one key. (For trees whose nodes move, such as a BVH, a node whose bounds
change becomes a new key; its cost still shows frame by frame.) Keying by object instead would
blame movers rather than the places where they crowd, which is not what a level designer tunes.

Use: ``window.push(frame, nodes, node_tests)`` once per frame, then ``window.ranking(top)``
returns :class:`Hotspot` records, heaviest first; ``window.totals_for(nodes)`` gives the
windowed sum for every row of a current node table (a heatmap column).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from spatial.contract import NodeTable


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


def _keys(nodes: NodeTable, rows: np.ndarray) -> list[bytes]:
    cells = np.ascontiguousarray(np.hstack([nodes.core_lo[rows], nodes.core_hi[rows]]) + 0.0)
    return [row.tobytes() for row in cells]


class HotspotWindow:
    """Sliding-window sums of per-node pair tests keyed by core cell (see module docstring).

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
        self._frames: deque[tuple[int, list[bytes], np.ndarray]] = deque()
        self._total: dict[bytes, int] = {}
        self._seen: dict[bytes, int] = {}
        self._depth: dict[bytes, int] = {}
        self._latest: NodeTable | None = None

    def clear(self) -> None:
        self._reset()

    def push(self, frame: int, nodes: NodeTable, node_tests: np.ndarray | None) -> None:
        """Add one frame's per-row pair tests (``node_tests`` aligned with ``nodes``)."""
        if node_tests is None or len(node_tests) != len(nodes):
            node_tests = np.zeros(len(nodes), dtype=np.int64)
        rows = np.flatnonzero(node_tests > 0)
        keys = _keys(nodes, rows)
        tests = np.asarray(node_tests, dtype=np.int64)[rows]
        for key, value, row in zip(keys, tests.tolist(), rows.tolist()):
            self._total[key] = self._total.get(key, 0) + value
            self._seen[key] = self._seen.get(key, 0) + 1
            self._depth[key] = int(nodes.depth[row])
        self._frames.append((frame, keys, tests))
        while len(self._frames) > self.window:
            _, old_keys, old_tests = self._frames.popleft()
            for key, value in zip(old_keys, old_tests.tolist()):
                left = self._total[key] - value
                if left:
                    self._total[key] = left
                    self._seen[key] -= 1
                else:
                    del self._total[key], self._seen[key], self._depth[key]
        self._latest = nodes  # rows of the ranking are looked up lazily, in ranking()

    def totals_for(self, nodes: NodeTable) -> np.ndarray:
        """Windowed pair tests for every row of ``nodes`` (0 for cells without tests)."""
        keys = _keys(nodes, np.arange(len(nodes)))
        return np.array([self._total.get(k, 0) for k in keys], dtype=np.int64)

    def ranking(self, top: int = 10) -> list[Hotspot]:
        """The ``top`` cells with the most pair tests in the window, heaviest first.

        Ties are broken by depth (deeper first) then by bounds, so the order is reproducible.
        """
        items = []
        for key, total in self._total.items():
            core_bounds = np.frombuffer(key, dtype=np.float64)
            items.append((-total, -self._depth[key], tuple(core_bounds.tolist()), key))
        items.sort()
        row_now: dict[bytes, int] = {}
        if self._latest is not None and items:
            rows = np.arange(len(self._latest))
            row_now = dict(zip(_keys(self._latest, rows), rows.tolist()))
        out = []
        for neg_total, neg_depth, cell, key in items[:top]:
            out.append(Hotspot(cell[:3], cell[3:], -neg_total, self._seen[key], -neg_depth,
                               row_now.get(key, -1)))
        return out
