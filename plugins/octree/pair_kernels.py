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
"""
from __future__ import annotations

import numba
import numpy as np

from .layout import CHILD, COUNT, HEAD, LOOSE_HI, LOOSE_LO, NCHILD, NEXT
from .query_kernels import STACK, _grow


@numba.njit(cache=True, inline="always")
def _overlap_yz(lo, hi, a, b):
    return (lo[a, 1] <= hi[b, 1] and lo[b, 1] <= hi[a, 1]
            and lo[a, 2] <= hi[b, 2] and lo[b, 2] <= hi[a, 2])


@numba.njit(cache=True)
def _sort_by_lo_x(items, n, lo):
    """Sort ``items[:n]`` by ``lo.x`` in place (insertion sort for the common tiny lists)."""
    if n <= 24:
        for i in range(1, n):
            v = items[i]
            key = lo[v, 0]
            j = i
            while j > 0 and lo[items[j - 1], 0] > key:
                items[j] = items[j - 1]
                j -= 1
            items[j] = v
        return
    keys = np.empty(n)
    for i in range(n):
        keys[i] = lo[items[i], 0]
    order = np.argsort(keys, kind="mergesort")
    tmp = items[:n].copy()
    for i in range(n):
        items[i] = tmp[order[i]]


@numba.njit(cache=True)
def _collect_subtree(NI, NF, OB, lo, hi, subtree, box_node, out, m, only_active_objects, active,
                     node_awake, stack):
    """Append to ``out[m:]`` the objects of ``subtree`` meeting ``box_node``'s loose bounds."""
    for a in range(3):
        if NF[subtree, LOOSE_LO + a] > NF[box_node, LOOSE_HI + a] \
                or NF[box_node, LOOSE_LO + a] > NF[subtree, LOOSE_HI + a]:
            return out, m
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
                    out = _grow(out, m + 1)
                    out[m] = s
                    m += 1
            s = OB[s, NEXT]
        if NI[node, NCHILD]:
            for c in range(8):
                child = NI[node, CHILD + c]
                if child >= 0:
                    stack[top] = child
                    top += 1
    return out, m


@numba.njit(cache=True)
def find_pairs(NI, NF, OB, lo, hi, active, only_active, node_awake):
    """All overlapping pairs of slots, the number of tests and the tests per node id."""
    node_tests = np.zeros(NI.shape[0], dtype=np.int64)
    pairs = np.empty((1024, 2), dtype=np.int64)
    m = 0
    tests = 0
    passed = np.empty(1024, dtype=np.int64)  # stacked segments of passed-down lists
    own = np.empty(64, dtype=np.int64)
    merged = np.empty(64, dtype=np.int64)
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
        own = _grow(own, n)
        s = NI[node, HEAD]
        k = 0
        while s >= 0:
            own[k] = s
            k += 1
            s = OB[s, NEXT]
        _sort_by_lo_x(own, n, lo)
        local = 0
        # own x own
        for i in range(n):
            a = own[i]
            ahx = hi[a, 0]
            for j in range(i + 1, n):
                b = own[j]
                if lo[b, 0] > ahx:
                    break
                if only_active and not (active[a] or active[b]):
                    continue
                local += 1
                if _overlap_yz(lo, hi, a, b):
                    pairs = _grow(pairs, m + 1)
                    pairs[m, 0] = a
                    pairs[m, 1] = b
                    m += 1
        # own x passed: two sorted lists swept together; whichever starts first scans the other
        i = 0
        j = p0
        while i < n and j < p1:
            if lo[own[i], 0] <= lo[passed[j], 0]:
                a = own[i]
                ahx = hi[a, 0]
                jj = j
                while jj < p1 and lo[passed[jj], 0] <= ahx:
                    b = passed[jj]
                    jj += 1
                    if only_active and not (active[a] or active[b]):
                        continue
                    local += 1
                    if _overlap_yz(lo, hi, a, b):
                        pairs = _grow(pairs, m + 1)
                        pairs[m, 0] = a
                        pairs[m, 1] = b
                        m += 1
                i += 1
            else:
                b = passed[j]
                bhx = hi[b, 0]
                ii = i
                while ii < n and lo[own[ii], 0] <= bhx:
                    a = own[ii]
                    ii += 1
                    if only_active and not (active[a] or active[b]):
                        continue
                    local += 1
                    if _overlap_yz(lo, hi, a, b):
                        pairs = _grow(pairs, m + 1)
                        pairs[m, 0] = a
                        pairs[m, 1] = b
                        m += 1
                j += 1
        node_tests[node] += local
        tests += local
        if NI[node, NCHILD] == 0:
            continue
        # merge passed and own (both sorted by lo.x) into the list the children filter
        total = (p1 - p0) + n
        merged = _grow(merged, total)
        i = 0
        j = p0
        for k in range(total):
            if j >= p1 or (i < n and lo[own[i], 0] <= lo[passed[j], 0]):
                merged[k] = own[i]
                i += 1
            else:
                merged[k] = passed[j]
                j += 1
        for c in range(8):
            child = NI[node, CHILD + c]
            if child < 0:
                continue
            awake_child = node_awake[child]
            start = buf_top
            passed = _grow(passed, buf_top + total)
            for k in range(total):
                x = merged[k]
                if only_active and not awake_child and not active[x]:
                    continue
                inside = True
                for a in range(3):
                    if lo[x, a] > NF[child, LOOSE_HI + a] or NF[child, LOOSE_LO + a] > hi[x, a]:
                        inside = False
                        break
                if inside:
                    passed[buf_top] = x
                    buf_top += 1
            # objects of earlier siblings' subtrees inside this child's bounds (touching faces,
            # or overlapping loose bounds): found here once, never from the sibling's side
            sorted_end = buf_top
            for e in range(c):
                other = NI[node, CHILD + e]
                if other < 0 or (only_active and not awake_child and not node_awake[other]):
                    continue
                passed, buf_top = _collect_subtree(NI, NF, OB, lo, hi, other, child, passed, buf_top,
                                                   only_active and not awake_child, active,
                                                   node_awake, sub_stack)
            if buf_top > sorted_end:
                _sort_by_lo_x(passed[start:buf_top], buf_top - start, lo)
            if only_active and not awake_child and buf_top == start:
                continue
            stack_node[top] = child
            stack_start[top] = start
            stack_end[top] = buf_top
            top += 1
    return pairs[:m], tests, node_tests
