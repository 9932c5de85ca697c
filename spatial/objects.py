"""The object table every backend shares: ids, bounds and flags in pooled numpy arrays.

Backends address objects by *slot* (a dense row index into these arrays) so that compiled
kernels can read bounds without any id lookup; the table maps user ids to slots and back.
A removed object's slot goes on a free list and is reused by a later insert, so slots held by
a backend stay valid until that object is removed.
"""
from __future__ import annotations

import numpy as np

from .errors import GeometryError, UnknownIdError
from .geometry import as_boxes

#: Largest id + 1 accepted. The id→slot map is a dense int32 array sized by the largest id,
#: so ids must stay reasonably compact (scene ids are sequential; importers remap foreign ids).
MAX_ID = 1 << 27


class ObjectTable:
    """Pooled storage of object ids, bounds (``lo``/``hi``) and the dynamic/awake flags."""

    def __init__(self, dims: int = 3):
        self.dims = dims
        self._reset()

    def _reset(self) -> None:
        """Hold nothing, with no storage: the state of a new table."""
        self._capacity = 0
        self.lo = np.empty((0, 3))
        self.hi = np.empty((0, 3))
        self.ids = np.empty(0, dtype=np.int64)
        self.dynamic = np.empty(0, dtype=bool)
        self.awake = np.empty(0, dtype=bool)
        self.alive = np.empty(0, dtype=bool)
        self._slot_by_id = np.full(0, -1, dtype=np.int32)
        self._free: list[int] = []
        self._high_water = 0  # slots below this have been used at least once
        self.count = 0

    # -- capacity -------------------------------------------------------------------------
    def _grow_slots(self, needed: int) -> None:
        """Room for ``needed`` slots. The caller writes every row from the old high-water mark
        up to ``needed`` at once, so only the spare rows beyond are filled here (at a million
        objects, filling rows about to be overwritten costs as much as writing them)."""
        if needed <= self._capacity:
            return
        cap = max(needed, 2 * self._capacity, 64)
        keep = self._high_water

        def grow(arr, fill):
            new = np.empty((cap,) + arr.shape[1:], dtype=arr.dtype)
            new[:keep] = arr[:keep]
            new[needed:] = fill
            return new

        self.lo = grow(self.lo, 0.0)
        self.hi = grow(self.hi, 0.0)
        self.ids = grow(self.ids, -1)
        self.dynamic = grow(self.dynamic, False)
        self.awake = grow(self.awake, False)
        self.alive = grow(self.alive, False)
        self._capacity = cap

    def _grow_map(self, max_id: int) -> None:
        if max_id < len(self._slot_by_id):
            return
        size = max(max_id + 1, 2 * len(self._slot_by_id), 64)
        size = min(size, MAX_ID)
        new = np.full(size, -1, dtype=np.int32)
        new[: len(self._slot_by_id)] = self._slot_by_id
        self._slot_by_id = new

    # -- id checks ------------------------------------------------------------------------
    @staticmethod
    def as_ids(ids) -> np.ndarray:
        """Validate ids: integers in ``[0, MAX_ID)`` without duplicates."""
        arr = np.asarray(ids)
        if arr.size == 0:
            return np.empty(0, dtype=np.int64)
        if not np.issubdtype(arr.dtype, np.integer):
            if np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and \
                    np.all(arr == np.round(arr)):
                arr = arr.astype(np.int64)
            else:
                raise UnknownIdError(f"object ids must be integers, got dtype {arr.dtype}")
        arr = arr.astype(np.int64, copy=False).reshape(-1)
        if arr.min() < 0 or arr.max() >= MAX_ID:
            bad = arr[(arr < 0) | (arr >= MAX_ID)][0]
            raise UnknownIdError(f"object id {int(bad)} is outside [0, {MAX_ID})")
        if len(arr) > 1:
            s = np.sort(arr)
            dup = s[1:] == s[:-1]
            if dup.any():
                raise UnknownIdError(f"object id {int(s[1:][dup][0])} appears twice in one call")
        return arr

    def slots_of(self, ids) -> np.ndarray:
        """Slots of existing ids; raises :class:`UnknownIdError` naming the first missing id."""
        ids = self.as_ids(ids)
        if len(ids) == 0:
            return np.empty(0, dtype=np.int64)
        inside = ids < len(self._slot_by_id)
        slots = np.full(len(ids), -1, dtype=np.int64)
        slots[inside] = self._slot_by_id[ids[inside]]
        if (slots < 0).any():
            raise UnknownIdError(f"object id {int(ids[slots < 0][0])} is not in the index")
        return slots

    def contains(self, ids) -> np.ndarray:
        """Boolean mask: which of ``ids`` are held."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        out = np.zeros(len(ids), dtype=bool)
        ok = (ids >= 0) & (ids < len(self._slot_by_id))
        out[ok] = self._slot_by_id[ids[ok]] >= 0
        return out

    # -- edits ----------------------------------------------------------------------------
    def check_bounds(self, lo, hi, n: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = as_boxes(lo, hi, what="bounds")
        if len(lo) != n:
            raise GeometryError(f"got {n} ids but {len(lo)} boxes")
        return lo, hi

    @staticmethod
    def _flags(values, n: int, default: bool, what: str) -> np.ndarray:
        if values is None:
            return np.full(n, default, dtype=bool)
        arr = np.asarray(values, dtype=bool).reshape(-1)
        if arr.size == 1:
            return np.full(n, bool(arr[0]))
        if len(arr) != n:
            raise GeometryError(f"got {n} ids but {len(arr)} {what} flags")
        return arr

    def add(self, ids, lo, hi, dynamic=None, awake=None) -> np.ndarray:
        """Add new objects; returns their slots. Defaults: dynamic and awake."""
        ids = self.as_ids(ids)
        n = len(ids)
        lo, hi = self.check_bounds(lo, hi, n)
        dyn = self._flags(dynamic, n, True, "dynamic")
        awk = self._flags(awake, n, True, "awake")
        if n == 0:
            return np.empty(0, dtype=np.int64)
        present = self.contains(ids)
        if present.any():
            raise UnknownIdError(f"object id {int(ids[present][0])} is already in the index")
        reuse = min(len(self._free), n)
        slots = np.empty(n, dtype=np.int64)
        if reuse:
            slots[:reuse] = self._free[-reuse:]
            del self._free[-reuse:]
        fresh = n - reuse
        if fresh:
            self._grow_slots(self._high_water + fresh)
            slots[reuse:] = np.arange(self._high_water, self._high_water + fresh)
            self._high_water += fresh
        self._grow_map(int(ids.max()))
        # fresh slots are one run: slice assignment copies without gathering indices
        rows = slice(int(slots[0]), int(slots[0]) + n) if not reuse else slots
        self.lo[rows] = lo
        self.hi[rows] = hi
        self.ids[rows] = ids
        self.dynamic[rows] = dyn
        self.awake[rows] = awk
        self.alive[rows] = True
        self._slot_by_id[ids] = slots
        self.count += n
        return slots

    def remove(self, ids) -> np.ndarray:
        """Remove objects by id; returns the freed slots (still holding the old bounds)."""
        slots = self.slots_of(ids)
        self.alive[slots] = False
        self._slot_by_id[self.ids[slots]] = -1
        self._free.extend(slots.tolist())
        self.count -= len(slots)
        return slots

    def clear(self) -> None:
        self._reset()

    # -- views ----------------------------------------------------------------------------
    def alive_slots(self) -> np.ndarray:
        """Slots of every held object, ascending."""
        return np.flatnonzero(self.alive[: self._high_water])

    @property
    def slot_limit(self) -> int:
        """One past the highest slot ever used: arrays may be sliced to this length."""
        return self._high_water

    def active_mask(self) -> np.ndarray:
        """Per slot: dynamic and awake (the objects that make a pair 'active')."""
        n = self._high_water
        return self.alive[:n] & self.dynamic[:n] & self.awake[:n]
