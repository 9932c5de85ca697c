"""The brute-force backend: the oracle every other backend is tested against.

It keeps no structure at all: every query tests every object and ``pairs`` tests every pair,
with the reference predicates of :mod:`spatial.geometry`. Its node table is a single root leaf
holding every object, so the overlay and statistics code paths work with it too.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from spatial.contract import FrustumHits, NodeTable, PairHits, RayHits, SlotHits, SpatialIndex
from spatial.geometry import box_contains_point, boxes_overlap, frustum_box, ray_box, sphere_box


@dataclass(frozen=True)
class BruteParams:
    """The brute-force oracle has nothing to tune."""


@numba.njit(cache=True, nogil=True)
def _all_pairs(slots, lo, hi, active, only_active):
    """Test every pair of ``slots``; return the overlapping ones and the number of tests."""
    n = len(slots)
    cap = 1024
    out = np.empty((cap, 2), dtype=np.int64)
    m = 0
    tests = 0
    for ii in range(n):
        a = slots[ii]
        for jj in range(ii + 1, n):
            b = slots[jj]
            if only_active and not (active[a] or active[b]):
                continue
            tests += 1
            if (lo[a, 0] <= hi[b, 0] and lo[b, 0] <= hi[a, 0] and lo[a, 1] <= hi[b, 1]
                    and lo[b, 1] <= hi[a, 1] and lo[a, 2] <= hi[b, 2] and lo[b, 2] <= hi[a, 2]):
                if m == cap:
                    cap *= 2
                    grown = np.empty((cap, 2), dtype=np.int64)
                    grown[:m] = out[:m]
                    out = grown
                out[m, 0] = a
                out[m, 1] = b
                m += 1
    return out[:m], tests


class BruteForce(SpatialIndex):
    """Tests everything against everything. Slow, simple and obviously right."""

    name = "brute"
    dims = 3
    description = "Brute force: no structure, every object tested (the reference oracle)."
    Params = BruteParams
    branching = 2

    def _setup(self) -> None:
        pass

    def _build(self, slots) -> None:
        pass

    def _insert(self, slots) -> None:
        pass

    def _remove(self, slots) -> None:
        pass

    def _update(self, slots) -> None:
        pass

    def _alive(self):
        slots = self.objects.alive_slots()
        return slots, self.objects.lo[slots], self.objects.hi[slots]

    def _rows(self, trace):
        return np.zeros(1, dtype=np.int64) if trace else None

    def _query_box(self, lo, hi, trace):
        slots, olo, ohi = self._alive()
        mask = boxes_overlap(olo, ohi, lo, hi)
        return SlotHits(slots[mask], 1, len(slots), self._rows(trace))

    def _query_sphere(self, center, radius, trace):
        slots, olo, ohi = self._alive()
        mask = sphere_box(center, radius, olo, ohi)
        return SlotHits(slots[mask], 1, len(slots), self._rows(trace))

    def _query_point(self, point, trace):
        slots, olo, ohi = self._alive()
        mask = box_contains_point(olo, ohi, point)
        return SlotHits(slots[mask], 1, len(slots), self._rows(trace))

    def _query_ray(self, origin, direction, max_t, trace):
        slots, olo, ohi = self._alive()
        hit, t = ray_box(origin, direction, olo, ohi)
        hit &= t <= max_t
        return RayHits(slots[hit], t[hit], 1, len(slots), self._rows(trace))

    def _query_frustum(self, planes, trace):
        slots, olo, ohi = self._alive()
        mask = frustum_box(planes, olo, ohi)
        return FrustumHits(slots[mask], 1, len(slots), self._rows(trace),
                           np.zeros(0, dtype=np.int64) if trace else None)

    def _pairs(self, mode):
        slots = self.objects.alive_slots()
        active = np.zeros(self.objects.slot_limit, dtype=bool)
        active[:] = self.objects.active_mask()
        pairs, tests = _all_pairs(slots.astype(np.int64), self.objects.lo, self.objects.hi,
                                  active, mode == "active")
        return PairHits(pairs, tests, np.array([tests], dtype=np.int64))

    def _nodes(self) -> NodeTable:
        slots, olo, ohi = self._alive()
        n = len(slots)
        if n:
            lo, hi = olo.min(axis=0), ohi.max(axis=0)
        else:
            lo = hi = np.zeros(3)
        awake = bool(self.objects.active_mask().any())
        return NodeTable.from_columns(
            lo=lo[None], hi=hi[None], depth=[0], parent=[-1], is_leaf=[True], own_count=[n],
            subtree_count=[n], lifespan_left=[0], lifespan_max=[0], awake=[awake], pair_tests=[0])

    def _node_objects(self, row):
        if row != 0:
            raise IndexError(f"node row {row} does not exist (brute force has one node)")
        return self.objects.alive_slots()

    def _leaf_capacity(self) -> float:
        return float(max(self.objects.count, 1))

    def _validate(self) -> None:
        pass  # nothing beyond the object table, which the base class checks


def register(registry) -> None:
    """Built-in plugin entry point."""
    registry.add_backend(BruteForce)
