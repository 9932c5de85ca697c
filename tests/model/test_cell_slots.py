"""Cells held in stable slots, found by hash: the same answers as a dictionary, through long
probe runs, released cells, slot reuse and new table layouts."""
from __future__ import annotations

import numpy as np

from editor.model.cell_slots import CellSlots


def _cells(hashes: np.ndarray) -> np.ndarray:
    return np.repeat(hashes.astype(np.float64)[:, None], 6, axis=1)


def _check(slots: CellSlots, held: dict[int, int], absent: np.ndarray) -> None:
    keys = np.array(sorted(held), dtype=np.uint64)
    assert slots.lookup(keys).tolist() == [held[k] for k in sorted(held)]
    assert (slots.lookup(absent) == -1).all()
    assert slots.count == len(held) == int(slots.held.sum())
    for key, slot in held.items():
        assert int(slots.slot_hash[slot]) == key
        assert slots.cells[slot].tolist() == [float(np.uint64(key))] * 6


def test_random_adds_and_releases_answer_as_a_dictionary_does():
    rng = np.random.default_rng(1)
    slots = CellSlots()
    held: dict[int, int] = {}
    for _ in range(60):
        fresh = np.unique(rng.integers(0, 2**63, int(rng.integers(0, 400)), dtype=np.uint64))
        fresh = fresh[[int(k) not in held for k in fresh]]
        given = slots.add(fresh, _cells(fresh))
        assert len(set(given.tolist()) | set(held.values())) == len(given) + len(held)  # all new
        held.update(zip((int(k) for k in fresh), given.tolist()))
        going = [k for k in held if rng.random() < 0.3]
        slots.release(np.array([held.pop(k) for k in going], dtype=np.int64))
        _check(slots, held, rng.integers(0, 2**63, 100, dtype=np.uint64))


def test_keys_sharing_a_home_are_found_past_released_ones_in_one_long_run():
    """Keys whose top bits agree all start at one position: one run of hundreds, longer than
    the rounds of array operations go, with released keys (tombstones) along it."""
    slots = CellSlots()
    hashes = (np.uint64(0b1011) << np.uint64(58)) | np.arange(1, 301, dtype=np.uint64)
    given = slots.add(hashes, _cells(hashes))
    held = dict(zip((int(k) for k in hashes), given.tolist()))
    gone = hashes[::3]
    slots.release(np.array([held.pop(int(k)) for k in gone], dtype=np.int64))
    _check(slots, held, np.concatenate([gone, hashes[-1:] + np.uint64(1)]))
    back = gone[:50]  # released cells come back into released slots
    reused = slots.add(back, _cells(back))
    assert set(reused.tolist()) <= set(range(300))
    held.update(zip((int(k) for k in back), reused.tolist()))
    _check(slots, held, gone[50:])


def test_a_table_full_of_released_keys_is_laid_out_again_and_slots_stay_few():
    slots = CellSlots()
    rng = np.random.default_rng(4)
    held: dict[int, int] = {}
    for _ in range(40):  # 500 in, 500 out a round: tombstones pile up until a new layout
        fresh = np.unique(rng.integers(0, 2**63, 500, dtype=np.uint64))
        given = slots.add(fresh, _cells(fresh))
        slots.release(np.array(list(held.values()), dtype=np.int64))
        held = dict(zip((int(k) for k in fresh), given.tolist()))
        _check(slots, held, rng.integers(0, 2**63, 50, dtype=np.uint64))
        assert slots._tombstones + slots.count <= len(slots._keys) // 2
    assert slots.capacity <= 1024  # released slots were reused, never more than two rounds held


def test_a_copy_does_not_see_what_the_original_adds_or_releases():
    slots = CellSlots()
    first = np.arange(1, 11, dtype=np.uint64) << np.uint64(40)
    given = slots.add(first, _cells(first))
    copy = slots.copy()
    slots.release(given[:5])
    later = np.arange(11, 21, dtype=np.uint64) << np.uint64(40)
    slots.add(later, _cells(later))
    assert copy.lookup(first).tolist() == given.tolist()
    assert (copy.lookup(later) == -1).all() and copy.count == 10
