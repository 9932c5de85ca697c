"""A read-only packed copy of every node's objects, sorted so queries need not scan whole lists.

Upper nodes of a classic octree hold every object straddling their split planes — thousands in
a large mixed-size level — and a query that reaches such a node would test them all. The packed
copy (rebuilt lazily at the first query after an edit) stores each node's objects contiguously,
with their boxes, split in three groups by the first split plane of the node they straddle, and
each group sorted by ``lo`` along an axis on which it does not clump. A box query then binary
searches each group for the entries that can reach it on that axis (``lo >= qlo - reach`` with
``reach`` the group's largest extent there) and stops at the first entry starting beyond it.
"""
from __future__ import annotations

import numba
import numpy as np

from .layout import CORE_HI, CORE_LO, COUNT, HEAD, NEXT


@numba.njit(cache=True, inline="always")
def group_axis(group):
    """Sort axis of a group: not the axis its objects straddle."""
    return (group + 1) % 3


@numba.njit(cache=True)
def pack(NI, NF, OB, lo, hi, order):
    """Pack the objects of the nodes in ``order``.

    Returns ``(slots, boxes (n, 6), group_start (nodes, 4), reach (nodes, 3))``: node ``v``'s
    group ``g`` occupies ``group_start[v, g]:group_start[v, g + 1]``.
    """
    total = 0
    for k in range(len(order)):
        total += NI[order[k], COUNT]
    slots = np.empty(total, dtype=np.int64)
    boxes = np.empty((total, 6))
    group_start = np.zeros((NI.shape[0], 4), dtype=np.int64)
    reach = np.zeros((NI.shape[0], 3))
    tmp = np.empty(64, dtype=np.int64)
    cls = np.empty(64, dtype=np.int64)
    pos = 0
    for k in range(len(order)):
        node = order[k]
        n = NI[node, COUNT]
        if n > tmp.shape[0]:
            tmp = np.empty(2 * n, dtype=np.int64)
            cls = np.empty(2 * n, dtype=np.int64)
        counts = np.zeros(3, dtype=np.int64)
        s = NI[node, HEAD]
        i = 0
        while s >= 0:
            tmp[i] = s
            c = 2
            for a in range(3):
                mid = 0.5 * (NF[node, CORE_LO + a] + NF[node, CORE_HI + a])
                if lo[s, a] < mid and hi[s, a] > mid:
                    c = a
                    break
            cls[i] = c
            counts[c] += 1
            i += 1
            s = OB[s, NEXT]
        group_start[node, 0] = pos
        for g in range(3):
            group_start[node, g + 1] = group_start[node, g] + counts[g]
        fill = group_start[node, :3].copy()
        for i in range(n):
            slots[fill[cls[i]]] = tmp[i]
            fill[cls[i]] += 1
        for g in range(3):
            g0 = group_start[node, g]
            g1 = group_start[node, g + 1]
            if g1 == g0:
                continue
            axis = group_axis(g)
            keys = np.empty(g1 - g0)
            for i in range(g0, g1):
                keys[i - g0] = lo[slots[i], axis]
            perm = np.argsort(keys, kind="mergesort")
            seg = slots[g0:g1].copy()
            widest = 0.0
            for i in range(g1 - g0):
                s = seg[perm[i]]
                slots[g0 + i] = s
                for a in range(3):
                    boxes[g0 + i, a] = lo[s, a]
                    boxes[g0 + i, 3 + a] = hi[s, a]
                widest = max(widest, hi[s, axis] - lo[s, axis])
            reach[node, g] = widest
        pos += n
    return slots, boxes, group_start, reach


@numba.njit(cache=True, inline="always")
def first_reaching(boxes, g0, g1, axis, qlo_axis, reach):
    """First entry of a group (sorted by ``lo`` on ``axis``) that may reach ``qlo_axis``.

    Entries before it end below ``qlo_axis``; the slack keeps the bound conservative under
    rounding of ``hi - lo``.
    """
    key = qlo_axis - reach * (1.0 + 1e-9) - abs(qlo_axis) * 4e-16
    a = g0
    b = g1
    while a < b:
        mid = (a + b) // 2
        if boxes[mid, axis] < key:
            a = mid + 1
        else:
            b = mid
    return a
