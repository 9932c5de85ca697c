"""Distinct cells, each kept in a stable slot and found by a 64-bit hash, in array operations.

:class:`CellSlots` is the store behind the hotspot window (:mod:`.hotspots`): every distinct
cell seen in the window owns a *slot* (a row of the caller's per-cell arrays) from its first
frame until its last frame leaves the window, and is found again each frame by the hash of its
bounds. Slots never move, so a frame is added and taken away by slot number, and per-cell sums
are plain arrays indexed by slot — no sorted arrays to insert into or compact per frame, which
cost more than the sums themselves at tens of thousands of cells a frame.

The hash table is open addressing with linear probing (a key's *home* is its top bits), at most
half full, probed for all keys at once: each round looks at one position per key still
searching, so a lookup of ``k`` keys is a few array operations over ``k``, not a loop over them.
A released cell leaves a tombstone (its position keeps later keys reachable); the table is laid
out again, without tombstones, when the live keys and tombstones would fill it past half.
"""
from __future__ import annotations

import numpy as np

#: table positions: a free position never used, and one whose key was released
_EMPTY = -1
_RELEASED = -2
#: smallest table and slot capacity (powers of two)
_MIN_CAPACITY = 1024
#: keys left below which a look-up probes one key at a time
_FEW = 32


class CellSlots:
    """Cells keyed by a 64-bit hash, each in a slot stable for as long as it is held.

    ``hashes`` are ``uint64``; ``cells`` are ``(k, 6)`` float64 rows kept per slot (the bounds
    the caller reports). Two cells with one hash are one cell here: the first one added keeps
    its bounds.
    """

    def __init__(self) -> None:
        self._bits = 0
        self._keys = np.empty(0, dtype=np.uint64)      # table: the hash at each position
        self._vals = np.empty(0, dtype=np.int64)       # table: its slot, or _EMPTY / _RELEASED
        self._tombstones = 0
        self.slot_hash = np.empty(0, dtype=np.uint64)  # per slot: its hash
        self.cells = np.empty((0, 6), dtype=np.float64)  # per slot: its cell's bounds
        self._slot_at = np.empty(0, dtype=np.int64)    # per slot: its table position
        self.held = np.empty(0, dtype=bool)            # per slot: holds a cell now
        self._free = np.empty(0, dtype=np.int64)       # released slots, reused first
        self._used = 0                                 # slots ever handed out (high water)
        self.count = 0                                 # slots held now

    @property
    def capacity(self) -> int:
        """Length of the per-slot arrays (a caller's own per-slot arrays grow to it)."""
        return len(self.held)

    def copy(self) -> CellSlots:
        """An independent copy: changes to either never show in the other."""
        other = CellSlots.__new__(CellSlots)
        for name, value in vars(self).items():
            setattr(other, name, value.copy() if isinstance(value, np.ndarray) else value)
        return other

    # ------------------------------------------------------------------ look-up
    def _home(self, hashes: np.ndarray) -> np.ndarray:
        # the top bits: the hash's multiplications mix into them most
        return (hashes >> np.uint64(64 - self._bits)).astype(np.int64)

    def lookup(self, hashes: np.ndarray) -> np.ndarray:
        """The slot of each of ``hashes`` (-1 where it is not held)."""
        hashes = np.asarray(hashes, dtype=np.uint64)
        found = np.full(len(hashes), -1, dtype=np.int64)
        if not self.count or not len(hashes):
            return found
        keys, vals = self._keys, self._vals
        mask = len(keys) - 1
        todo = np.arange(len(hashes))
        at = self._home(hashes)
        wanted = hashes
        # all keys a position at a time while many are left; the few that need long runs
        # one by one, where a round of array calls would cost more than it does
        while len(todo) > _FEW:
            slot = np.take(vals, at)
            hit = np.take(keys, at) == wanted
            hit &= slot >= 0
            found[todo[hit]] = slot[hit]
            going = np.flatnonzero(slot != _EMPTY)
            going = going[~hit[going]]
            todo, wanted = np.take(todo, going), np.take(wanted, going)
            at = (np.take(at, going) + 1) & mask
        for key, position, hash_ in zip(todo.tolist(), at.tolist(), wanted.tolist()):
            while True:
                held = int(vals[position])
                if held == _EMPTY:
                    break
                if held >= 0 and int(keys[position]) == hash_:
                    found[key] = held
                    break
                position = (position + 1) & mask
        return found

    # ------------------------------------------------------------------ changes
    def add(self, hashes: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """Hold new cells (``hashes`` distinct and not held); returns their slots."""
        hashes = np.asarray(hashes, dtype=np.uint64)
        n = len(hashes)
        if not n:
            return np.empty(0, dtype=np.int64)
        if 2 * (self.count + self._tombstones + n) > len(self._keys):
            self._lay_out(self.count + n)
        slots = self._take_slots(n)
        self.slot_hash[slots] = hashes
        self.cells[slots] = cells
        self.held[slots] = True
        self.count += n
        self._place(hashes, slots)
        return slots

    def release(self, slots: np.ndarray) -> None:
        """Let distinct held ``slots`` go: their cells are no longer held."""
        slots = np.asarray(slots, dtype=np.int64)
        if not len(slots):
            return
        self._vals[self._slot_at[slots]] = _RELEASED
        self._tombstones += len(slots)
        self.held[slots] = False
        self.count -= len(slots)
        self._free = np.concatenate([self._free, slots])

    def _take_slots(self, n: int) -> np.ndarray:
        reused, self._free = self._free[:n], self._free[n:]
        fresh = n - len(reused)
        if self._used + fresh > len(self.held):
            self._grow_slots(self._used + fresh)
        slots = np.concatenate([reused, np.arange(self._used, self._used + fresh)])
        self._used += fresh
        return slots

    def _grow_slots(self, needed: int) -> None:
        capacity = max(_MIN_CAPACITY, len(self.held))
        while capacity < needed:
            capacity *= 2
        self.slot_hash = _grown(self.slot_hash, capacity)
        self.cells = _grown(self.cells, capacity)
        self._slot_at = _grown(self._slot_at, capacity)
        self.held = _grown(self.held, capacity)

    def _lay_out(self, live: int) -> None:
        """A table for ``live`` keys at most a quarter full, holding the held slots' keys."""
        size = _MIN_CAPACITY
        while size < 4 * live:
            size *= 2
        self._bits = size.bit_length() - 1
        self._keys = np.zeros(size, dtype=np.uint64)
        self._vals = np.full(size, _EMPTY, dtype=np.int64)
        self._tombstones = 0
        held = np.flatnonzero(self.held)
        self._place(self.slot_hash[held], held)

    def _place(self, hashes: np.ndarray, slots: np.ndarray) -> None:
        """Put keys known not to be in the table at the first free position of each one's run.

        All keys move together; where several reach one free position in a round, the first
        takes it and the others go on, so every key stays reachable from its home without an
        empty position between."""
        mask = len(self._keys) - 1
        todo = np.arange(len(hashes))
        at = self._home(hashes)
        while len(todo):
            free = self._vals[at] < 0
            taking = todo[free]
            position, first = np.unique(at[free], return_index=True)
            winners = taking[first]
            self._tombstones -= int(np.count_nonzero(self._vals[position] == _RELEASED))
            self._keys[position] = hashes[winners]
            self._vals[position] = slots[winners]
            self._slot_at[slots[winners]] = position
            placed = np.zeros(len(hashes), dtype=bool)
            placed[winners] = True
            going = ~placed[todo]
            todo, at = todo[going], (at[going] + 1) & mask


def _grown(array: np.ndarray, capacity: int) -> np.ndarray:
    out = np.zeros((capacity,) + array.shape[1:], dtype=array.dtype)
    out[: len(array)] = array
    return out
