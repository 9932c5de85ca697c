"""The hotspot window gives exactly what its earlier formulation gives (sorted arrays grown with
``np.insert``, sums with ``np.add.at``; ``hotspot_reference.py``): rankings, heatmap columns and
pair frames, frame after frame, through shape changes, wrap-around, empty frames, repeated cells,
copies, and thousands of cells coming and going."""
from __future__ import annotations

import json

import numpy as np
import pytest

from editor.model.hotspots import HotspotWindow
from editor.model.live.frame_stream import encode_binary_frame
from editor.model.live.session import LiveSession
from spatial.backend_lookup import backend_class

from .hotspot_reference import ReferenceHotspotWindow


class _Table:
    """The node-table columns the window reads: core cells and depths."""

    def __init__(self, core_lo, core_hi, depth) -> None:
        self.core_lo, self.core_hi, self.depth = core_lo, core_hi, depth

    def __len__(self) -> int:
        return len(self.core_lo)


def _frame(rng, rows: int, span: int, repeats: float = 0.05):
    """A table of ``rows`` cells on a lattice of ``span`` (a small span: most cells come back
    next frame; a big one: most are new), some ``-0.0`` bounds, some rows repeating another
    row's cell, and tests of 0-4 per row (0: the row made none)."""
    lo = rng.integers(-span, span, (rows, 3)).astype(float) * 8
    lo[rng.random(rows) < 0.05] = -0.0
    size = rng.choice([8.0, 16.0], size=(rows, 1))
    hi = lo + size
    if rows > 1:
        again = np.flatnonzero(rng.random(rows) < repeats)
        source = rng.integers(0, rows, len(again))
        lo[again], hi[again] = lo[source], hi[source]
    return _Table(lo, hi, rng.integers(0, 9, rows)), rng.integers(0, 5, rows)


def _pairs(rng):
    """Overlapping pairs as an index returns them (sorted rows, ``a < b``), or unsorted with
    repeats and either order, or none."""
    kind = rng.integers(0, 3)
    if kind == 0:
        return None
    pairs = rng.integers(0, 60, (int(rng.integers(0, 40)), 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    if kind == 1:
        pairs = np.unique(np.sort(pairs, axis=1), axis=0)
    return pairs


def _assert_same(window: HotspotWindow, reference: ReferenceHotspotWindow, tables, rng) -> None:
    for top in (0, 1, 3, 10, 1_000_000):
        assert [h.as_dict() for h in window.ranking(top)] == \
            [h.as_dict() for h in reference.ranking(top)]
    for table in tables:
        assert window.totals_for(table).tolist() == reference.totals_for(table).tolist()
    asked = rng.integers(0, 60, (50, 2))
    assert window.pair_frames(asked).tolist() == reference.pair_frames(asked).tolist()


def _push(windows, frame, table, tests, pairs) -> None:
    for window in windows:
        window.push(frame, table, tests, pairs)


@pytest.mark.parametrize("window_frames", [1, 2, 7])
@pytest.mark.parametrize("span", [4, 40])
def test_frame_after_frame_the_window_gives_what_the_earlier_formulation_gives(window_frames, span):
    rng = np.random.default_rng(window_frames * 100 + span)
    window, reference = HotspotWindow(window_frames), ReferenceHotspotWindow(window_frames)
    tables = []
    for frame in range(40):
        table, tests = _frame(rng, int(rng.integers(50, 400)), span)  # the shape changes
        if frame % 9 == 4:
            table, tests = _frame(rng, 0, span)  # an empty tree
        elif frame % 9 == 6:
            tests = None  # a frame without pair tests to tell
        elif frame % 9 == 7:
            tests = np.zeros(len(table), dtype=np.int64)  # a frame without a test
        elif frame % 9 == 8:
            tests = tests[:-1]  # tests of another table: counted as none
        _push((window, reference), frame, table, tests, _pairs(rng))
        tables = (tables + [table])[-3:]  # the latest table and older ones
        _assert_same(window, reference, tables, rng)


def test_a_cell_twice_in_one_frame_counts_both_rows_and_keeps_the_last_depth():
    lo = np.array([[0.0, 0, 0], [8, 0, 0], [0, 0, 0]])
    table = _Table(lo, lo + 8, np.array([1, 2, 3]))
    window, reference = HotspotWindow(3), ReferenceHotspotWindow(3)
    _push((window, reference), 1, table, np.array([2, 1, 3]), None)
    top = window.ranking(1)[0]
    assert (top.lo, top.pair_tests, top.frames, top.depth, top.row) == ((0.0, 0.0, 0.0), 5, 2, 3, 2)
    rng = np.random.default_rng(0)
    for frame in range(2, 7):  # and it leaves the window as it came
        _push((window, reference), frame, table, np.array([2, 0, 3]) * (frame % 2), None)
        _assert_same(window, reference, [table], rng)


def test_thousands_of_cells_coming_and_going_reuse_their_slots_and_lay_the_table_out_again():
    rng = np.random.default_rng(5)
    window, reference = HotspotWindow(3), ReferenceHotspotWindow(3)
    for frame in range(30):
        table, tests = _frame(rng, 3000, 200)  # most cells new each frame, most leave
        _push((window, reference), frame, table, tests, None)
        assert window._slots.count == len(reference._total)
        if frame % 5 == 0:
            _assert_same(window, reference, [table], rng)
    # the slots stay about as many as the cells of the window, not of every frame seen
    assert window._slots.capacity <= 4 * window._slots.count


def test_a_copy_and_its_original_go_their_own_ways():
    rng = np.random.default_rng(3)
    window, reference = HotspotWindow(4), ReferenceHotspotWindow(4)
    for frame in range(6):
        _push((window, reference), frame, *_frame(rng, 300, 6), None)
    copy, reference_copy = window.copy(), reference.copy()
    window.ranking(5), window.totals_for(window._latest)  # looked up before the copy's pushes
    for frame in range(6, 12):
        table, tests = _frame(rng, 300, 6)
        _push((window, reference), frame, table, tests, _pairs(rng))
        other, other_tests = _frame(rng, 200, 30)
        _push((copy, reference_copy), frame, other, other_tests, _pairs(rng))
        _assert_same(window, reference, [table, other], rng)
        _assert_same(copy, reference_copy, [table, other], rng)


def test_a_frame_of_known_cells_writes_the_sums_in_place():
    """No per-frame insertion into (or compaction of) arrays over every cell of the window: a
    frame whose cells are all in the window finds their slots and adds to them in place."""
    rng = np.random.default_rng(9)
    table, tests = _frame(rng, 500, 5, repeats=0.0)
    window = HotspotWindow(5)
    window.push(0, table, tests)
    arrays = (window._total, window._seen, window._depth, window._slots.cells, window._slots._keys)
    slots = window._frames[-1][1].copy()
    for frame in range(1, 12):
        window.push(frame, table, tests)
        assert all(a is b for a, b in zip(arrays, (window._total, window._seen, window._depth,
                                                    window._slots.cells, window._slots._keys)))
        assert window._frames[-1][1].tolist() == slots.tolist()  # each cell kept its slot


@pytest.mark.parametrize("backend, params", [("grid", {"cell_size": 36.0}), ("octree", {})])
def test_a_live_sessions_window_equals_the_earlier_formulation_fed_its_node_tables(backend, params):
    """Real node tables of a game's frames (movers crossing cells: rows appear, go and are
    renumbered from one frame to the next), pushed by the session."""
    rng = np.random.default_rng(2)
    static = [[5000 + k, *rng.uniform(0, 400, 3), *(rng.uniform(0, 400, 3) + 40)] for k in range(300)]
    for row in static:
        row[1:4], row[4:7] = np.minimum(row[1:4], row[4:7]).tolist(), np.maximum(row[1:4], row[4:7]).tolist()
    cls = backend_class(backend)
    session = LiveSession(cls(cls.Params(**params)), "test", hotspot_window=10)
    reference = ReferenceHotspotWindow(10)
    session.on_frame = lambda record, stats: reference.push(
        record.frame, session.last_nodes, session.last_pairs.node_tests, session.last_pairs.pairs)
    ids = np.arange(400)
    lo = rng.uniform(0, 400, (400, 3))
    session.feed((json.dumps({"static": static}) + "\n").encode())
    for frame in range(1, 31):
        lo += rng.uniform(-6, 6, lo.shape)
        awake = rng.random(400) < 0.8
        session.feed(encode_binary_frame(frame, ids, lo, lo + rng.uniform(1, 16, lo.shape), awake))
        _assert_same(session.hotspots, reference, [session.last_nodes], rng)
    assert session.hotspots.ranking(1)[0].pair_tests > 0
