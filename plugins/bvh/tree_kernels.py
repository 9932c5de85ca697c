"""Compiled kernels that edit the BVH's node pool: SAH sibling choice, insertion and removal
with AVL-style rotations, fat-box updates and the binned-SAH build (see
:mod:`plugins.bvh.index`)."""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np


class BvhPool(NamedTuple):
    """The BVH's pooled node arrays, passed to the edit kernels as one argument.

    ``lo``/``hi`` ``(cap, 3)`` fat boxes; ``parent``, ``c1``, ``c2`` links (``c1 < 0`` at a leaf);
    ``height`` (0 at a leaf); ``node_slot`` a leaf's object slot; ``item_count`` 1 at a leaf;
    ``leaf_of`` per object slot its leaf; ``free_next`` the free list's links (``-2`` in use).
    """

    lo: np.ndarray
    hi: np.ndarray
    parent: np.ndarray
    c1: np.ndarray
    c2: np.ndarray
    height: np.ndarray
    node_slot: np.ndarray
    item_count: np.ndarray
    leaf_of: np.ndarray
    free_next: np.ndarray


# --------------------------------------------------------------------------- tree kernels
@numba.njit(cache=True, inline="always")
def _area(lo, hi):
    dx = hi[0] - lo[0]
    dy = hi[1] - lo[1]
    dz = hi[2] - lo[2]
    return 2.0 * (dx * dy + dy * dz + dz * dx)


@numba.njit(cache=True, inline="always")
def _set_union(lo, hi, n, a, b):
    for k in range(3):
        lo[n, k] = min(lo[a, k], lo[b, k])
        hi[n, k] = max(hi[a, k], hi[b, k])


@numba.njit(cache=True, inline="always")
def _rotate_up(ia, up, stay, up_is_c1, root, lo, hi, parent, c1, c2, height):
    """Rotate child ``up`` of ``ia`` into its place (``stay`` is ``ia``'s other child): ``up``'s
    taller child stays below it, the shorter one moves to ``ia``. Returns ``(up, tree root)``."""
    x = c1[up]
    y = c2[up]
    c1[up] = ia
    parent[up] = parent[ia]
    parent[ia] = up
    if parent[up] >= 0:
        if c1[parent[up]] == ia:
            c1[parent[up]] = up
        else:
            c2[parent[up]] = up
    else:
        root = up
    keep, move = (x, y) if height[x] > height[y] else (y, x)
    c2[up] = keep
    if up_is_c1:
        c1[ia] = move
    else:
        c2[ia] = move
    parent[move] = ia
    _set_union(lo, hi, ia, stay, move)
    _set_union(lo, hi, up, ia, keep)
    height[ia] = 1 + max(height[stay], height[move])
    height[up] = 1 + max(height[ia], height[keep])
    return up, root


@numba.njit(cache=True, nogil=True)
def _balance(ia, root, lo, hi, parent, c1, c2, height):
    """One AVL-style rotation at ``ia`` if its children's heights differ by more than one.

    Returns ``(new subtree root, tree root)`` (Box2D ``b2DynamicTree::Balance``).
    """
    if c1[ia] < 0 or height[ia] < 2:
        return ia, root
    ib = c1[ia]
    ic = c2[ia]
    balance = height[ic] - height[ib]
    if balance > 1:
        return _rotate_up(ia, ic, ib, False, root, lo, hi, parent, c1, c2, height)
    if balance < -1:
        return _rotate_up(ia, ib, ic, True, root, lo, hi, parent, c1, c2, height)
    return ia, root


@numba.njit(cache=True, nogil=True)
def _refit_up(n, root, lo, hi, parent, c1, c2, height):
    """Walk from ``n`` to the root: rotate, then refit box and height of each ancestor."""
    while n >= 0:
        n, root = _balance(n, root, lo, hi, parent, c1, c2, height)
        a = c1[n]
        b = c2[n]
        height[n] = 1 + max(height[a], height[b])
        _set_union(lo, hi, n, a, b)
        n = parent[n]
    return root


@numba.njit(cache=True, inline="always")
def _union_area_row(lo, hi, n, l0, l1, l2, h0, h1, h2):
    """Area of node ``n``'s box joined with the box ``(l, h)``, read by index (no views)."""
    dx = max(hi[n, 0], h0) - min(lo[n, 0], l0)
    dy = max(hi[n, 1], h1) - min(lo[n, 1], l1)
    dz = max(hi[n, 2], h2) - min(lo[n, 2], l2)
    return 2.0 * (dx * dy + dy * dz + dz * dx)


@numba.njit(cache=True, inline="always")
def _area_row(lo, hi, n):
    dx = hi[n, 0] - lo[n, 0]
    dy = hi[n, 1] - lo[n, 1]
    dz = hi[n, 2] - lo[n, 2]
    return 2.0 * (dx * dy + dy * dz + dz * dx)


@numba.njit(cache=True, inline="always")
def _consider_child(child, direct, area, inherited, leaf_area, best_cost, best, c1):
    """One child in :func:`_find_best_sibling`'s descent: a leaf may become the best sibling at
    once; an inner node gets a lower bound on the cost of any sibling below it (``inf`` for a
    leaf). Returns ``(lower bound, best cost, best node)``."""
    if c1[child] < 0:
        if direct + inherited < best_cost:
            return np.inf, direct + inherited, child
        return np.inf, best_cost, best
    return inherited + direct + min(leaf_area - area, 0.0), best_cost, best


@numba.njit(cache=True, nogil=True)
def _find_best_sibling(leaf, root, lo, hi, c1, c2):
    """Sibling of low surface-area cost, by a greedy descent (Box2D v3 ``b2FindBestSibling``).

    The cost of pairing the new leaf with node ``n`` is the area of their union plus the area
    every ancestor of ``n`` grows by (the *inherited* cost). From each node the descent goes
    into the child with the smaller lower bound on the cost below it and stops once neither
    child can beat the best cost found. One root-to-leaf path at most: a full branch-and-bound
    search visits a large part of the tree when big objects make the boxes overlap a lot.
    """
    l0, l1, l2 = lo[leaf, 0], lo[leaf, 1], lo[leaf, 2]
    h0, h1, h2 = hi[leaf, 0], hi[leaf, 1], hi[leaf, 2]
    leaf_area = _area_row(lo, hi, leaf)
    area_root = _area_row(lo, hi, root)
    direct = _union_area_row(lo, hi, root, l0, l1, l2, h0, h1, h2)
    inherited = 0.0
    best = root
    best_cost = direct
    n = root
    while c1[n] >= 0:
        a = c1[n]
        b = c2[n]
        # cost of a new parent here, then what every child choice inherits
        cost = direct + inherited
        if cost < best_cost:
            best_cost = cost
            best = n
        inherited += direct - area_root
        direct_a = _union_area_row(lo, hi, a, l0, l1, l2, h0, h1, h2)
        direct_b = _union_area_row(lo, hi, b, l0, l1, l2, h0, h1, h2)
        area_a = _area_row(lo, hi, a)
        area_b = _area_row(lo, hi, b)
        lower_a, best_cost, best = _consider_child(a, direct_a, area_a, inherited, leaf_area,
                                                   best_cost, best, c1)
        lower_b, best_cost, best = _consider_child(b, direct_b, area_b, inherited, leaf_area,
                                                   best_cost, best, c1)
        if best_cost <= lower_a and best_cost <= lower_b:
            break
        if lower_a <= lower_b:
            n, direct, area_root = a, direct_a, area_a
        else:
            n, direct, area_root = b, direct_b, area_b
    return best


@numba.njit(cache=True, nogil=True)
def _insert_leaf(leaf, root, lo, hi, parent, c1, c2, height, item_count, free_next, free_head):
    if root < 0:
        parent[leaf] = -1
        return leaf, free_head
    best = _find_best_sibling(leaf, root, lo, hi, c1, c2)
    sibling = best
    old_parent = parent[sibling]
    new_parent = free_head
    free_head = free_next[new_parent]
    free_next[new_parent] = -2  # in use
    parent[new_parent] = old_parent
    c1[new_parent] = sibling
    c2[new_parent] = leaf
    item_count[new_parent] = 0
    height[new_parent] = height[sibling] + 1
    _set_union(lo, hi, new_parent, sibling, leaf)
    parent[sibling] = new_parent
    parent[leaf] = new_parent
    if old_parent >= 0:
        if c1[old_parent] == sibling:
            c1[old_parent] = new_parent
        else:
            c2[old_parent] = new_parent
    else:
        root = new_parent
    root = _refit_up(parent[leaf], root, lo, hi, parent, c1, c2, height)
    return root, free_head


@numba.njit(cache=True, nogil=True)
def _remove_leaf(leaf, root, lo, hi, parent, c1, c2, height, free_next, free_head):
    if leaf == root:
        return -1, free_head
    p = parent[leaf]
    gp = parent[p]
    sibling = c2[p] if c1[p] == leaf else c1[p]
    free_next[p] = free_head
    free_head = p
    c1[p] = -1
    c2[p] = -1
    if gp >= 0:
        if c1[gp] == p:
            c1[gp] = sibling
        else:
            c2[gp] = sibling
        parent[sibling] = gp
        root = _refit_up(gp, root, lo, hi, parent, c1, c2, height)
    else:
        root = sibling
        parent[sibling] = -1
    return root, free_head


@numba.njit(cache=True, inline="always")
def _fatten(node, slot, obj_lo, obj_hi, lo, hi, margin, relative):
    m = margin
    if relative:
        edge = 0.0
        for k in range(3):
            edge = max(edge, obj_hi[slot, k] - obj_lo[slot, k])
        m = margin * edge
    for k in range(3):
        lo[node, k] = obj_lo[slot, k] - m
        hi[node, k] = obj_hi[slot, k] + m


@numba.njit(cache=True, nogil=True)
def _new_leaf(slot, obj_lo, obj_hi, lo, hi, parent, c1, c2, height, node_slot, item_count,
              leaf_of, free_next, free_head, margin, relative):
    leaf = free_head
    free_head = free_next[leaf]
    free_next[leaf] = -2
    c1[leaf] = -1
    c2[leaf] = -1
    height[leaf] = 0
    parent[leaf] = -1
    node_slot[leaf] = slot
    item_count[leaf] = 1
    leaf_of[slot] = leaf
    _fatten(leaf, slot, obj_lo, obj_hi, lo, hi, margin, relative)
    return leaf, free_head


@numba.njit(cache=True, nogil=True)
def insert_objects(pool, slots, obj_lo, obj_hi, root, free_head, margin, relative):
    """Insert each slot as a new fat leaf; returns ``(root, free_head)``."""
    lo, hi, parent, c1, c2, height, node_slot, item_count, leaf_of, free_next = pool
    for s in slots:
        leaf, free_head = _new_leaf(s, obj_lo, obj_hi, lo, hi, parent, c1, c2, height, node_slot,
                                    item_count, leaf_of, free_next, free_head, margin, relative)
        root, free_head = _insert_leaf(leaf, root, lo, hi, parent, c1, c2, height, item_count,
                                       free_next, free_head)
    return root, free_head


@numba.njit(cache=True, nogil=True)
def remove_objects(pool, slots, root, free_head):
    """Remove each slot's leaf and free it; returns ``(root, free_head)``."""
    lo, hi, parent, c1, c2, height, node_slot, item_count, leaf_of, free_next = pool
    for s in slots:
        leaf = leaf_of[s]
        root, free_head = _remove_leaf(leaf, root, lo, hi, parent, c1, c2, height, free_next,
                                       free_head)
        leaf_of[s] = -1
        node_slot[leaf] = -1
        item_count[leaf] = 0
        free_next[leaf] = free_head
        free_head = leaf
    return root, free_head


@numba.njit(cache=True, nogil=True)
def update_objects(pool, slots, obj_lo, obj_hi, root, free_head, margin, relative):
    """Reinsert only objects that left their fat box; returns ``(root, free_head, reinserts)``."""
    lo, hi, parent, c1, c2, height, node_slot, item_count, leaf_of, free_next = pool
    reinserts = 0
    for s in slots:
        leaf = leaf_of[s]
        inside = True
        for k in range(3):
            if obj_lo[s, k] < lo[leaf, k] or obj_hi[s, k] > hi[leaf, k]:
                inside = False
        if inside:
            continue
        reinserts += 1
        root, free_head = _remove_leaf(leaf, root, lo, hi, parent, c1, c2, height, free_next,
                                       free_head)
        _fatten(leaf, s, obj_lo, obj_hi, lo, hi, margin, relative)
        root, free_head = _insert_leaf(leaf, root, lo, hi, parent, c1, c2, height, item_count,
                                       free_next, free_head)
    return root, free_head, reinserts


@numba.njit(cache=True, nogil=True)
def build_binned_sah(pool, slots, obj_lo, obj_hi, free_head, margin, relative, nbins):
    """Top-down binned-SAH build over fresh fat leaves; returns ``(root, free_head)``."""
    lo, hi, parent, c1, c2, height, node_slot, item_count, leaf_of, free_next = pool
    n = len(slots)
    if n == 0:
        return -1, free_head
    leaves = np.empty(n, dtype=np.int64)
    centre = np.empty((n, 3))
    for i in range(n):
        leaf, free_head = _new_leaf(slots[i], obj_lo, obj_hi, lo, hi, parent, c1, c2, height,
                                    node_slot, item_count, leaf_of, free_next, free_head, margin,
                                    relative)
        leaves[i] = leaf
        for k in range(3):
            centre[i, k] = 0.5 * (lo[leaf, k] + hi[leaf, k])
    perm = np.arange(n)
    internal = np.empty(max(n - 1, 1), dtype=np.int64)
    n_internal = 0
    st = np.empty((64, 4), dtype=np.int64)  # start, end, parent node, side
    sp = 1
    st[0, 0] = 0
    st[0, 1] = n
    st[0, 2] = -1
    st[0, 3] = 0
    root = -1
    bin_lo = np.empty((nbins, 3))
    bin_hi = np.empty((nbins, 3))
    bin_n = np.empty(nbins, dtype=np.int64)
    right_area = np.empty(nbins)
    right_n = np.empty(nbins, dtype=np.int64)
    while sp > 0:
        sp -= 1
        start, end, par, side = st[sp, 0], st[sp, 1], st[sp, 2], st[sp, 3]
        if end - start == 1:
            node = leaves[perm[start]]
        else:
            node = free_head
            free_head = free_next[node]
            free_next[node] = -2
            node_slot[node] = -1
            item_count[node] = 0
            internal[n_internal] = node
            n_internal += 1
            cmin = np.full(3, np.inf)
            cmax = np.full(3, -np.inf)
            for i in range(start, end):
                for k in range(3):
                    cmin[k] = min(cmin[k], centre[perm[i], k])
                    cmax[k] = max(cmax[k], centre[perm[i], k])
            best_cost = np.inf
            best_axis = -1
            best_bin = 0
            for axis in range(3):
                ext = cmax[axis] - cmin[axis]
                if not ext > 0.0:
                    continue
                scale = nbins / ext
                bin_n[:] = 0
                bin_lo[:] = np.inf
                bin_hi[:] = -np.inf
                for i in range(start, end):
                    b = min(int((centre[perm[i], axis] - cmin[axis]) * scale), nbins - 1)
                    bin_n[b] += 1
                    leaf = leaves[perm[i]]
                    for k in range(3):
                        bin_lo[b, k] = min(bin_lo[b, k], lo[leaf, k])
                        bin_hi[b, k] = max(bin_hi[b, k], hi[leaf, k])
                acc_lo = np.full(3, np.inf)
                acc_hi = np.full(3, -np.inf)
                count = 0
                for b in range(nbins - 1, 0, -1):
                    count += bin_n[b]
                    for k in range(3):
                        acc_lo[k] = min(acc_lo[k], bin_lo[b, k])
                        acc_hi[k] = max(acc_hi[k], bin_hi[b, k])
                    right_n[b] = count
                    right_area[b] = _area(acc_lo, acc_hi) if count else 0.0
                acc_lo[:] = np.inf
                acc_hi[:] = -np.inf
                count = 0
                for b in range(1, nbins):
                    count += bin_n[b - 1]
                    for k in range(3):
                        acc_lo[k] = min(acc_lo[k], bin_lo[b - 1, k])
                        acc_hi[k] = max(acc_hi[k], bin_hi[b - 1, k])
                    if count == 0 or right_n[b] == 0:
                        continue
                    cost = count * _area(acc_lo, acc_hi) + right_n[b] * right_area[b]
                    if cost < best_cost:
                        best_cost = cost
                        best_axis = axis
                        best_bin = b
            mid = (start + end) // 2
            if best_axis >= 0:
                scale = nbins / (cmax[best_axis] - cmin[best_axis])
                i = start
                j = end - 1
                while i <= j:
                    b = min(int((centre[perm[i], best_axis] - cmin[best_axis]) * scale), nbins - 1)
                    if b < best_bin:
                        i += 1
                    else:
                        perm[i], perm[j] = perm[j], perm[i]
                        j -= 1
                if start < i < end:
                    mid = i
            if sp + 2 > st.shape[0]:
                grown = np.empty((2 * st.shape[0], 4), dtype=np.int64)
                grown[:sp] = st[:sp]
                st = grown
            st[sp, 0], st[sp, 1], st[sp, 2], st[sp, 3] = mid, end, node, 1
            st[sp + 1, 0], st[sp + 1, 1], st[sp + 1, 2], st[sp + 1, 3] = start, mid, node, 0
            sp += 2
        parent[node] = par
        if par >= 0:
            if side == 0:
                c1[par] = node
            else:
                c2[par] = node
        else:
            root = node
    for i in range(n_internal - 1, -1, -1):  # children were allocated after their parents
        node = internal[i]
        a = c1[node]
        b = c2[node]
        height[node] = 1 + max(height[a], height[b])
        _set_union(lo, hi, node, a, b)
    return root, free_head


