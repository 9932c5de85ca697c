"""The hotspot window's sums equal a plain per-cell dictionary over the last frames."""
from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from editor.model.hotspots import HotspotWindow


class _Table:
    """The node-table columns the window reads: core cells and depths."""

    def __init__(self, core_lo, core_hi, depth) -> None:
        self.core_lo, self.core_hi, self.depth = core_lo, core_hi, depth

    def __len__(self) -> int:
        return len(self.core_lo)


def _random_frame(rng, rows: int, span: int) -> tuple[_Table, np.ndarray]:
    lo = rng.integers(-span, span, (rows, 3)).astype(float) * 8
    lo[rng.random(rows) < 0.05] = -0.0  # -0.0 and 0.0 are one cell
    size = rng.choice([8.0, 16.0], size=(rows, 1))
    return _Table(lo, lo + size, rng.integers(0, 9, rows)), rng.integers(0, 5, rows)


def _oracle(frames: list[tuple[_Table, np.ndarray]], window: int):
    """Totals, frames seen and last depth per cell over the last ``window`` frames."""
    total: dict = {}
    seen: dict = {}
    depth: dict = {}
    for table, tests in list(deque(frames, maxlen=window)):
        for row in np.flatnonzero(tests > 0):
            key = tuple((np.concatenate([table.core_lo[row], table.core_hi[row]]) + 0.0).tolist())
            total[key] = total.get(key, 0) + int(tests[row])
            seen[key] = seen.get(key, 0) + 1
            depth[key] = int(table.depth[row])
    return total, seen, depth


@pytest.mark.parametrize("window", [1, 3, 8])
def test_the_window_sums_what_a_dictionary_of_cells_sums(window):
    rng = np.random.default_rng(window)
    hotspots = HotspotWindow(window)
    frames = []
    for frame in range(20):
        table, tests = _random_frame(rng, 400, 6)
        frames.append((table, tests))
        hotspots.push(frame, table, tests)
        total, seen, depth = _oracle(frames, window)
        ranking = hotspots.ranking(top=len(total) + 5)
        assert len(ranking) == len(total)
        expected = sorted(total, key=lambda k: (-total[k], -depth[k], k))
        assert [h.lo + h.hi for h in ranking] == expected
        keys = [tuple((np.concatenate([table.core_lo[row], table.core_hi[row]]) + 0.0).tolist())
                for row in range(len(table))]
        last_row = {key: row for row, key in enumerate(keys)}  # the newest row of each cell
        for h in ranking:
            key = h.lo + h.hi
            assert (h.pair_tests, h.frames, h.depth) == (total[key], seen[key], depth[key])
            assert h.row == last_row.get(key, -1)
        column = hotspots.totals_for(table)
        assert column.tolist() == [total.get(key, 0) for key in keys]
        assert [h.lo + h.hi for h in hotspots.ranking(3)] == expected[:3]


def test_a_cleared_window_ranks_nothing():
    rng = np.random.default_rng(0)
    hotspots = HotspotWindow(4)
    hotspots.push(0, *_random_frame(rng, 50, 3))
    hotspots.clear()
    assert hotspots.ranking(10) == []
