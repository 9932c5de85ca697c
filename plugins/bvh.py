"""Dynamic AABB tree (bounding volume hierarchy) in the style of Box2D's ``b2DynamicTree``.

Every object is one leaf whose box is *fattened* by a margin, so small moves need no tree work:
``update`` reinserts an object only when its new box leaves its fat box. The margin is
``margin`` world units per side (``margin_mode="absolute"``) or ``margin`` times the object's
largest edge per side (``margin_mode="relative"``, the default; a point-sized object then gets
no margin).

Insertion picks the sibling by the surface-area cost of Bittner et al. and Box2D (the new
parent's area plus the growth of every ancestor), descending greedily along the child with the
smaller lower bound as Box2D v3 does, then walks up refitting boxes and rotating nodes whose
children's heights differ by more than one (the AVL-style rotations of
``b2DynamicTree::Balance``), which keeps the height near ``log2 N``.
``build`` either builds the whole tree top-down with binned SAH on the centroids
(``build_method="binned_sah"``, the default: a tree with less overlap than inserting one by
one gives) or inserts every object as above
(``"incremental"``); later edits are always incremental, and
:meth:`~spatial.contract.SpatialIndex.rebuild` rebuilds with the chosen method.

Queries and pairs read a depth-first copy of the tree (rebuilt lazily after an edit) whose
boxes are refitted around the objects' own boxes: the fat boxes exist so that small moves need
no tree work, but pruning with them would test every pair of fat boxes that touch. ``nodes()``
shows the fat boxes as ``lo/hi`` and the tight ones as ``core_lo/core_hi``.

``pairs`` descends the tree against itself (each unordered pair of subtrees once, splitting the
larger box); in ``active`` mode a subtree pair is skipped unless one side holds an active
object, and when few objects are active each active leaf queries the tree instead. Pair tests are
counted on the node where the two subtrees that met split apart (their
lowest common ancestor).
All node storage is pooled arrays with a free list; no recursion anywhere.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

import spatial.kernels as K
from spatial.contract import BatchResult, FrustumHits, NodeTable, RayBatchResult, RayHits, SlotHits, SpatialIndex
from spatial.errors import IndexInvariantError
from spatial.memory_budget import OBJECT_BYTES
from spatial.params import param


@dataclass(frozen=True)
class BvhParams:
    """Parameters of :class:`DynamicBvh`."""

    margin: float = param(0.1, lo=0.0, hi=1e6, scale="linear",
                          help="Fat-box margin per side: world units, or a fraction of the "
                               "object's largest edge (see margin_mode).")
    margin_mode: str = param("relative", choices=("relative", "absolute"),
                             help="Whether margin is a fraction of object size or world units.")
    build_method: str = param("binned_sah", choices=("binned_sah", "incremental"),
                              help="Full build: top-down binned SAH, or insert objects one by one.")
    sah_bins: int = param(16, lo=2, hi=256, unit="bins", scale="log",
                          help="Centroid bins per axis of the binned-SAH build.")


#: In ``active`` mode, up to this fraction of active objects each query the tree (Box2D's moved
#: proxies); above it the self-traversal with sleeping subtrees skipped is faster. On 100k
#: mixed-size boxes the two cost the same at about a fifth of the objects active.
ACTIVE_QUERY_FRACTION = 0.2
#: the cell arrays of a tree that stores each object once (no reference-point test)
_NO_CELLS = np.zeros((0, 3))


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


@numba.njit(cache=True)
def _balance(ia, root, lo, hi, parent, c1, c2, height):
    """One AVL-style rotation at ``ia`` if its children's heights differ by more than one.

    Returns ``(new subtree root, tree root)`` (Box2D ``b2DynamicTree::Balance``).
    """
    if c1[ia] < 0 or height[ia] < 2:
        return ia, root
    ib = c1[ia]
    ic = c2[ia]
    balance = height[ic] - height[ib]
    if balance > 1:  # rotate C up
        i_f = c1[ic]
        i_g = c2[ic]
        c1[ic] = ia
        parent[ic] = parent[ia]
        parent[ia] = ic
        if parent[ic] >= 0:
            if c1[parent[ic]] == ia:
                c1[parent[ic]] = ic
            else:
                c2[parent[ic]] = ic
        else:
            root = ic
        if height[i_f] > height[i_g]:
            c2[ic] = i_f
            c2[ia] = i_g
            parent[i_g] = ia
            _set_union(lo, hi, ia, ib, i_g)
            _set_union(lo, hi, ic, ia, i_f)
            height[ia] = 1 + max(height[ib], height[i_g])
            height[ic] = 1 + max(height[ia], height[i_f])
        else:
            c2[ic] = i_g
            c2[ia] = i_f
            parent[i_f] = ia
            _set_union(lo, hi, ia, ib, i_f)
            _set_union(lo, hi, ic, ia, i_g)
            height[ia] = 1 + max(height[ib], height[i_f])
            height[ic] = 1 + max(height[ia], height[i_g])
        return ic, root
    if balance < -1:  # rotate B up
        i_d = c1[ib]
        i_e = c2[ib]
        c1[ib] = ia
        parent[ib] = parent[ia]
        parent[ia] = ib
        if parent[ib] >= 0:
            if c1[parent[ib]] == ia:
                c1[parent[ib]] = ib
            else:
                c2[parent[ib]] = ib
        else:
            root = ib
        if height[i_d] > height[i_e]:
            c2[ib] = i_d
            c1[ia] = i_e
            parent[i_e] = ia
            _set_union(lo, hi, ia, ic, i_e)
            _set_union(lo, hi, ib, ia, i_d)
            height[ia] = 1 + max(height[ic], height[i_e])
            height[ib] = 1 + max(height[ia], height[i_d])
        else:
            c2[ib] = i_e
            c1[ia] = i_d
            parent[i_d] = ia
            _set_union(lo, hi, ia, ic, i_d)
            _set_union(lo, hi, ib, ia, i_e)
            height[ia] = 1 + max(height[ic], height[i_d])
            height[ib] = 1 + max(height[ia], height[i_e])
        return ib, root
    return ia, root


@numba.njit(cache=True)
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


@numba.njit(cache=True)
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
        lower_a = np.inf
        lower_b = np.inf
        if c1[a] < 0:
            if direct_a + inherited < best_cost:
                best_cost = direct_a + inherited
                best = a
        else:
            lower_a = inherited + direct_a + min(leaf_area - area_a, 0.0)
        if c1[b] < 0:
            if direct_b + inherited < best_cost:
                best_cost = direct_b + inherited
                best = b
        else:
            lower_b = inherited + direct_b + min(leaf_area - area_b, 0.0)
        if best_cost <= lower_a and best_cost <= lower_b:
            break
        if lower_a <= lower_b:
            n, direct, area_root = a, direct_a, area_a
        else:
            n, direct, area_root = b, direct_b, area_b
    return best


@numba.njit(cache=True)
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


@numba.njit(cache=True)
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


@numba.njit(cache=True)
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


@numba.njit(cache=True)
def insert_objects(slots, obj_lo, obj_hi, root, lo, hi, parent, c1, c2, height, node_slot,
                   item_count, leaf_of, free_next, free_head, margin, relative):
    """Insert each slot as a new fat leaf; returns ``(root, free_head)``."""
    for s in slots:
        leaf, free_head = _new_leaf(s, obj_lo, obj_hi, lo, hi, parent, c1, c2, height, node_slot,
                                    item_count, leaf_of, free_next, free_head, margin, relative)
        root, free_head = _insert_leaf(leaf, root, lo, hi, parent, c1, c2, height, item_count,
                                       free_next, free_head)
    return root, free_head


@numba.njit(cache=True)
def remove_objects(slots, root, lo, hi, parent, c1, c2, height, node_slot, item_count, leaf_of,
                   free_next, free_head):
    """Remove each slot's leaf and free it; returns ``(root, free_head)``."""
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


@numba.njit(cache=True)
def update_objects(slots, obj_lo, obj_hi, root, lo, hi, parent, c1, c2, height, item_count,
                   leaf_of, free_next, free_head, margin, relative):
    """Reinsert only objects that left their fat box; returns ``(root, free_head, reinserts)``."""
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


@numba.njit(cache=True)
def build_binned_sah(slots, obj_lo, obj_hi, lo, hi, parent, c1, c2, height, node_slot,
                     item_count, leaf_of, free_next, free_head, margin, relative, nbins):
    """Top-down binned-SAH build over fresh fat leaves; returns ``(root, free_head)``."""
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


@numba.njit(cache=True)
def pack_tree(root, c1, c2, node_slot, obj_lo, obj_hi, n_nodes):
    """Depth-first copy of the tree with *tight* boxes, for queries and pair finding.

    Rows are in preorder, so a node's left child is the next row and a subtree is one run of
    memory. Leaf boxes are the objects' own boxes and inner boxes are refitted around them:
    the fat margins only decide when ``update`` reinserts a leaf, and pruning with the tight
    boxes tests far fewer subtree pairs. Returns ``(order, parent_rows, depths, left_rows,
    right_rows, row_slots, row_items, tight_lo, tight_hi, box, area, complete)``:
    ``left_rows`` is ``-1`` at a leaf, ``row_slots`` the leaf's object slot (``-1`` inside),
    ``row_items`` 1 at a leaf and 0 inside, ``box`` the tight boxes again as ``(m, 6)`` rows
    ``lo, hi`` (one cache line per node for the pair traversal), and ``complete`` false when
    more than ``n_nodes`` nodes were reachable (a corrupt tree; the copy then stops there).
    """
    cap = max(n_nodes, 1)
    order = np.empty(cap, dtype=np.int64)
    parents = np.empty(cap, dtype=np.int64)
    depths = np.empty(cap, dtype=np.int64)
    left = np.full(cap, -1, dtype=np.int64)
    right = np.full(cap, -1, dtype=np.int64)
    stack = np.empty((64, 3), dtype=np.int64)  # node, parent row, depth
    m = 0
    sp = 0
    complete = True
    if root >= 0:
        stack[0, 0] = root
        stack[0, 1] = -1
        stack[0, 2] = 0
        sp = 1
    while sp > 0:
        sp -= 1
        n = stack[sp, 0]
        p = stack[sp, 1]
        d = stack[sp, 2]
        if m == cap:  # a corrupt tree reaches more nodes than are in use
            complete = False
            break
        order[m] = n
        parents[m] = p
        depths[m] = d
        row = m
        m += 1
        if p >= 0:
            if c1[order[p]] == n:
                left[p] = row
            else:
                right[p] = row
        if c1[n] >= 0:
            if sp + 2 > stack.shape[0]:
                grown = np.empty((2 * stack.shape[0], 3), dtype=np.int64)
                grown[:sp] = stack[:sp]
                stack = grown
            stack[sp, 0] = c2[n]
            stack[sp, 1] = row
            stack[sp, 2] = d + 1
            stack[sp + 1, 0] = c1[n]
            stack[sp + 1, 1] = row
            stack[sp + 1, 2] = d + 1
            sp += 2
    slots = np.full(m, -1, dtype=np.int64)
    items = np.zeros(m, dtype=np.int64)
    tight_lo = np.empty((m, 3))
    tight_hi = np.empty((m, 3))
    box = np.empty((m, 6))  # the same, one row per node, for the pair traversal
    area = np.empty(m)
    for r in range(m - 1, -1, -1):  # children come after their parents
        n = order[r]
        if left[r] < 0:
            s = node_slot[n]
            slots[r] = s
            items[r] = 1
            for k in range(3):
                tight_lo[r, k] = obj_lo[s, k]
                tight_hi[r, k] = obj_hi[s, k]
        else:
            a = left[r]
            b = right[r]
            for k in range(3):
                tight_lo[r, k] = min(tight_lo[a, k], tight_lo[b, k])
                tight_hi[r, k] = max(tight_hi[a, k], tight_hi[b, k])
        for k in range(3):
            box[r, k] = tight_lo[r, k]
            box[r, 3 + k] = tight_hi[r, k]
        dx = tight_hi[r, 0] - tight_lo[r, 0]
        dy = tight_hi[r, 1] - tight_lo[r, 1]
        dz = tight_hi[r, 2] - tight_lo[r, 2]
        area[r] = 2.0 * (dx * dy + dy * dz + dz * dx)
    return (order[:m], parents[:m], depths[:m], left[:m], right[:m], slots, items, tight_lo,
            tight_hi, box, area, complete)


@numba.njit(cache=True)
def subtree_flags(parent_rows, left_rows, row_slots, active):
    """Per row: subtree leaf count and whether the subtree holds an active object."""
    m = len(parent_rows)
    count = np.zeros(m, dtype=np.int64)
    awake = np.zeros(m, dtype=np.bool_)
    for r in range(m - 1, -1, -1):
        if left_rows[r] < 0:
            count[r] += 1
            if active[row_slots[r]]:
                awake[r] = True
        p = parent_rows[r]
        if p >= 0:
            count[p] += count[r]
            if awake[r]:
                awake[p] = True
    return count, awake


@numba.njit(cache=True, inline="always")
def _rows_overlap(box, a, b):
    """Closed overlap of rows ``a`` and ``b`` of a ``(m, 6)`` lo-hi box array, read by index:
    array views would cost a reference-count update each in the hot loop."""
    return (box[a, 0] <= box[b, 3] and box[b, 0] <= box[a, 3] and box[a, 1] <= box[b, 4]
            and box[b, 1] <= box[a, 4] and box[a, 2] <= box[b, 5] and box[b, 2] <= box[a, 5])


@numba.njit(cache=True)
def self_pairs(box, left, right, row_slots, area, awake, only_active):
    """Every overlapping leaf pair, descending the packed tree against itself.

    Each unordered pair of subtrees meets once: every inner node pairs its two children, and
    a pair of overlapping subtrees splits the one with the larger box (a leaf never), as in
    Box2D and FCL. Only overlapping (and, in ``only_active`` mode, awake) subtree pairs are
    pushed, so the stack holds no dead entries. ``box`` holds each row's tight ``lo, hi``.
    Returns ``(slot pairs, leaf tests, per-row tests)``; a test is counted on the row where
    the two subtrees split apart (their lowest common ancestor).
    """
    n_rows = len(left)
    node_tests = np.zeros(n_rows, dtype=np.int64)
    out = np.empty((max(1024, n_rows), 2), dtype=np.int64)
    m = 0
    tests = 0
    st = np.empty((64, 2), dtype=np.int64)
    for origin in range(n_rows):
        x = left[origin]
        if x < 0 or (only_active and not awake[origin]):
            continue
        y = right[origin]
        if not _rows_overlap(box, x, y):
            continue
        st[0, 0] = x
        st[0, 1] = y
        sp = 1
        while sp > 0:
            sp -= 1
            a = st[sp, 0]
            b = st[sp, 1]
            leaf_a = left[a] < 0
            leaf_b = left[b] < 0
            if leaf_a and leaf_b:
                tests += 1
                node_tests[origin] += 1
                sa = row_slots[a]
                sb = row_slots[b]
                out, m = K.push_pair(out, m, min(sa, sb), max(sa, sb))
                continue
            if leaf_b or (not leaf_a and area[a] >= area[b]):
                c, d, other = left[a], right[a], b
            else:
                c, d, other = left[b], right[b], a
            if sp + 2 > st.shape[0]:
                grown = np.empty((2 * st.shape[0], 2), dtype=np.int64)
                grown[:sp] = st[:sp]
                st = grown
            wake = not only_active or awake[other]
            if (wake or awake[c]) and _rows_overlap(box, c, other):
                st[sp, 0] = c
                st[sp, 1] = other
                sp += 1
            if (wake or awake[d]) and _rows_overlap(box, d, other):
                st[sp, 0] = d
                st[sp, 1] = other
                sp += 1
    return out[:m], tests, node_tests


@numba.njit(cache=True)
def active_leaf_pairs(box, left, right, row_slots, subtree_count, active_rows, active):
    """Pairs with an active object, one tree query per active leaf (Box2D's moved proxies).

    Each active leaf's box descends the packed tree; a pair of two active objects is reported
    by the query of the smaller slot only. While the descent follows the leaf's own path from
    the root, the node where it leaves that path is the lowest common ancestor every test below
    is counted on (in preorder a subtree is a run of ``2 * leaves - 1`` rows, so the path is
    a range test). Returns what :func:`self_pairs` returns.
    """
    n_rows = len(left)
    node_tests = np.zeros(n_rows, dtype=np.int64)
    out = np.empty((max(1024, 4 * len(active_rows)), 2), dtype=np.int64)
    m = 0
    tests = 0
    st = np.empty((64, 2), dtype=np.int64)  # row, lowest common ancestor (-1: on the path)
    for q in active_rows:
        s = row_slots[q]
        st[0, 0] = 0
        st[0, 1] = -1
        sp = 1
        while sp > 0:
            sp -= 1
            n = st[sp, 0]
            origin = st[sp, 1]
            if left[n] < 0:
                other = row_slots[n]
                if n == q or (active[other] and other < s):
                    continue
                tests += 1
                node_tests[origin] += 1
                out, m = K.push_pair(out, m, min(s, other), max(s, other))
                continue
            if sp + 2 > st.shape[0]:
                grown = np.empty((2 * st.shape[0], 2), dtype=np.int64)
                grown[:sp] = st[:sp]
                st = grown
            for child in (left[n], right[n]):
                if not _rows_overlap(box, child, q):
                    continue
                below = origin
                if origin < 0 and not (child <= q < child + 2 * subtree_count[child] - 1):
                    below = n
                st[sp, 0] = child
                st[sp, 1] = below
                sp += 1
    return out[:m], tests, node_tests


# --------------------------------------------------------------------------- backend
@dataclass
class _Packed:
    """Arrays of :func:`pack_tree`, one row per node in preorder (see there)."""

    order: np.ndarray
    parents: np.ndarray
    depths: np.ndarray
    left: np.ndarray
    right: np.ndarray
    slots: np.ndarray
    items: np.ndarray
    tight_lo: np.ndarray
    tight_hi: np.ndarray
    box: np.ndarray
    area: np.ndarray
    complete: bool
    #: ``item_start`` of the query kernels: a leaf row keeps its one slot at its own row
    row_index: np.ndarray


class DynamicBvh(SpatialIndex):
    """Dynamic AABB tree with fat leaves, SAH sibling choice and height-balancing rotations."""

    name = "bvh"
    dims = 3
    description = "Dynamic AABB tree (Box2D style): fat leaves, incremental SAH insertion, rotations."
    Params = BvhParams
    branching = 2
    param_variants = [{"build_method": "incremental"}, {"margin_mode": "absolute", "margin": 2.0},
                      {"margin": 0.0}]

    @classmethod
    def worst_case_bytes(cls, params, lo, hi) -> float:
        """One leaf per object: under two nodes an object, each with its pooled columns
        (grown by doubling) and the depth-first copy queries read."""
        return len(lo) * (2 * (2 * 104 + 152) + 8 + OBJECT_BYTES)

    # ---------------------------------------------------------------- pool
    def _setup(self) -> None:
        self._cap = 0
        self._lo = np.empty((0, 3))
        self._hi = np.empty((0, 3))
        self._parent = np.empty(0, dtype=np.int64)
        self._c1 = np.empty(0, dtype=np.int64)
        self._c2 = np.empty(0, dtype=np.int64)
        self._height = np.empty(0, dtype=np.int64)
        self._node_slot = np.empty(0, dtype=np.int64)
        self._item_count = np.empty(0, dtype=np.int64)
        self._free_next = np.empty(0, dtype=np.int64)
        self._free_head = -1
        self._free_count = 0
        self._leaf_of = np.empty(0, dtype=np.int64)
        self._root = -1
        self._reinserts = 0
        self._order_cache = None

    def _reserve(self, extra_nodes: int) -> None:
        """Make room for ``extra_nodes`` more nodes and for every slot of the object table."""
        slot_cap = len(self.objects.lo)
        if len(self._leaf_of) < slot_cap:
            grown = np.full(slot_cap, -1, dtype=np.int64)
            grown[: len(self._leaf_of)] = self._leaf_of
            self._leaf_of = grown
        if self._free_count >= extra_nodes:
            return
        old = self._cap
        cap = max(64, 2 * old, old + extra_nodes - self._free_count)

        def grow(arr, fill):
            new = np.full((cap,) + arr.shape[1:], fill, dtype=arr.dtype)
            new[:old] = arr
            return new

        self._lo, self._hi = grow(self._lo, 0.0), grow(self._hi, 0.0)
        self._parent, self._c1, self._c2 = grow(self._parent, -1), grow(self._c1, -1), grow(self._c2, -1)
        self._height = grow(self._height, 0)
        self._node_slot = grow(self._node_slot, -1)
        self._item_count = grow(self._item_count, 0)
        self._free_next = grow(self._free_next, -1)
        # chain the new nodes in front of the existing free list
        self._free_next[old:cap - 1] = np.arange(old + 1, cap)
        self._free_next[cap - 1] = self._free_head
        self._free_head = old
        self._free_count += cap - old
        self._cap = cap

    def _margin(self):
        return float(self.params.margin), self.params.margin_mode == "relative"

    def _edited(self, free_head: int) -> None:
        self._free_head = int(free_head)
        self._order_cache = None

    # ---------------------------------------------------------------- edits
    def _build(self, slots) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        self._reserve(2 * len(slots))
        margin, relative = self._margin()
        if self.params.build_method == "binned_sah":
            root, free = build_binned_sah(slots, self.objects.lo, self.objects.hi, self._lo,
                                          self._hi, self._parent, self._c1, self._c2, self._height,
                                          self._node_slot, self._item_count, self._leaf_of,
                                          self._free_next, self._free_head, margin, relative,
                                          self.params.sah_bins)
            self._root = int(root)
            self._free_count -= 2 * len(slots) - 1 if len(slots) else 0
            self._edited(free)
        else:
            self._insert(slots)

    def _insert(self, slots) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        if len(slots) == 0:
            return
        self._reserve(2 * len(slots))
        margin, relative = self._margin()
        root, free = insert_objects(slots, self.objects.lo, self.objects.hi, self._root, self._lo,
                                    self._hi, self._parent, self._c1, self._c2, self._height,
                                    self._node_slot, self._item_count, self._leaf_of,
                                    self._free_next, self._free_head, margin, relative)
        had_root = self._root >= 0
        self._root = int(root)
        # every leaf costs one node, and every leaf but a first one into an empty tree a parent
        self._free_count -= 2 * len(slots) - (0 if had_root else 1)
        self._edited(free)

    def _remove(self, slots) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        root, free = remove_objects(slots, self._root, self._lo, self._hi, self._parent, self._c1,
                                    self._c2, self._height, self._node_slot, self._item_count,
                                    self._leaf_of, self._free_next, self._free_head)
        self._root = int(root)
        self._free_count += 2 * len(slots) - (1 if self._root < 0 else 0)
        self._edited(free)

    def _update(self, slots) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        margin, relative = self._margin()
        root, free, reinserts = update_objects(slots, self.objects.lo, self.objects.hi, self._root,
                                               self._lo, self._hi, self._parent, self._c1,
                                               self._c2, self._height, self._item_count,
                                               self._leaf_of, self._free_next, self._free_head,
                                               margin, relative)
        self._root = int(root)
        self._reinserts = int(reinserts)
        self._edited(free)

    # ---------------------------------------------------------------- queries
    def _packed(self) -> _Packed:
        """The depth-first tight copy of the tree (cached until the next edit)."""
        if self._order_cache is None:
            n_nodes = self._cap - self._free_count if self._root >= 0 else 0
            parts = pack_tree(self._root, self._c1, self._c2, self._node_slot, self.objects.lo,
                              self.objects.hi, n_nodes)
            self._order_cache = _Packed(*parts, row_index=np.arange(len(parts[0])))
        return self._order_cache

    def _order(self):
        """Preorder node ids, parent rows and depths of the rows of :meth:`nodes`."""
        packed = self._packed()
        return packed.order, packed.parents, packed.depths

    def _tree(self):
        """Query kernels' view of the packed copy: node ids there are rows of :meth:`nodes`."""
        p = self._packed()
        root = 0 if len(p.order) else -1
        return K.TreeArrays(root, p.tight_lo, p.tight_hi, p.left, p.right, p.row_index, p.items,
                            p.slots, self.objects.lo, self.objects.hi)

    def _query(self, shape, trace):
        return K.query_tree(self._tree(), shape, trace)

    def _query_box(self, lo, hi, trace):
        hits = self._query(K.box_shape(lo, hi), trace)
        return SlotHits(hits.slots, hits.visited, hits.tested, hits.rows if trace else None)

    def _query_sphere(self, center, radius, trace):
        hits = self._query(K.sphere_shape(center, radius), trace)
        return SlotHits(hits.slots, hits.visited, hits.tested, hits.rows if trace else None)

    def _query_ray(self, origin, direction, max_t, trace):
        hits = self._query(K.ray_shape(origin, direction, max_t), trace)
        return RayHits(hits.slots, hits.t, hits.visited, hits.tested, hits.rows if trace else None)

    def _query_frustum(self, planes, trace):
        hits = self._query(K.frustum_shape(planes), trace)
        return FrustumHits(hits.slots, hits.visited, hits.tested, (hits.rows if trace else None),
                (hits.culled if trace else None))

    def _query_boxes(self, lo, hi) -> BatchResult:
        slots, offsets, visited, tested = K.tree_query_boxes(self._tree(), lo, hi, False,
                                                             _NO_CELLS, _NO_CELLS)
        return BatchResult(self.objects.ids[slots], offsets, visited, tested)

    def _query_rays(self, origins, directions, max_t) -> RayBatchResult:
        slots, t, visited, tested = K.tree_query_rays_closest(self._tree(), self.objects.ids,
                                                              origins, directions, max_t)
        return RayBatchResult(K.slots_to_ids(self.objects.ids, slots), t, visited, tested)

    # ---------------------------------------------------------------- pairs
    def _flags(self):
        """Per row of :meth:`nodes`: subtree object count and whether it holds an active one."""
        p = self._packed()
        return subtree_flags(p.parents, p.left, p.slots, self._active())

    def _active(self) -> np.ndarray:
        """Per slot: dynamic and awake (false for free slots)."""
        active = np.zeros(max(len(self.objects.lo), 1), dtype=bool)
        active[: self.objects.slot_limit] = self.objects.active_mask()
        return active

    def _pairs(self, mode):
        p = self._packed()
        if mode != "active":
            return self_pairs(p.box, p.left, p.right, p.slots, p.area,
                              np.zeros(len(p.order), dtype=bool), False)
        active = self._active()
        count, awake = subtree_flags(p.parents, p.left, p.slots, active)
        leaf_rows = np.flatnonzero(p.left < 0)
        active_rows = leaf_rows[active[p.slots[leaf_rows]]]
        if len(active_rows) <= ACTIVE_QUERY_FRACTION * len(leaf_rows):
            return active_leaf_pairs(p.box, p.left, p.right, p.slots, count, active_rows, active)
        return self_pairs(p.box, p.left, p.right, p.slots, p.area, awake, True)

    # ---------------------------------------------------------------- inspection
    def _nodes(self) -> NodeTable:
        order, parents, depths = self._order()
        if len(order) == 0:
            return NodeTable.empty(0)
        count, awake = self._flags()
        p = self._packed()
        is_leaf = p.left < 0
        # lo/hi show the stored (fat) boxes; core_lo/core_hi the tight ones queries prune with
        return NodeTable.from_columns(
            lo=self._lo[order], hi=self._hi[order], core_lo=p.tight_lo.copy(),
            core_hi=p.tight_hi.copy(), depth=depths, parent=parents, is_leaf=is_leaf,
            own_count=is_leaf.astype(np.int32), subtree_count=count, awake=awake)

    def _node_objects(self, row):
        order = self._order()[0]
        if not 0 <= row < len(order):
            raise IndexError(f"node row {row} does not exist ({len(order)} nodes)")
        node = order[row]
        return self._node_slot[node:node + 1] if self._c1[node] < 0 else np.empty(0, dtype=np.int64)

    def _validate(self) -> None:
        def fail(message):
            raise IndexInvariantError("bvh: " + message)

        alive = self.objects.alive_slots()
        order = self._order()[0]
        in_use = self._cap - self._free_count
        if not self._packed().complete:
            fail(f"more nodes reachable from the root than the {in_use} in use")
        if len(order) != in_use:
            fail(f"{len(order)} nodes reachable from the root but {in_use} in use")
        if len(alive) == 0:
            if self._root >= 0:
                fail("empty index with a root node")
            return
        if self._parent[self._root] != -1:
            fail(f"root {self._root} has a parent")
        inner = order[self._c1[order] >= 0]
        leaves = order[self._c1[order] < 0]
        if len(leaves) != len(alive):
            fail(f"{len(leaves)} leaves for {len(alive)} objects")
        for child in (self._c1[inner], self._c2[inner]):
            if (self._parent[child] != inner).any():
                fail(f"node {int(child[self._parent[child] != inner][0])} has a wrong parent link")
            bad = ((self._lo[child] < self._lo[inner]) | (self._hi[child] > self._hi[inner])).any(axis=1)
            if bad.any():
                fail(f"node {int(inner[bad][0])} does not enclose its child {int(child[bad][0])}")
        expect = 1 + np.maximum(self._height[self._c1[inner]], self._height[self._c2[inner]])
        if (self._height[inner] != expect).any() or (self._height[leaves] != 0).any():
            fail("stored heights are inconsistent with the children")
        slots = self._node_slot[leaves]
        if not np.array_equal(np.sort(slots), alive):
            fail("leaves do not hold exactly the live objects")
        if not np.array_equal(self._leaf_of[slots], leaves):
            fail("the object-to-leaf map does not point back to the leaves")
        olo, ohi = self.objects.lo[slots], self.objects.hi[slots]
        escaped = ((olo < self._lo[leaves]) | (ohi > self._hi[leaves])).any(axis=1)
        if escaped.any():
            fail(f"object slot {int(slots[escaped][0])} is outside its leaf's fat box")

    def _memory_bytes(self) -> int:
        arrays = (self._lo, self._hi, self._parent, self._c1, self._c2, self._height,
                  self._node_slot, self._item_count, self._free_next,
                  self._leaf_of)
        packed = self._order_cache
        if packed is not None:  # the depth-first copy queries and pairs read
            arrays += (packed.order, packed.parents, packed.depths, packed.left, packed.right,
                       packed.slots, packed.items, packed.tight_lo, packed.tight_hi, packed.box,
                       packed.area, packed.row_index)
        return int(sum(a.nbytes for a in arrays))

    def area_ratio(self) -> float:
        """Sum of inner node areas over the root area (Box2D's ``GetAreaRatio``)."""
        order = self._order()[0]
        if len(order) == 0:
            return 0.0
        inner = order[self._c1[order] >= 0]
        d = self._hi[inner] - self._lo[inner]
        areas = 2.0 * (d[:, 0] * d[:, 1] + d[:, 1] * d[:, 2] + d[:, 2] * d[:, 0])
        dr = self._hi[self._root] - self._lo[self._root]
        root_area = 2.0 * (dr[0] * dr[1] + dr[1] * dr[2] + dr[2] * dr[0])
        return float(areas.sum() / root_area) if root_area > 0 else 0.0

    def height(self) -> int:
        """Height of the tree (0 for a single leaf, -1 when empty)."""
        return int(self._height[self._root]) if self._root >= 0 else -1

    def _extra_stats(self) -> dict:
        n = self.objects.count
        return {
            "height": self.height(),
            "ideal_height": math.ceil(math.log2(n)) if n > 1 else 0,
            "area_ratio": round(self.area_ratio(), 4),
            "fat_reinserts_last_update": self._reinserts,
            "build_method": self.params.build_method,
        }


def register(registry) -> None:
    """Built-in plugin entry point."""
    registry.add_backend(DynamicBvh)
