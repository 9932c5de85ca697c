"""Compiled pair finding for the octree.

Each node tests its own objects against each other and against a list of objects *passed
down* to it, which every object of its subtree must meet-test. A child receives

* its ancestors' objects (the node's own objects plus what the node itself received), and
* the objects of its *earlier* siblings' subtrees that meet its content: boxes touching a
  shared face (closed overlap), or lying in the overlap of loose bounds.

A pair ``(a, b)`` is thus found exactly once, in the node holding the deeper object (or, when
their nodes are in different subtrees, in the later sibling's side only).

What is passed down, and where the walk goes, is kept small. Before the walk one bottom-up
pass records each subtree's object count and the *tight* bounds of its objects
(:func:`subtree_bounds`); a cell says where objects may lie, these bounds where they do, and in
a sparse level most of every cell is empty. Then:

* an ancestor or sibling object is passed to a child only if it meets the tight bounds of the
  child's subtree (nothing outside them can meet an object stored below), and a sibling subtree
  whose tight bounds miss the child's is not walked;
* a child whose subtree holds at most one object and receives nothing is not visited (no pair
  can lie there), nor is an empty one; a node holding nothing of its own only passes its list on;
* in ``active`` mode a subtree without any active (dynamic and awake) object receives only the
  active ancestor objects, and is skipped when there are none: static and sleeping objects
  never test against each other, only the moving objects travel down.

Within a node, both the own × own and own × passed tests run as sort-and-sweeps, so a node
holding many objects (e.g. large boxes straddling the root's split planes) costs the candidates
that overlap on the sweep axis, not all pairs. One fixed axis would be poor: every object
straddling the node's x split overlaps every other on x. So each list is split in three groups
by the axis on which its objects clump — for the node's own objects the first split plane they
straddle, for passed objects the axis on which they cover most of the node — and each pair of
groups is swept along an axis on which neither clumps. ``tests`` counts the candidates that
overlap on the sweep axis and get the full box test.

Lists carry a copy of their boxes (``(n, 6)``: lo xyz, hi xyz) and active flags next to the
slots, so the sweeps read memory sequentially instead of gathering from the object table.

Every kernel releases the GIL (``nogil``): the editor finds pairs on worker threads.
"""
from __future__ import annotations

import numba
import numpy as np

from spatial.kernels import grow

from .layout import CHILD, CORE_HI, CORE_LO, COUNT, HEAD, LOOSE_HI, LOOSE_LO, NCHILD, NEXT, NODE, PARENT
from .query_kernels import STACK


@numba.njit(cache=True, nogil=True, inline="always")
def _meets_other_axes(B, i, C, j, axis):
    """Closed overlap on the two axes other than ``axis``."""
    for a in range(3):
        if a != axis and (B[i, a] > C[j, 3 + a] or C[j, a] > B[i, 3 + a]):
            return False
    return True


@numba.njit(cache=True, nogil=True)
def _grow_list(S, B, A, needed):
    if needed <= S.shape[0]:
        return S, B, A
    size = max(needed, 2 * S.shape[0])
    S2 = np.empty(size, dtype=S.dtype)
    B2 = np.empty((size, 6))
    A2 = np.empty(size, dtype=np.bool_)
    for i in range(S.shape[0]):  # loops: slice assignment is slow to compile
        S2[i] = S[i]
        A2[i] = A[i]
        for c in range(6):
            B2[i, c] = B[i, c]
    return S2, B2, A2


@numba.njit(cache=True, nogil=True, inline="always")
def _boxes_meet(T, i, U, j):
    """Closed overlap of row ``i`` of ``T`` and row ``j`` of ``U`` (both lo xyz, hi xyz)."""
    for a in range(3):
        if T[i, a] > U[j, 3 + a] or U[j, a] > T[i, 3 + a]:
            return False
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def _push_children(NI, node, stack, top):
    """Push ``node``'s children on a depth-first stack; returns the new top."""
    if NI[node, NCHILD]:
        for c in range(8):
            child = NI[node, CHILD + c]
            if child >= 0:
                stack[top] = child
                top += 1
    return top


@numba.njit(cache=True, nogil=True)
def subtree_bounds(NI, OB, lo, hi, stack):
    """Per node id: the tight bounds of the objects held in its subtree (``(nodes, 6)``; an
    empty subtree gets ``lo = +inf, hi = -inf``) and their number.

    The cells say where objects *may* lie; these bounds say where they *do*. A sparse level
    leaves most of each cell empty, so testing passed-down objects and sibling subtrees
    against these bounds prunes what the cells cannot (``stack``: a depth-first stack).
    """
    T = np.empty((NI.shape[0], 6))
    count = np.zeros(NI.shape[0], dtype=np.int64)
    preorder = np.empty(NI.shape[0], dtype=np.int64)
    visited = 0
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        preorder[visited] = node
        visited += 1
        for a in range(3):
            T[node, a] = np.inf
            T[node, 3 + a] = -np.inf
        count[node] = NI[node, COUNT]
        top = _push_children(NI, node, stack, top)
    # objects in slot order: their boxes are read in sequence rather than list by list
    for s in range(min(OB.shape[0], lo.shape[0])):
        node = OB[s, NODE]
        if node >= 0:
            for a in range(3):
                T[node, a] = min(T[node, a], lo[s, a])
                T[node, 3 + a] = max(T[node, 3 + a], hi[s, a])
    for k in range(visited - 1, 0, -1):  # children after their parent in pre-order
        node = preorder[k]
        parent = NI[node, PARENT]
        count[parent] += count[node]
        for a in range(3):
            T[parent, a] = min(T[parent, a], T[node, a])
            T[parent, 3 + a] = max(T[parent, 3 + a], T[node, 3 + a])
    return T, count


@numba.njit(cache=True, nogil=True)
def _collect_subtree(NI, OB, lo, hi, active, T, count, subtree, receiver, S, B, A, m,
                     only_active_objects, node_awake, stack):
    """Append the objects of ``subtree`` meeting the tight bounds of ``receiver``'s subtree
    (``T`` row ``receiver``) to the list; subtrees whose own tight bounds miss them are
    skipped whole."""
    if count[subtree] == 0 or not _boxes_meet(T, subtree, T, receiver):
        return S, B, A, m
    stack[0] = subtree
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if count[node] == 0 or not _boxes_meet(T, node, T, receiver) \
                or (only_active_objects and not node_awake[node]):
            continue
        s = NI[node, HEAD]
        while s >= 0:
            if not (only_active_objects and not active[s]):
                inside = True
                for a in range(3):
                    if lo[s, a] > T[receiver, 3 + a] or T[receiver, a] > hi[s, a]:
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
        top = _push_children(NI, node, stack, top)
    return S, B, A, m


@numba.njit(cache=True, nogil=True)
def _sort_segment(order, s0, s1, B, axis):
    """Sort ``order[s0:s1]`` (indices into ``B``) by ``lo`` on ``axis``."""
    n = s1 - s0
    if n <= 24:
        for i in range(s0 + 1, s1):
            v = order[i]
            key = B[v, axis]
            j = i
            while j > s0 and B[order[j - 1], axis] > key:
                order[j] = order[j - 1]
                j -= 1
            order[j] = v
        return
    keys = np.empty(n)
    for i in range(n):
        keys[i] = B[order[s0 + i], axis]
    perm = np.argsort(keys, kind="mergesort")
    tmp = order[s0:s1].copy()
    for i in range(n):
        order[s0 + i] = tmp[perm[i]]


#: Groups of a node's lists: the clump axis ``g % 3``, and whether the objects are asleep or
#: static in ``active`` mode (``g >= 3``), so two such groups are never swept against each other.
GROUPS = 6


@numba.njit(cache=True, nogil=True)
def _group(cls, first, count, ORD, B):
    """Bucket ``first..first+count`` by class into ``ORD[a]`` (group g at ``bounds[g]``), then sort
    each group on the two axes other than its clump axis. Returns the group bounds."""
    bounds = np.zeros(GROUPS + 1, dtype=np.int64)
    for i in range(count):
        bounds[cls[i] + 1] += 1
    for g in range(GROUPS):
        bounds[g + 1] += bounds[g]
    fill = bounds[:GROUPS].copy()
    for i in range(count):
        g = cls[i]
        for a in range(3):
            ORD[a, fill[g]] = first + i
        fill[g] += 1
    for g in range(GROUPS):
        for a in range(3):
            if a != g % 3:
                _sort_segment(ORD[a], bounds[g], bounds[g + 1], B, a)
    return bounds


@numba.njit(cache=True, nogil=True)
def _sweep_self(S, B, A, order, s0, s1, axis, only_active, pairs, m):
    """Pairs within ``order[s0:s1]`` (sorted by ``lo`` on ``axis``): ``(pairs so far, tests)``."""
    cap = pairs.shape[0]
    tests = 0
    for ii in range(s0, s1):
        i = order[ii]
        reach = B[i, 3 + axis]
        for jj in range(ii + 1, s1):
            j = order[jj]
            if B[j, axis] > reach:
                break
            if only_active and not (A[i] or A[j]):
                continue
            tests += 1
            if _meets_other_axes(B, i, B, j, axis):
                if m < cap:
                    pairs[m, 0] = S[i]
                    pairs[m, 1] = S[j]
                m += 1
    return m, tests


@numba.njit(cache=True, nogil=True)
def _sweep_cross(S1, B1, A1, order1, a0, a1, S2, B2, A2, order2, b0, b1, axis, only_active,
                 pairs, m):
    """Pairs between two index lists sorted by ``lo`` on ``axis``: whichever entry starts first
    scans the other list ahead of it."""
    cap = pairs.shape[0]
    tests = 0
    i = a0
    j = b0
    while i < a1 and j < b1:
        x = order1[i]
        y = order2[j]
        if B1[x, axis] <= B2[y, axis]:
            reach = B1[x, 3 + axis]
            jj = j
            while jj < b1:
                z = order2[jj]
                if B2[z, axis] > reach:
                    break
                if not (only_active and not (A1[x] or A2[z])):
                    tests += 1
                    if _meets_other_axes(B1, x, B2, z, axis):
                        if m < cap:
                            pairs[m, 0] = S1[x]
                            pairs[m, 1] = S2[z]
                        m += 1
                jj += 1
            i += 1
        else:
            reach = B2[y, 3 + axis]
            ii = i
            while ii < a1:
                z = order1[ii]
                if B1[z, axis] > reach:
                    break
                if not (only_active and not (A1[z] or A2[y])):
                    tests += 1
                    if _meets_other_axes(B1, z, B2, y, axis):
                        if m < cap:
                            pairs[m, 0] = S1[z]
                            pairs[m, 1] = S2[y]
                        m += 1
                ii += 1
            j += 1
    return m, tests


@numba.njit(cache=True, nogil=True, inline="always")
def _sweep_axis(g, h):
    """The axis on which neither group ``g`` nor ``h`` clumps."""
    ga = g % 3
    ha = h % 3
    return (ga + 2) % 3 if ga == ha else 3 - ga - ha


@numba.njit(cache=True, nogil=True)
def _node_sweeps(OS, OBX, OA, ORD, ob, PS, PB, PA, ORDP, pb, only_active, pairs, m):
    """Every own x own and own x passed sweep of one node; ``(pairs so far, tests)``. Two
    groups of inactive objects (``g, h >= 3``, only filled in ``active`` mode) are skipped:
    sweeping them would enumerate static x static candidates only to reject them."""
    tests = 0
    for g in range(GROUPS):
        if ob[g + 1] == ob[g]:
            continue
        for h in range(g, GROUPS):
            if g >= 3 and h >= 3:
                continue
            axis = _sweep_axis(g, h)
            if g == h:
                m, t = _sweep_self(OS, OBX, OA, ORD[axis], ob[g], ob[g + 1], axis, only_active,
                                   pairs, m)
            else:
                m, t = _sweep_cross(OS, OBX, OA, ORD[axis], ob[g], ob[g + 1],
                                    OS, OBX, OA, ORD[axis], ob[h], ob[h + 1], axis, only_active,
                                    pairs, m)
            tests += t
        for h in range(GROUPS):
            if (g >= 3 and h >= 3) or pb[h + 1] == pb[h]:
                continue
            axis = _sweep_axis(g, h)
            m, t = _sweep_cross(OS, OBX, OA, ORD[axis], ob[g], ob[g + 1],
                                PS, PB, PA, ORDP[axis], pb[h], pb[h + 1], axis, only_active, pairs, m)
            tests += t
    return m, tests


#: Below this many candidate tests a node tests every candidate directly: grouping and sorting
#: its lists would cost more than the tests they save.
DIRECT_TESTS = 128


@numba.njit(cache=True, nogil=True, inline="always")
def _record(pairs, m, a, b):
    """Write pair ``m`` when ``pairs`` has room (the caller grows it and redoes the node when
    not); returns the new count."""
    if m < pairs.shape[0]:
        pairs[m, 0] = a
        pairs[m, 1] = b
    return m + 1


@numba.njit(cache=True, nogil=True, inline="always")
def _test_range(OS, OBX, OA, i, S, B, A, k0, k1, only_active, pairs, m):
    """Own entry ``i`` against entries ``k0..k1`` of a list; ``(pairs so far, tests)``."""
    tests = 0
    for k in range(k0, k1):
        if not (only_active and not (OA[i] or A[k])):
            tests += 1
            if _boxes_meet(OBX, i, B, k):
                m = _record(pairs, m, OS[i], S[k])
    return m, tests


@numba.njit(cache=True, nogil=True)
def _direct_tests(OS, OBX, OA, n, PS, PB, PA, p0, p1, only_active, pairs, m):
    """Every own x own and own x passed candidate of one node, tested without sweeping;
    ``(pairs so far, tests)`` (pairs past ``pairs``' capacity are counted, not written)."""
    tests = 0
    for i in range(n):
        m, t = _test_range(OS, OBX, OA, i, OS, OBX, OA, i + 1, n, only_active, pairs, m)
        tests += t
        m, t = _test_range(OS, OBX, OA, i, PS, PB, PA, p0, p1, only_active, pairs, m)
        tests += t
    return m, tests


@numba.njit(cache=True, nogil=True)
def _own_sweeps(NF, node, OS, OBX, OA, n, PS, PB, PA, p0, p1, only_active, pairs, m, cls, ORD,
                ORDP, count_only):
    """Group and sweep one node's own objects against each other and against its passed list;
    returns ``(pairs, pairs so far, tests)`` (``pairs`` grown when the node overflowed it,
    unless ``count_only``: then nothing is written and the count is all that is kept)."""
    np_ = p1 - p0
    if n * (n - 1) // 2 + n * np_ <= DIRECT_TESTS:
        m_new, local = _direct_tests(OS, OBX, OA, n, PS, PB, PA, p0, p1, only_active, pairs, m)
        if m_new > pairs.shape[0] and not count_only:
            pairs = grow(pairs, 2 * m_new)
            m_new, local = _direct_tests(OS, OBX, OA, n, PS, PB, PA, p0, p1, only_active, pairs,
                                         m)
        return pairs, m_new, local
    # own objects clump on the first split plane of this node they straddle
    for i in range(n):
        cls[i] = 2
        for a in range(3):
            mid = 0.5 * (NF[node, CORE_LO + a] + NF[node, CORE_HI + a])
            if OBX[i, a] < mid and OBX[i, 3 + a] > mid:
                cls[i] = a
                break
        if only_active and not OA[i]:
            cls[i] += 3
    ob = _group(cls, np.int64(0), n, ORD, OBX)  # np.int64, not 0: a literal 0 makes numba compile the callee twice
    # passed objects clump on the axis along which they cover most of this node
    for i in range(np_):
        best = -1.0
        cls[i] = 0
        for a in range(3):
            nlo = NF[node, LOOSE_LO + a]
            nhi = NF[node, LOOSE_HI + a]
            width = nhi - nlo
            cover = (min(PB[p0 + i, 3 + a], nhi) - max(PB[p0 + i, a], nlo))
            frac = cover / width if width > 0 else 1.0
            if frac > best:
                best = frac
                cls[i] = a
        if only_active and not PA[p0 + i]:
            cls[i] += 3
    pb = _group(cls, p0, np_, ORDP, PB)
    # the sweeps write into ``pairs`` up to its capacity and report how many they found;
    # growing happens here, outside their loops, and an overflowing node is swept again
    m_new, local = _node_sweeps(OS, OBX, OA, ORD, ob, PS, PB, PA, ORDP, pb, only_active, pairs, m)
    if m_new > pairs.shape[0] and not count_only:
        pairs = grow(pairs, 2 * m_new)
        m_new, local = _node_sweeps(OS, OBX, OA, ORD, ob, PS, PB, PA, ORDP, pb, only_active,
                                    pairs, m)
    return pairs, m_new, local


@numba.njit(cache=True, nogil=True)
def find_pairs(NI, NF, OB, lo, hi, active, only_active, node_awake, count_only):
    """All overlapping pairs of slots, their number, the number of tests and the tests per
    node id: ``(pairs, count, tests, node_tests)``.

    Nodes are visited only where a pair can be: a child whose subtree holds at most one
    object and receives nothing is skipped, and passed-down and sibling objects are filtered
    by the tight bounds of the receiving subtree (:func:`subtree_bounds`), not by its cell.
    With ``count_only`` no pair is written (``pairs`` comes back empty): every pair is found
    exactly once, so counting them needs no list.
    """
    node_tests = np.zeros(NI.shape[0], dtype=np.int64)
    pairs = np.empty((0 if count_only else 1024, 2), dtype=np.int64)
    m = np.int64(0)  # np.int64, not 0: a literal 0 makes numba compile the callee twice
    tests = 0
    # passed-down lists, stacked as segments: slots, boxes, active flags
    PS = np.empty(1024, dtype=np.int64)
    PB = np.empty((1024, 6))
    PA = np.empty(1024, dtype=np.bool_)
    # the node's own objects
    OS = np.empty(64, dtype=np.int64)
    OBX = np.empty((64, 6))
    OA = np.empty(64, dtype=np.bool_)
    # per axis, the groups of the own (ORD) and passed (ORDP) lists sorted on that axis
    ORD = np.empty((3, 64), dtype=np.int64)
    ORDP = np.empty((3, 64), dtype=np.int64)
    cls = np.empty(64, dtype=np.int64)
    stack_node = np.empty(STACK, dtype=np.int64)
    stack_start = np.empty(STACK, dtype=np.int64)
    stack_end = np.empty(STACK, dtype=np.int64)
    sub_stack = np.empty(STACK, dtype=np.int64)
    if only_active and not node_awake[0]:
        return pairs[:0], 0, 0, node_tests
    T, count = subtree_bounds(NI, OB, lo, hi, sub_stack)
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
        np_ = p1 - p0
        if n > 0:  # a node holding nothing of its own only passes its list on
            if max(n, np_) > cls.shape[0]:
                size = 2 * max(n, np_)
                cls = np.empty(size, dtype=np.int64)
                ORD = np.empty((3, size), dtype=np.int64)
                ORDP = np.empty((3, size), dtype=np.int64)
            pairs, m, local = _own_sweeps(NF, node, OS, OBX, OA, n, PS, PB, PA, p0, p1,
                                          only_active, pairs, m, cls, ORD, ORDP, count_only)
            node_tests[node] += local
            tests += local
        if NI[node, NCHILD] == 0:
            continue
        total = np_ + n
        for c in range(8):
            child = NI[node, CHILD + c]
            if child < 0 or count[child] == 0:
                continue
            only_active_objects = only_active and not node_awake[child]
            start = buf_top
            if buf_top + total > PS.shape[0]:
                PS, PB, PA = _grow_list(PS, PB, PA, buf_top + total)
            for k in range(p0, p1):
                if only_active_objects and not PA[k]:
                    continue
                if _boxes_meet(PB, k, T, child):
                    PS[buf_top] = PS[k]
                    for a in range(6):
                        PB[buf_top, a] = PB[k, a]
                    PA[buf_top] = PA[k]
                    buf_top += 1
            for k in range(n):
                if only_active_objects and not OA[k]:
                    continue
                if _boxes_meet(OBX, k, T, child):
                    PS[buf_top] = OS[k]
                    for a in range(6):
                        PB[buf_top, a] = OBX[k, a]
                    PA[buf_top] = OA[k]
                    buf_top += 1
            # objects of earlier siblings' subtrees meeting this child's content (touching
            # faces, or overlapping loose bounds): found here once, never from the sibling's side.
            # The sibling's bounds are tested here, not only inside the walk: a call passes and
            # returns the list arrays, whose reference counting cost more than the walks
            # themselves when most siblings are far apart
            for e in range(c):
                other = NI[node, CHILD + e]
                if other < 0 or count[other] == 0 or not _boxes_meet(T, other, T, child) \
                        or (only_active_objects and not node_awake[other]):
                    continue
                PS, PB, PA, buf_top = _collect_subtree(NI, OB, lo, hi, active, T, count, other,
                                                       child, PS, PB, PA, buf_top,
                                                       only_active_objects, node_awake, sub_stack)
            # nothing received: only pairs inside the child's subtree remain, which takes two
            # objects there (and, in active mode, one of them awake)
            if buf_top == start and (count[child] < 2 or only_active_objects):
                continue
            stack_node[top] = child
            stack_start[top] = start
            stack_end[top] = buf_top
            top += 1
    return pairs[:min(m, pairs.shape[0])], m, tests, node_tests
