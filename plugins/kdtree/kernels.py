"""Compiled kernels of the kd-tree backend: the SAH/median build into flat node tables, pairs
within the leaves and the invariant check (see :mod:`plugins.kdtree.index`)."""
from __future__ import annotations

import numba
import numpy as np

import spatial.kernels as K

#: columns of the float (``NF_*``) and int (``NI_*``) node tables the build kernel fills
NF_LO, NF_HI, NF_CELL_LO, NF_CELL_HI, NF_SPLIT = 0, 3, 6, 9, 12
NI_LEFT, NI_RIGHT, NI_PARENT, NI_DEPTH, NI_START, NI_COUNT, NI_AXIS = range(7)


# --------------------------------------------------------------------------- build kernel
@numba.njit(cache=True, nogil=True)
def _area(lo0, lo1, lo2, hi0, hi1, hi2):
    dx = hi0 - lo0
    dy = hi1 - lo1
    dz = hi2 - lo2
    return 2.0 * (dx * dy + dy * dz + dz * dx)


@numba.njit(cache=True, nogil=True)
def _count_sides(buf, s, c, lo, hi, axis, split):
    n_left = 0
    n_right = 0
    for k in range(s, s + c):
        o = buf[k]
        if lo[o, axis] < split:
            n_left += 1
        if hi[o, axis] >= split:
            n_right += 1
    return n_left, n_right


@numba.njit(cache=True, nogil=True)
def _median_split(buf, s, c, lo, hi, glo, ghi):
    """First axis (longest cell extent first) whose centre median separates the objects,
    else the most balanced plane through an object's ``lo`` face; ``(-1, 0)`` if none exists."""
    ext = ghi - glo
    order = np.argsort(-ext)
    centres = np.empty(c)
    for j in range(3):
        axis = order[j]
        for k in range(c):
            o = buf[s + k]
            centres[k] = 0.5 * (lo[o, axis] + hi[o, axis])
        split = np.median(centres)
        n_left, n_right = _count_sides(buf, s, c, lo, hi, axis, split)
        if n_left < c and n_right < c:
            return axis, split
        # the median may sit on a crowd of equal centres: try just above it
        above = np.inf
        for k in range(c):
            if centres[k] > split and centres[k] < above:
                above = centres[k]
        if above < np.inf:
            n_left, n_right = _count_sides(buf, s, c, lo, hi, axis, above)
            if n_left < c and n_right < c:
                return axis, above
    # large straddlers can defeat every centre median: try planes on object faces (``lo``),
    # which separate whenever some object ends before another begins; keep the most balanced
    best_axis = -1
    best_split = 0.0
    best_worst = c
    stride = max(1, c // 64)
    los = np.empty(c)
    for axis in range(3):
        for k in range(c):
            los[k] = lo[buf[s + k], axis]
        los.sort()
        for k in range(0, c, stride):
            n_left, n_right = _count_sides(buf, s, c, lo, hi, axis, los[k])
            worst = max(n_left, n_right)
            if worst < best_worst:
                best_worst = worst
                best_axis = axis
                best_split = los[k]
    return best_axis, best_split


@numba.njit(cache=True, nogil=True)
def _sah_split(buf, s, c, lo, hi, glo, ghi, ct, ci, nbins):
    """Binned SAH plane over the node's (clipped) cell: ``(axis, split)`` or ``(-1, 0)``."""
    area = _area(glo[0], glo[1], glo[2], ghi[0], ghi[1], ghi[2])
    best_cost = np.inf
    best_axis = -1
    best_split = 0.0
    lo_hist = np.zeros(nbins, dtype=np.int64)
    hi_hist = np.zeros(nbins, dtype=np.int64)
    for axis in range(3):
        width = ghi[axis] - glo[axis]
        if not width > 0.0:
            continue
        lo_hist[:] = 0
        hi_hist[:] = 0
        scale = nbins / width
        for k in range(s, s + c):
            o = buf[k]
            b = int((lo[o, axis] - glo[axis]) * scale)
            lo_hist[min(max(b, 0), nbins - 1)] += 1
            b = int((hi[o, axis] - glo[axis]) * scale)
            hi_hist[min(max(b, 0), nbins - 1)] += 1
        n_left = 0
        n_right = c
        for plane in range(1, nbins):
            n_left += lo_hist[plane - 1]
            n_right -= hi_hist[plane - 1]
            if n_left >= c or n_right >= c:
                continue
            x = glo[axis] + plane * (width / nbins)
            ext = ghi - glo
            ext[axis] = x - glo[axis]
            a_left = _area(0.0, 0.0, 0.0, ext[0], ext[1], ext[2])
            ext[axis] = ghi[axis] - x
            a_right = _area(0.0, 0.0, 0.0, ext[0], ext[1], ext[2])
            if area > 0.0:
                cost = ct + ci * (a_left * n_left + a_right * n_right) / area
            else:
                cost = ct + ci * (n_left + n_right)
            if cost < best_cost:
                best_cost = cost
                best_axis = axis
                best_split = x
    return best_axis, best_split


@numba.njit(cache=True, nogil=True)
def _grow_nodes(nf, ni, needed):
    # K.grow copies element by element: slice assignment would compile numba's general
    # broadcasting code, seconds of first-start compile for the same copy
    return K.grow(nf, needed), K.grow(ni, needed)


@numba.njit(cache=True, nogil=True)
def build_kd(slots, lo, hi, use_sah, leaf_size, max_depth, ct, ci, nbins, ref_budget):
    """Top-down build with a buffer used as a stack (the pending node's objects on top).

    Returns ``(nf, ni, items, node_count)``: float columns lo, hi, cell lo, cell hi, split;
    int columns left, right, parent, depth, item start, item count, axis.
    """
    n = len(slots)
    nf = np.empty((max(64, n // 2), 13))
    ni = np.empty((max(64, n // 2), 7), dtype=np.int64)
    items = np.empty(max(64, n), dtype=np.int64)
    n_items = 0
    buf = np.empty(max(64, 3 * n), dtype=np.int64)
    for k in range(n):
        buf[k] = slots[k]
    root_lo = np.full(3, np.inf)
    root_hi = np.full(3, -np.inf)
    for k in range(n):
        o = slots[k]
        for a in range(3):
            root_lo[a] = min(root_lo[a], lo[o, a])
            root_hi[a] = max(root_hi[a], hi[o, a])
    nf[0, NF_CELL_LO:NF_CELL_LO + 3] = -np.inf
    nf[0, NF_CELL_HI:NF_CELL_HI + 3] = np.inf
    nf[0, NF_SPLIT] = 0.0
    ni[0, NI_PARENT] = -1
    ni[0, NI_DEPTH] = 0
    node_count = 1
    refs = n
    st_node = np.empty(64, dtype=np.int64)
    st_start = np.empty(64, dtype=np.int64)
    st_count = np.empty(64, dtype=np.int64)
    sp = 0
    st_node, _ = K.push(st_node, sp, 0)
    st_start, _ = K.push(st_start, sp, 0)
    st_count, sp = K.push(st_count, sp, n)
    glo = np.empty(3)
    ghi = np.empty(3)
    while sp > 0:
        sp -= 1
        node = st_node[sp]
        s = st_start[sp]
        c = st_count[sp]
        for a in range(3):
            mn = np.inf
            mx = -np.inf
            for k in range(s, s + c):
                o = buf[k]
                mn = min(mn, lo[o, a])
                mx = max(mx, hi[o, a])
            nf[node, NF_LO + a] = mn
            nf[node, NF_HI + a] = mx
            glo[a] = max(nf[node, NF_CELL_LO + a], root_lo[a])
            ghi[a] = min(nf[node, NF_CELL_HI + a], root_hi[a])
        axis = -1
        split = 0.0
        if c > leaf_size and ni[node, NI_DEPTH] < max_depth:
            if use_sah:
                axis, split = _sah_split(buf, s, c, lo, hi, glo, ghi, ct, ci, nbins)
                if axis >= 0:
                    n_left, n_right = _count_sides(buf, s, c, lo, hi, axis, split)
                    if n_left >= c or n_right >= c:
                        axis = -1
            if axis < 0:
                axis, split = _median_split(buf, s, c, lo, hi, glo, ghi)
        if axis >= 0:
            n_left, n_right = _count_sides(buf, s, c, lo, hi, axis, split)
            if refs + n_left + n_right - c > ref_budget:
                axis = -1
        if axis < 0:
            ni[node, NI_LEFT] = -1
            ni[node, NI_RIGHT] = -1
            ni[node, NI_AXIS] = -1
            ni[node, NI_START] = n_items
            ni[node, NI_COUNT] = c
            items = K.grow(items, n_items + c)
            for k in range(c):
                items[n_items + k] = buf[s + k]
            n_items += c
            continue
        refs += n_left + n_right - c
        if s + c + n_left + n_right > len(buf):
            buf = K.grow(buf, 2 * (s + c + n_left + n_right))
        wl = s + c
        wr = s + c + n_left
        for k in range(s, s + c):
            o = buf[k]
            if lo[o, axis] < split:
                buf[wl] = o
                wl += 1
            if hi[o, axis] >= split:
                buf[wr] = o
                wr += 1
        # compact: right half to s, left half above it (the left child is processed next)
        for k in range(n_right):
            buf[s + k] = buf[s + c + n_left + k]
        for k in range(n_left):
            buf[s + n_right + k] = buf[s + c + k]
        nf, ni = _grow_nodes(nf, ni, node_count + 2)
        left = node_count
        right = node_count + 1
        node_count += 2
        ni[node, NI_LEFT] = left
        ni[node, NI_RIGHT] = right
        ni[node, NI_AXIS] = axis
        ni[node, NI_START] = 0
        ni[node, NI_COUNT] = 0
        nf[node, NF_SPLIT] = split
        for child in (left, right):
            for k in range(3):
                nf[child, NF_CELL_LO + k] = nf[node, NF_CELL_LO + k]
                nf[child, NF_CELL_HI + k] = nf[node, NF_CELL_HI + k]
            nf[child, NF_SPLIT] = 0.0
            ni[child, NI_PARENT] = node
            ni[child, NI_DEPTH] = ni[node, NI_DEPTH] + 1
        nf[left, NF_CELL_HI + axis] = split
        nf[right, NF_CELL_LO + axis] = split
        st_node, _ = K.push(st_node, sp, right)
        st_start, _ = K.push(st_start, sp, s)
        st_count, sp = K.push(st_count, sp, n_right)
        st_node, _ = K.push(st_node, sp, left)
        st_start, _ = K.push(st_start, sp, s + n_right)
        st_count, sp = K.push(st_count, sp, n_left)
    return nf[:node_count].copy(), ni[:node_count].copy(), items[:n_items].copy(), node_count


# --------------------------------------------------------------------------- pairs / checks
@numba.njit(cache=True, nogil=True)
def leaf_pairs(tree, cell_lo, cell_hi, active, leaf_active, only_active):
    """Pairs inside every leaf of ``tree`` (:class:`spatial.kernels.TreeArrays`); a pair is
    reported only in the leaf owning ``max(lo_a, lo_b)`` (``cell_lo/cell_hi`` per node)."""
    left, item_start, item_count, items = tree.left, tree.item_start, tree.item_count, tree.items
    lo, hi = tree.obj_lo, tree.obj_hi
    out = np.empty((1024, 2), dtype=np.int64)
    m = np.int64(0)  # typed, not the literal 0: one signature of owned_list_pairs
    n_nodes = len(left)
    node_tests = np.zeros(n_nodes, dtype=np.int64)
    tests = 0
    box = np.empty((64, 6))
    for n in range(n_nodes):
        if left[n] >= 0 or item_count[n] < 2:
            continue
        if only_active and not leaf_active[n]:
            continue
        start = item_start[n]
        c = item_count[n]
        out, m, local, box = K.owned_list_pairs(items, start, c, lo, hi, active, only_active, box,
                                                cell_lo[n], cell_hi[n], out, m)
        node_tests[n] = local
        tests += local
    return out[:m], tests, node_tests


@numba.njit(cache=True, nogil=True)
def check_tree(nf, ni, items, lo, hi, alive_slots, slot_limit):
    """Return ``(code, where)``; code 0 means every invariant holds."""
    n_nodes = nf.shape[0]
    refs = np.zeros(slot_limit, dtype=np.int64)
    for n in range(n_nodes):
        left = ni[n, NI_LEFT]
        if left >= 0:
            if ni[n, NI_COUNT] != 0:
                return 1, n  # inner node holding objects
            axis = ni[n, NI_AXIS]
            split = nf[n, NF_SPLIT]
            for child in (left, ni[n, NI_RIGHT]):
                if ni[child, NI_PARENT] != n or child <= n:
                    return 2, child  # broken parent link or order
                for a in range(3):
                    if nf[child, NF_LO + a] < nf[n, NF_LO + a] or nf[child, NF_HI + a] > nf[n, NF_HI + a]:
                        return 3, child  # child bounds escape the parent's
            if nf[left, NF_CELL_HI + axis] != split or nf[ni[n, NI_RIGHT], NF_CELL_LO + axis] != split:
                return 4, n  # child cells do not meet at the split
            continue
        for k in range(ni[n, NI_START], ni[n, NI_START] + ni[n, NI_COUNT]):
            o = items[k]
            refs[o] += 1
            for a in range(3):
                # left side: lo < split; right side: hi >= split (see the module docstring)
                if not (lo[o, a] < nf[n, NF_CELL_HI + a] and hi[o, a] >= nf[n, NF_CELL_LO + a]):
                    return 5, o  # object stored on the wrong side of a split
                if lo[o, a] < nf[n, NF_LO + a] or hi[o, a] > nf[n, NF_HI + a]:
                    return 6, o  # leaf bounds miss an object
    # every object is in exactly the leaves whose cells its box reaches
    stack = np.empty(64, dtype=np.int64)
    for o in alive_slots:
        expected = 0
        sp = 0
        stack, sp = K.push(stack, sp, 0)
        while sp > 0:
            sp -= 1
            n = stack[sp]
            if ni[n, NI_LEFT] < 0:
                expected += 1
                continue
            axis = ni[n, NI_AXIS]
            if lo[o, axis] < nf[n, NF_SPLIT]:
                stack, sp = K.push(stack, sp, ni[n, NI_LEFT])
            if hi[o, axis] >= nf[n, NF_SPLIT]:
                stack, sp = K.push(stack, sp, ni[n, NI_RIGHT])
        if refs[o] != expected:
            return 7, o
        refs[o] = 0
    for o in range(slot_limit):
        if refs[o] != 0:
            return 8, o  # a removed object is still stored
    return 0, 0


@numba.njit(cache=True, nogil=True)
def subtree_sums(parents, values):
    """Subtree sums of a per-node value (children are numbered after their parents)."""
    out = values.copy()
    for node in range(len(parents) - 1, 0, -1):
        out[parents[node]] += out[node]
    return out

