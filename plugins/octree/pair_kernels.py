"""Compiled pair finding for the octree.

Each node tests its own objects against each other and against a list of objects *passed
down* to it, which every object of its subtree must meet-test. A child receives

* its ancestors' objects (the node's own objects plus what the node itself received), and
* the objects of its *earlier* siblings' subtrees that meet its loose bounds: boxes touching a
  shared face (closed overlap), or lying in the overlap of loose bounds.

A pair ``(a, b)`` is thus found exactly once, in the node holding the deeper object (or, when
their nodes are in different subtrees, in the later sibling's side only).

What is passed down is kept small:

* an ancestor object is passed to a child only if it meets the child's loose bounds (nothing
  outside them can meet an object stored below);
* in ``active`` mode a subtree without any active (dynamic and awake) object receives only the
  active ancestor objects, and is skipped when there are none: static and sleeping objects
  never test against each other, only the moving objects travel down.

Within a node, both the own × own and own × passed tests run as a sort-and-sweep on the x axis
(the passed list is kept sorted by ``lo.x``), so a node holding many objects (e.g. large boxes
straddling the root's split planes) costs the x-overlapping candidates, not all pairs.
``tests`` counts the candidates that pass the x sweep and get the full box test.

Lists carry a copy of their boxes (``(n, 6)``: lo xyz, hi xyz) and active flags next to the
slots, so the sweeps read memory sequentially instead of gathering from the object table.
"""
from __future__ import annotations

import numba
import numpy as np

from .layout import CHILD, COUNT, HEAD, LOOSE_HI, LOOSE_LO, NCHILD, NEXT
from .query_kernels import STACK, _grow


@numba.njit(cache=True, inline="always")
def _meets_yz(B, i, C, j):
    return B[i, 1] <= C[j, 4] and C[j, 1] <= B[i, 4] and B[i, 2] <= C[j, 5] and C[j, 2] <= B[i, 5]


@numba.njit(cache=True)
def _sort_list(S, B, A, start, stop):
    """Sort entries ``[start, stop)`` of a list by ``lo.x`` (slots, boxes and flags together)."""
    n = stop - start
    if n < 2:
        return
    order = np.argsort(B[start:stop, 0], kind="mergesort")
    s_tmp = S[start:stop].copy()
    b_tmp = B[start:stop].copy()
    a_tmp = A[start:stop].copy()
    for k in range(n):
        S[start + k] = s_tmp[order[k]]
        for a in range(6):
            B[start + k, a] = b_tmp[order[k], a]
        A[start + k] = a_tmp[order[k]]


@numba.njit(cache=True)
def _grow_list(S, B, A, needed):
    if needed <= S.shape[0]:
        return S, B, A
    size = max(needed, 2 * S.shape[0])
    S2 = np.empty(size, dtype=S.dtype)
    B2 = np.empty((size, 6))
    A2 = np.empty(size, dtype=np.bool_)
    S2[: S.shape[0]] = S
    B2[: S.shape[0]] = B
    A2[: S.shape[0]] = A
    return S2, B2, A2


@numba.njit(cache=True, inline="always")
def _meets_node(B, i, NF, node):
    for a in range(3):
        if B[i, a] > NF[node, LOOSE_HI + a] or NF[node, LOOSE_LO + a] > B[i, 3 + a]:
            return False
    return True


@numba.njit(cache=True)
def _collect_subtree(NI, NF, OB, lo, hi, active, subtree, box_node, S, B, A, m,
                     only_active_objects, node_awake, stack):
    """Append the objects of ``subtree`` meeting ``box_node``'s loose bounds to the list."""
    for a in range(3):
        if NF[subtree, LOOSE_LO + a] > NF[box_node, LOOSE_HI + a] \
                or NF[box_node, LOOSE_LO + a] > NF[subtree, LOOSE_HI + a]:
            return S, B, A, m
    stack[0] = subtree
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        meets = True
        for a in range(3):
            if NF[node, LOOSE_LO + a] > NF[box_node, LOOSE_HI + a] \
                    or NF[box_node, LOOSE_LO + a] > NF[node, LOOSE_HI + a]:
                meets = False
                break
        if not meets or (only_active_objects and not node_awake[node]):
            continue
        s = NI[node, HEAD]
        while s >= 0:
            if not (only_active_objects and not active[s]):
                inside = True
                for a in range(3):
                    if lo[s, a] > NF[box_node, LOOSE_HI + a] or NF[box_node, LOOSE_LO + a] > hi[s, a]:
                        inside = False
                        break
                if inside:
                    if m >= S.shape[0]:
                        S, B, A = _grow_list(S, B, A, m + 1)
                    S[m] = s
                    for a in range(3):
                        B[m, a] = lo[s, a]
                        B[m, 3 + a] = hi[s, a]
                    A[m] = active[s]
                    m += 1
            s = OB[s, NEXT]
        if NI[node, NCHILD]:
            for c in range(8):
                child = NI[node, CHILD + c]
                if child >= 0:
                    stack[top] = child
                    top += 1
    return S, B, A, m


@numba.njit(cache=True)
def _sweep_own(OS, OBX, OA, n, only_active, pairs, m):
    """Pairs within one list sorted by ``lo.x``; returns ``(pairs found so far, tests)``."""
    cap = pairs.shape[0]
    tests = 0
    for i in range(n):
        ahx = OBX[i, 3]
        for j in range(i + 1, n):
            if OBX[j, 0] > ahx:
                break
            if only_active and not (OA[i] or OA[j]):
                continue
            tests += 1
            if _meets_yz(OBX, i, OBX, j):
                if m < cap:
                    pairs[m, 0] = OS[i]
                    pairs[m, 1] = OS[j]
                m += 1
    return m, tests


@numba.njit(cache=True)
def _sweep_cross(OS, OBX, OA, n, PS, PB, PA, p0, p1, only_active, pairs, m):
    """Pairs between a list and a segment ``[p0, p1)``, both sorted by ``lo.x``: whichever
    entry starts first scans the other list ahead of it."""
    cap = pairs.shape[0]
    tests = 0
    i = 0
    j = p0
    while i < n and j < p1:
        if OBX[i, 0] <= PB[j, 0]:
            ahx = OBX[i, 3]
            jj = j
            while jj < p1 and PB[jj, 0] <= ahx:
                if not (only_active and not (OA[i] or PA[jj])):
                    tests += 1
                    if _meets_yz(OBX, i, PB, jj):
                        if m < cap:
                            pairs[m, 0] = OS[i]
                            pairs[m, 1] = PS[jj]
                        m += 1
                jj += 1
            i += 1
        else:
            bhx = PB[j, 3]
            ii = i
            while ii < n and OBX[ii, 0] <= bhx:
                if not (only_active and not (OA[ii] or PA[j])):
                    tests += 1
                    if _meets_yz(OBX, ii, PB, j):
                        if m < cap:
                            pairs[m, 0] = OS[ii]
                            pairs[m, 1] = PS[j]
                        m += 1
                ii += 1
            j += 1
    return m, tests


@numba.njit(cache=True)
def find_pairs(NI, NF, OB, lo, hi, active, only_active, node_awake):
    """All overlapping pairs of slots, the number of tests and the tests per node id."""
    node_tests = np.zeros(NI.shape[0], dtype=np.int64)
    pairs = np.empty((1024, 2), dtype=np.int64)
    m = 0
    tests = 0
    # passed-down lists, stacked as segments: slots, boxes, active flags
    PS = np.empty(1024, dtype=np.int64)
    PB = np.empty((1024, 6))
    PA = np.empty(1024, dtype=np.bool_)
    # the node's own objects, and own merged with passed
    OS = np.empty(64, dtype=np.int64)
    OBX = np.empty((64, 6))
    OA = np.empty(64, dtype=np.bool_)
    MS = np.empty(64, dtype=np.int64)
    MB = np.empty((64, 6))
    MA = np.empty(64, dtype=np.bool_)
    stack_node = np.empty(STACK, dtype=np.int64)
    stack_start = np.empty(STACK, dtype=np.int64)
    stack_end = np.empty(STACK, dtype=np.int64)
    sub_stack = np.empty(STACK, dtype=np.int64)
    if only_active and not node_awake[0]:
        return pairs[:0], 0, node_tests
    stack_node[0] = 0
    stack_start[0] = 0
    stack_end[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack_node[top]
        p0 = stack_start[top]
        p1 = stack_end[top]
        buf_top = p1  # segments above belong to finished subtrees
        n = NI[node, COUNT]
        if n > OS.shape[0]:
            OS, OBX, OA = _grow_list(OS, OBX, OA, n)
        s = NI[node, HEAD]
        k = 0
        while s >= 0:
            OS[k] = s
            for a in range(3):
                OBX[k, a] = lo[s, a]
                OBX[k, 3 + a] = hi[s, a]
            OA[k] = active[s]
            k += 1
            s = OB[s, NEXT]
        _sort_list(OS, OBX, OA, 0, n)
        # the sweeps write into ``pairs`` up to its capacity and report how many they found;
        # growing happens here, outside their loops, and a sweep that overflowed is re-run
        m_new, own_tests = _sweep_own(OS, OBX, OA, n, only_active, pairs, m)
        if m_new > pairs.shape[0]:
            pairs = _grow(pairs, 2 * m_new)
            m_new, own_tests = _sweep_own(OS, OBX, OA, n, only_active, pairs, m)
        m = m_new
        m_new, cross_tests = _sweep_cross(OS, OBX, OA, n, PS, PB, PA, p0, p1, only_active, pairs, m)
        if m_new > pairs.shape[0]:
            pairs = _grow(pairs, 2 * m_new)
            m_new, cross_tests = _sweep_cross(OS, OBX, OA, n, PS, PB, PA, p0, p1, only_active,
                                              pairs, m)
        m = m_new
        local = own_tests + cross_tests
        node_tests[node] += local
        tests += local
        if NI[node, NCHILD] == 0:
            continue
        # merge passed and own (both sorted by lo.x) into the list the children filter
        total = (p1 - p0) + n
        if total > MS.shape[0]:
            MS, MB, MA = _grow_list(MS, MB, MA, total)
        i = 0
        j = p0
        for k in range(total):
            if j >= p1 or (i < n and OBX[i, 0] <= PB[j, 0]):
                MS[k] = OS[i]
                for a in range(6):
                    MB[k, a] = OBX[i, a]
                MA[k] = OA[i]
                i += 1
            else:
                MS[k] = PS[j]
                for a in range(6):
                    MB[k, a] = PB[j, a]
                MA[k] = PA[j]
                j += 1
        for c in range(8):
            child = NI[node, CHILD + c]
            if child < 0:
                continue
            only_active_objects = only_active and not node_awake[child]
            start = buf_top
            if buf_top + total > PS.shape[0]:
                PS, PB, PA = _grow_list(PS, PB, PA, buf_top + total)
            for k in range(total):
                if only_active_objects and not MA[k]:
                    continue
                if _meets_node(MB, k, NF, child):
                    PS[buf_top] = MS[k]
                    for a in range(6):
                        PB[buf_top, a] = MB[k, a]
                    PA[buf_top] = MA[k]
                    buf_top += 1
            # objects of earlier siblings' subtrees inside this child's bounds (touching faces,
            # or overlapping loose bounds): found here once, never from the sibling's side
            sorted_end = buf_top
            for e in range(c):
                other = NI[node, CHILD + e]
                if other < 0 or (only_active_objects and not node_awake[other]):
                    continue
                PS, PB, PA, buf_top = _collect_subtree(NI, NF, OB, lo, hi, active, other, child,
                                                       PS, PB, PA, buf_top, only_active_objects,
                                                       node_awake, sub_stack)
            if buf_top > sorted_end:
                _sort_list(PS, PB, PA, start, buf_top)
            if only_active_objects and buf_top == start:
                continue
            stack_node[top] = child
            stack_start[top] = start
            stack_end[top] = buf_top
            top += 1
    return pairs[:m], tests, node_tests
