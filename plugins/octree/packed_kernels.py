"""A read-only packed copy of every node's objects with a small bounding-volume tree per node.

Upper nodes of a classic octree hold every object straddling their split planes — tens of
thousands in a large mixed-size level — and a query that reaches such a node would test them
all. The packed copy (rebuilt lazily at the first query after an edit) stores each node's
objects contiguously, with their boxes, ordered as the leaves of a *node tree*: a binary tree of
bounding boxes over that node's own objects only, split at the median centre along the widest
axis until at most :data:`LEAF_SIZE` objects remain. Queries descend it like the octree itself,
so a crowded node costs about the logarithm of its list, not the list.

The node tree does not change where objects live — it is an index over each node's own list,
which the octree's placement rule still decides. Its boxes are exact unions of the object
boxes, so every predicate that accepts an object accepts each node-tree box above it (the
rounding argument of :mod:`.query_kernels` applies unchanged).

The octree's nodes are copied too, one row each in breadth-first order (the rows of
:meth:`~spatial.contract.SpatialIndex.nodes`): a query reads a node's loose bounds and the range
of its children's rows from two small contiguous arrays instead of the wide rows of the editable
node pool, and siblings sit next to each other. At a million objects the pool no longer fits in
cache and a query's time is mostly its cache misses, so this matters more than any arithmetic.

Layout of the tuple returned by :func:`pack`:

* ``slots (n,)`` and ``boxes (n, 6)`` (lo xyz, hi xyz): the objects, node by node;
* ``list_root (rows,)``: the node-tree row of each octree node's list, ``-1`` when it is empty;
* ``tree_box (m, 6)``: bounds of each node-tree row;
* ``tree_int (m, 3)``: first and end entry (into ``slots``) and the right child's row; the left
  child is the next row, and a right child of ``-1`` marks a leaf;
* ``node_box (rows, 6)``: each octree node's loose bounds (lo xyz, hi xyz);
* ``node_kids (rows, 4)``: the row of its first child and its number of children (the
  children's rows are consecutive, in octant order), then the first and end entry of its own
  objects in ``slots``. Queries scan a list of at most :data:`LEAF_SIZE` objects directly: its
  node tree is a single leaf, and skipping it saves two reads from memory per node.

Beside the tuple, :func:`tight_bounds` gives each octree row the tight bounds of everything its
subtree holds (lo > hi for a subtree holding nothing). Closest-hit rays test those instead of
the loose cells, so a ray does not descend into the empty part of a cell, nor into an empty
subtree at all. They are a separate ``(rows, 6)`` array so that box queries keep reading
48-byte node rows.

Moving objects does not throw the copy away: :func:`refit` writes the moved objects' new boxes
in place and recomputes only the node-tree rows and octree rows above them (tight bounds
exactly, loose bounds grown to cover the content), like a BVH refit. The copy then no longer
mirrors where the octree files each object — an object stays in the list it was packed into —
but every query answer is unchanged, because every bound above an object still encloses it.
The index repacks once the objects moved since the last pack outnumber the objects, so a
long-running scene pays a full pack at most once per object moved, and the copy never drifts
far from the tree.
"""
from __future__ import annotations

import numba
import numpy as np

import spatial.kernels as K

from .layout import CHILD, COUNT, HEAD, LOOSE_HI, LOOSE_LO, NEXT

#: Objects per node-tree leaf: small, so a ray or box tests few objects it cannot meet.
LEAF_SIZE = 4
#: Node-tree rows a traversal may hold pending: median splits keep a tree of n objects about
#: log2(n) deep, so 64 levels cover any list that fits in memory.
TREE_STACK = 128

FIRST = 0
END = 1
RIGHT = 2

# columns of ``node_kids``
FIRST_KID = 0
KIDS = 1
LIST_FIRST = 2
LIST_END = 3


@numba.njit(cache=True, nogil=True)
def _select(idx, cen, s0, s1, kth, axis):
    """Reorder ``[s0, s1)`` so entry ``kth`` has the kth centre on ``axis``, none smaller after it
    and none larger before it (Hoare's selection: linear time, so a node tree builds in n log n)."""
    left = s0
    right = s1 - 1
    while right > left:
        pivot = cen[(left + right) // 2, axis]
        i = left
        j = right
        while i <= j:
            while cen[i, axis] < pivot:
                i += 1
            while cen[j, axis] > pivot:
                j -= 1
            if i <= j:
                s = idx[i]
                idx[i] = idx[j]
                idx[j] = s
                for a in range(3):
                    c = cen[i, a]
                    cen[i, a] = cen[j, a]
                    cen[j, a] = c
                i += 1
                j -= 1
        if kth <= j:
            right = j
        elif kth >= i:
            left = i
        else:
            return


@numba.njit(cache=True, nogil=True)
def _build_node_tree(lo, hi, idx, cen, n, base, tree_box, tree_int, used, stack):
    """Build the node tree over ``idx[:n]`` (object slots, reordered in place); returns rows used.

    ``cen`` is scratch for the doubled centres; ``base`` is where the list starts in ``slots``.
    """
    for i in range(n):
        s = idx[i]
        for a in range(3):
            cen[i, a] = lo[s, a] + hi[s, a]
    stack[0, 0] = 0
    stack[0, 1] = n
    stack[0, 2] = -1
    top = 1
    while top > 0:
        top, s0, s1, parent = K.pop3(stack, top)
        k = used
        used += 1
        if parent >= 0:
            tree_int[parent, RIGHT] = k
        tree_int[k, FIRST] = base + s0
        tree_int[k, END] = base + s1
        tree_int[k, RIGHT] = -1
        widest = -1.0
        axis = np.int64(0)  # np.int64, not 0: a literal 0 makes numba compile the callee twice
        for a in range(3):
            blo = np.inf
            bhi = -np.inf
            clo = np.inf
            chi = -np.inf
            for i in range(s0, s1):
                s = idx[i]
                blo = min(blo, lo[s, a])
                bhi = max(bhi, hi[s, a])
                clo = min(clo, cen[i, a])
                chi = max(chi, cen[i, a])
            tree_box[k, a] = blo
            tree_box[k, 3 + a] = bhi
            if chi - clo > widest:
                widest = chi - clo
                axis = a
        if s1 - s0 <= LEAF_SIZE:
            continue
        mid = (s0 + s1) // 2
        if widest > 0:
            _select(idx, cen, s0, s1, mid, axis)
        # the right half waits on the stack; the left half is popped next and gets row k + 1
        stack[top, 0] = mid
        stack[top, 1] = s1
        stack[top, 2] = k
        top += 1
        stack[top, 0] = s0
        stack[top, 1] = mid
        stack[top, 2] = -1
        top += 1
    return used


@numba.njit(cache=True, nogil=True)
def pack(NI, NF, OB, lo, hi, order):
    """Pack the nodes in ``order`` (breadth-first, so siblings are consecutive rows) with their
    objects and build each node's tree (see module doc)."""
    total = 0
    largest = 0
    for k in range(len(order)):
        total += NI[order[k], COUNT]
        largest = max(largest, NI[order[k], COUNT])
    slots = np.empty(total, dtype=np.int64)
    boxes = np.empty((total, 6))
    rows = len(order)
    list_root = np.full(rows, -1, dtype=np.int64)
    node_box = np.empty((rows, 6))
    node_kids = np.zeros((rows, 4), dtype=np.int64)
    row_of = np.full(NI.shape[0], -1, dtype=np.int64)
    for k in range(rows):
        row_of[order[k]] = k
    for k in range(rows):
        node = order[k]
        for a in range(3):
            node_box[k, a] = NF[node, LOOSE_LO + a]
            node_box[k, 3 + a] = NF[node, LOOSE_HI + a]
        first = -1
        for c in range(8):
            child = NI[node, CHILD + c]
            if child >= 0:
                if first < 0:
                    first = row_of[child]
                node_kids[k, KIDS] += 1
        node_kids[k, FIRST_KID] = first
    tree_box = np.empty((2 * total + 1, 6))
    tree_int = np.empty((2 * total + 1, 3), dtype=np.int64)
    idx = np.empty(largest, dtype=np.int64)
    cen = np.empty((largest, 3))
    stack = np.empty((TREE_STACK, 3), dtype=np.int64)
    used = np.int64(0)  # np.int64, not 0: a literal 0 makes numba compile the callee twice
    pos = np.int64(0)
    for k in range(len(order)):
        node = order[k]
        n = NI[node, COUNT]
        if n == 0:
            continue
        s = NI[node, HEAD]
        i = 0
        while s >= 0:
            idx[i] = s
            i += 1
            s = OB[s, NEXT]
        list_root[k] = used
        node_kids[k, LIST_FIRST] = pos
        node_kids[k, LIST_END] = pos + n
        used = _build_node_tree(lo, hi, idx, cen, n, pos, tree_box, tree_int, used, stack)
        for i in range(n):
            s = idx[i]
            slots[pos + i] = s
            for a in range(3):
                boxes[pos + i, a] = lo[s, a]
                boxes[pos + i, 3 + a] = hi[s, a]
        pos += n
    return (slots, boxes, list_root, tree_box[:used].copy(), tree_int[:used].copy(), node_box,
            node_kids)


@numba.njit(cache=True, inline="always")
def _fit_node(k, list_root, tree_box, tight, node_kids):
    """Tight bounds of octree row ``k`` = its own list's tree root box united with its
    children's tight bounds (already fitted); lo > hi when the subtree holds nothing."""
    for a in range(3):
        tight[k, a] = np.inf
        tight[k, 3 + a] = -np.inf
    root = list_root[k]
    if root >= 0:
        for a in range(3):
            tight[k, a] = min(tight[k, a], tree_box[root, a])
            tight[k, 3 + a] = max(tight[k, 3 + a], tree_box[root, 3 + a])
    first = node_kids[k, FIRST_KID]
    for child in range(first, first + node_kids[k, KIDS]):
        for a in range(3):
            tight[k, a] = min(tight[k, a], tight[child, a])
            tight[k, 3 + a] = max(tight[k, 3 + a], tight[child, 3 + a])


@numba.njit(cache=True, nogil=True)
def tight_bounds(packed):
    """``(rows, 6)`` tight bounds of each octree row's subtree content (see module doc)."""
    list_root = packed[2]
    tree_box = packed[3]
    node_kids = packed[6]
    rows = len(list_root)
    tight = np.empty((rows, 6))
    for k in range(rows - 1, -1, -1):  # children have larger rows than their parent
        _fit_node(k, list_root, tree_box, tight, node_kids)
    return tight


@numba.njit(cache=True, nogil=True)
def refit_links(packed):
    """What :func:`refit` needs to walk from a moved object up the copy, computed once per
    pack: ``(entry_of_slot, entry_leaf, tree_parent, root_owner, node_parent)`` — each slot's
    entry (``-1`` when not packed), each entry's node-tree leaf row, each node-tree row's parent
    (``-1`` at a list's root), the octree row owning each list root, each octree row's parent."""
    slots, boxes, list_root, tree_box, tree_int, node_box, node_kids = packed
    top_slot = 0
    for e in range(len(slots)):
        top_slot = max(top_slot, slots[e] + 1)
    entry_of_slot = np.full(top_slot, -1, dtype=np.int64)
    for e in range(len(slots)):
        entry_of_slot[slots[e]] = e
    m = tree_int.shape[0]
    entry_leaf = np.empty(len(slots), dtype=np.int64)
    tree_parent = np.full(m, -1, dtype=np.int64)
    root_owner = np.full(m, -1, dtype=np.int64)
    for r in range(m):
        right = tree_int[r, RIGHT]
        if right < 0:
            for e in range(tree_int[r, FIRST], tree_int[r, END]):
                entry_leaf[e] = r
        else:
            tree_parent[r + 1] = r
            tree_parent[right] = r
    rows = len(list_root)
    node_parent = np.full(rows, -1, dtype=np.int64)
    for k in range(rows):
        if list_root[k] >= 0:
            root_owner[list_root[k]] = k
        first = node_kids[k, FIRST_KID]
        for child in range(first, first + node_kids[k, KIDS]):
            node_parent[child] = k
    return entry_of_slot, entry_leaf, tree_parent, root_owner, node_parent


@numba.njit(cache=True, nogil=True)
def refit(packed, tight, links, lo, hi, moved):
    """Write the boxes of the ``moved`` slots into the copy and refit the rows above them
    (``tight`` is :func:`tight_bounds` of the copy, refitted too).

    Node-tree rows and octree rows on the moved objects' paths are marked, then recomputed in
    decreasing row order (a child's row is always larger than its parent's): node-tree boxes
    and tight node bounds exactly, loose node bounds grown to cover the tight ones. Costs the
    paths of the moved objects plus one pass over the row flags, not a repack.
    """
    slots, boxes, list_root, tree_box, tree_int, node_box, node_kids = packed
    entry_of_slot, entry_leaf, tree_parent, root_owner, node_parent = links
    tree_dirty = np.zeros(tree_int.shape[0], dtype=np.bool_)
    node_dirty = np.zeros(len(list_root), dtype=np.bool_)
    for i in range(len(moved)):
        s = moved[i]
        e = entry_of_slot[s] if s < len(entry_of_slot) else -1
        if e < 0:
            continue
        for a in range(3):
            boxes[e, a] = lo[s, a]
            boxes[e, 3 + a] = hi[s, a]
        r = entry_leaf[e]
        last = r
        while r >= 0 and not tree_dirty[r]:
            tree_dirty[r] = True
            last = r
            r = tree_parent[r]
        if r >= 0:
            continue  # the rest of this path is marked already
        k = root_owner[last]
        while k >= 0 and not node_dirty[k]:
            node_dirty[k] = True
            k = node_parent[k]
    for r in range(tree_int.shape[0] - 1, -1, -1):
        if not tree_dirty[r]:
            continue
        right = tree_int[r, RIGHT]
        for a in range(3):
            tree_box[r, a] = np.inf
            tree_box[r, 3 + a] = -np.inf
        if right < 0:
            for e in range(tree_int[r, FIRST], tree_int[r, END]):
                for a in range(3):
                    tree_box[r, a] = min(tree_box[r, a], boxes[e, a])
                    tree_box[r, 3 + a] = max(tree_box[r, 3 + a], boxes[e, 3 + a])
        else:
            for child in (r + 1, right):
                for a in range(3):
                    tree_box[r, a] = min(tree_box[r, a], tree_box[child, a])
                    tree_box[r, 3 + a] = max(tree_box[r, 3 + a], tree_box[child, 3 + a])
    for k in range(len(list_root) - 1, -1, -1):
        if not node_dirty[k]:
            continue
        _fit_node(k, list_root, tree_box, tight, node_kids)
        for a in range(3):
            if tight[k, a] <= tight[k, 3 + a]:
                node_box[k, a] = min(node_box[k, a], tight[k, a])
                node_box[k, 3 + a] = max(node_box[k, 3 + a], tight[k, 3 + a])
