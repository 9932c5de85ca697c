"""Compiled kernels that edit the octree: placing, moving and removing objects, lifespans.

Placement rule (the same for a build, a lazy insertion batch and the sinking half of an update):
an object descends from a start node into the child octant that holds its centre as long as it
fits inside that child's (loose) bounds and the node may still split (depth below ``max_depth``
and side above ``min_size``). A node holding at most one object is not subdivided: an object
reaching an empty leaf stays there, and only when a second object arrives does the leaf split,
pushing its sinkable occupant down. Children exist only for octants that receive an object.

Why the centre octant suffices: if a box fits the loose bounds of any child, it also fits the
loose bounds of the child holding its centre (for every looseness ``k >= 1``), so following the
centre finds the deepest enclosing node without testing all eight children.

Node bounds are computed from integer cell coordinates (``origin + ix * cell``); rounding is
monotone, so every child's cell nests inside its parent's exactly, and loose bounds are clamped
into the parent's. Each kernel works on the arrays described in :mod:`.layout` and uses
explicit stacks only.
"""
from __future__ import annotations

import numba
import numpy as np

from .layout import (
    ALIVE,
    CF_LOOSENESS,
    CF_MIN_SIZE,
    CF_ORIGIN,
    CF_SIDE,
    CHILD,
    CI_KEEP_IN_ROOT,
    CI_LIFE_CAP,
    CI_LIFE_INITIAL,
    CI_MAX_DEPTH,
    CORE_HI,
    CORE_LO,
    COUNT,
    DEPTH,
    FREE_TOP,
    HEAD,
    IX,
    LEVELS_MOVED,
    LIFE_LEFT,
    LIFE_MAX,
    LOOSE_HI,
    LOOSE_LO,
    MAX_LEVELS_MOVED,
    NCHILD,
    NEXT,
    NODE,
    PARENT,
    PREV,
    PRUNED_TOTAL,
    USED,
)

# status codes returned by kernels that may run out of node rows
DONE = -1


@numba.njit(cache=True, inline="always")
def cell_size(cf, depth):
    """Side of a node at ``depth`` (exact: the root side divided by a power of two)."""
    return cf[CF_SIDE] / float(np.int64(1) << depth)


@numba.njit(cache=True, inline="always")
def can_split(ci, cf, depth):
    """A node may have children while below ``max_depth`` and larger than ``min_size``."""
    return depth < ci[CI_MAX_DEPTH] and cell_size(cf, depth) > cf[CF_MIN_SIZE]


@numba.njit(cache=True, inline="always")
def child_axis(cf, axis, parent_ix, bit, child_cell, parent_loose_lo, parent_loose_hi):
    """Core and loose bounds of a child on one axis (one formula for creation and fit tests)."""
    cix = 2 * parent_ix + bit
    origin = cf[CF_ORIGIN + axis]
    core_lo = origin + cix * child_cell
    core_hi = origin + (cix + 1) * child_cell
    pad = (cf[CF_LOOSENESS] - 1.0) * 0.5 * child_cell
    loose_lo = max(core_lo - pad, parent_loose_lo)
    loose_hi = min(core_hi + pad, parent_loose_hi)
    return core_lo, core_hi, loose_lo, loose_hi


@numba.njit(cache=True, nogil=True)
def centre_child(NI, NF, cf, node, box_lo, box_hi):
    """Octant of the box centre in ``node`` and whether the box fits that child's loose bounds."""
    depth = NI[node, DEPTH]
    child_cell = cell_size(cf, depth + 1)
    octant = 0
    fits = True
    for a in range(3):
        pix = NI[node, IX + a]
        mid = cf[CF_ORIGIN + a] + (2 * pix + 1) * child_cell
        centre = (box_lo[a] + box_hi[a]) * 0.5
        bit = 1 if centre >= mid else 0
        octant |= bit << a
        _, _, llo, lhi = child_axis(cf, a, pix, bit, child_cell, NF[node, LOOSE_LO + a],
                                    NF[node, LOOSE_HI + a])
        if box_lo[a] < llo or box_hi[a] > lhi:
            fits = False
    return octant, fits


@numba.njit(cache=True, inline="always")
def encloses(NF, node, box_lo, box_hi):
    """The node's loose bounds contain the box (faces may coincide)."""
    for a in range(3):
        if box_lo[a] < NF[node, LOOSE_LO + a] or box_hi[a] > NF[node, LOOSE_HI + a]:
            return False
    return True


@numba.njit(cache=True, nogil=True)
def sinkable(NI, NF, ci, cf, node, box_lo, box_hi):
    """The box would go deeper than ``node`` under the placement rule."""
    if not can_split(ci, cf, NI[node, DEPTH]):
        return False
    _, fits = centre_child(NI, NF, cf, node, box_lo, box_hi)
    return fits


# --------------------------------------------------------------------------- node pool
@numba.njit(cache=True, nogil=True)
def init_root(NI, NF, META, cf):
    """Reset the pool to a single root node covering the configured cube."""
    # element loops, not slice assignment: numba compiles the latter into broadcasting code,
    # several times slower to compile on a first start (see :mod:`.build_kernels`)
    for k in range(META.shape[0]):
        META[k] = 0
    for c in range(NI.shape[1]):
        NI[0, c] = -1
    for a in range(3):
        NI[0, IX + a] = 0
    NI[0, DEPTH] = 0
    NI[0, NCHILD] = 0
    NI[0, COUNT] = 0
    NI[0, LIFE_MAX] = 0
    NI[0, ALIVE] = 1
    side = cf[CF_SIDE]
    pad = (cf[CF_LOOSENESS] - 1.0) * 0.5 * side
    for a in range(3):
        lo = cf[CF_ORIGIN + a]
        hi = lo + side
        NF[0, CORE_LO + a] = lo
        NF[0, CORE_HI + a] = hi
        NF[0, LOOSE_LO + a] = lo - pad
        NF[0, LOOSE_HI + a] = hi + pad
    META[USED] = 1


@numba.njit(cache=True, nogil=True)
def free_rows(NI, META):
    """Node rows available without growing the pool."""
    return NI.shape[0] - META[USED] + META[FREE_TOP]


@numba.njit(cache=True, nogil=True)
def create_child(NI, NF, META, FREE, ci, cf, parent, octant):
    """Create the child ``octant`` of ``parent`` (the caller ensured a free row exists)."""
    if META[FREE_TOP] > 0:
        META[FREE_TOP] -= 1
        node = FREE[META[FREE_TOP]]
    else:
        if META[USED] >= NI.shape[0]:
            raise IndexError("octree node pool exhausted (the placement reserve is too small)")
        node = META[USED]
        META[USED] += 1
    depth = NI[parent, DEPTH] + 1
    child_cell = cell_size(cf, depth)
    for c in range(NI.shape[1]):
        NI[node, c] = -1
    for a in range(3):
        bit = (octant >> a) & 1
        pix = NI[parent, IX + a]
        clo, chi, llo, lhi = child_axis(cf, a, pix, bit, child_cell, NF[parent, LOOSE_LO + a],
                                        NF[parent, LOOSE_HI + a])
        NI[node, IX + a] = 2 * pix + bit
        NF[node, CORE_LO + a] = clo
        NF[node, CORE_HI + a] = chi
        NF[node, LOOSE_LO + a] = llo
        NF[node, LOOSE_HI + a] = lhi
    NI[node, DEPTH] = depth
    NI[node, PARENT] = parent
    NI[node, NCHILD] = 0
    NI[node, COUNT] = 0
    NI[node, LIFE_MAX] = ci[CI_LIFE_INITIAL]
    NI[node, ALIVE] = 1
    entered(NI, ci, parent)
    NI[parent, CHILD + octant] = node
    NI[parent, NCHILD] += 1
    return node


@numba.njit(cache=True, inline="always")
def entered(NI, ci, node):
    """Something entered a node: a running countdown stops and the node's lifespan doubles."""
    if NI[node, LIFE_LEFT] >= 0:
        NI[node, LIFE_LEFT] = -1
        NI[node, LIFE_MAX] = min(2 * NI[node, LIFE_MAX], ci[CI_LIFE_CAP])


@numba.njit(cache=True, nogil=True)
def attach(NI, OB, ci, obj, node):
    """Link ``obj`` at the head of ``node``'s own list."""
    head = NI[node, HEAD]
    OB[obj, NODE] = node
    OB[obj, PREV] = -1
    OB[obj, NEXT] = head
    if head >= 0:
        OB[head, PREV] = obj
    NI[node, HEAD] = obj
    NI[node, COUNT] += 1
    entered(NI, ci, node)


@numba.njit(cache=True, nogil=True)
def detach(NI, OB, obj):
    """Unlink ``obj`` from its node; returns that node. Starts no countdown by itself."""
    node = OB[obj, NODE]
    prev = OB[obj, PREV]
    nxt = OB[obj, NEXT]
    if prev >= 0:
        OB[prev, NEXT] = nxt
    else:
        NI[node, HEAD] = nxt
    if nxt >= 0:
        OB[nxt, PREV] = prev
    NI[node, COUNT] -= 1
    OB[obj, NODE] = -1
    OB[obj, NEXT] = -1
    OB[obj, PREV] = -1
    return node


@numba.njit(cache=True, nogil=True)
def maybe_start_countdown(NI, node):
    """An empty childless node (never the root) starts counting down its lifespan."""
    if node > 0 and NI[node, COUNT] == 0 and NI[node, NCHILD] == 0 and NI[node, LIFE_LEFT] < 0:
        NI[node, LIFE_LEFT] = NI[node, LIFE_MAX]


# --------------------------------------------------------------------------- placement
@numba.njit(cache=True, nogil=True)
def _push_down_occupants(NI, NF, OB, ci, cf, lo, hi, node, stack_obj, stack_node, top):
    """Detach the sinkable objects of ``node`` and queue them to sink from it again."""
    obj = NI[node, HEAD]
    while obj >= 0:
        nxt = OB[obj, NEXT]
        if sinkable(NI, NF, ci, cf, node, lo[obj], hi[obj]):
            detach(NI, OB, obj)
            stack_obj[top] = obj
            stack_node[top] = node
            top += 1
        obj = nxt
    return top


@numba.njit(cache=True, nogil=True)
def sink(NI, NF, OB, META, FREE, ci, cf, lo, hi, obj, start, stack_obj, stack_node):
    """Place ``obj`` at or below ``start``; returns the number of levels it descended.

    Occupants pushed down when a leaf splits are processed on the same explicit stack.
    """
    stack_obj[0] = obj
    stack_node[0] = start
    top = 1
    levels = 0
    while top > 0:
        top -= 1
        o = stack_obj[top]
        node = stack_node[top]
        while True:
            fits = False
            octant = 0
            if can_split(ci, cf, NI[node, DEPTH]):
                octant, fits = centre_child(NI, NF, cf, node, lo[o], hi[o])
            if fits and NI[node, NCHILD] == 0 and NI[node, COUNT] == 0:
                attach(NI, OB, ci, o, node)  # alone in an empty leaf: no reason to split
                break
            if fits:
                child = NI[node, CHILD + octant]
                if child < 0:
                    was_leaf = NI[node, NCHILD] == 0
                    child = create_child(NI, NF, META, FREE, ci, cf, node, octant)
                    if was_leaf:
                        top = _push_down_occupants(NI, NF, OB, ci, cf, lo, hi, node,
                                                   stack_obj, stack_node, top)
                if o == obj:
                    levels += 1
                node = child
                continue
            attach(NI, OB, ci, o, node)
            if NI[node, NCHILD] == 0 and NI[node, COUNT] >= 2:
                top = _push_down_occupants(NI, NF, OB, ci, cf, lo, hi, node,
                                           stack_obj, stack_node, top)
            break
    return levels


@numba.njit(cache=True, nogil=True)
def place_batch(NI, NF, OB, META, FREE, ci, cf, lo, hi, slots, start_at, reserve):
    """Sink ``slots[start_at:]`` from the root, in order.

    Returns ``DONE`` when finished, or the index to resume from after the caller grew the node
    pool (``reserve`` free rows are kept available before each object).
    """
    stack_obj = np.empty(4 * (ci[CI_MAX_DEPTH] + 2), dtype=np.int64)
    stack_node = np.empty_like(stack_obj)
    previous = np.int64(0)  # np.int64, not 0: a literal 0 makes numba compile the callee twice
    for i in range(start_at, len(slots)):
        if free_rows(NI, META) < reserve:
            return i
        obj = slots[i]
        if not encloses(NF, 0, lo[obj], hi[obj]):
            # only reached under keep_in_root (callers check); np.int64, not 0: a literal 0
            # makes numba compile the callee twice
            attach(NI, OB, ci, obj, np.int64(0))
            continue
        # objects come in Morton order, so the previous one's path usually shares a long prefix
        # with this one's: start from the deepest node of it that this one's path from the root
        # also passes through (the result is the same as sinking from the root)
        start = previous
        while start > 0 and not on_root_path(NF, start, lo[obj], hi[obj]):
            start = NI[start, PARENT]
        sink(NI, NF, OB, META, FREE, ci, cf, lo, hi, obj, start, stack_obj, stack_node)
        previous = OB[obj, NODE]
    return DONE


@numba.njit(cache=True, nogil=True)
def on_root_path(NF, node, box_lo, box_hi):
    """Sinking the box from the root passes through the existing non-root ``node``.

    True when the box fits the node's loose bounds (hence every ancestor's, as they nest) and
    its centre lies in the node's cell, half-open like the octant choice (``centre >= mid`` goes
    up): cell faces are computed with the same monotone formula as the split planes, so each
    ancestor sends the centre towards ``node``. Existing nodes have children above them, so no
    ancestor stops the descent as an empty leaf.
    """
    for a in range(3):
        centre = (box_lo[a] + box_hi[a]) * 0.5
        if centre < NF[node, CORE_LO + a] or centre >= NF[node, CORE_HI + a]:
            return False
    return encloses(NF, node, box_lo, box_hi)


@numba.njit(cache=True, nogil=True)
def outside_root(NF, lo, hi, slots):
    """Mask of the slots whose boxes are not enclosed by the root's loose bounds."""
    out = np.zeros(len(slots), dtype=np.bool_)
    for i in range(len(slots)):
        out[i] = not encloses(NF, 0, lo[slots[i]], hi[slots[i]])
    return out


@numba.njit(cache=True, nogil=True)
def move_batch(NI, NF, OB, META, FREE, ci, cf, lo, hi, slots, start_at, reserve):
    """Re-place moved objects: climb to the first enclosing ancestor, then sink.

    Under ``keep_in_root`` an object that leaves the root's bounds is stored in the root; the
    other policies deal with such objects before calling this (grow the root, or raise). Returns ``DONE`` or the index
    to resume from after growing the pool. Levels moved accumulate in ``META``.
    """
    stack_obj = np.empty(4 * (ci[CI_MAX_DEPTH] + 2), dtype=np.int64)
    stack_node = np.empty_like(stack_obj)
    keep_in_root = ci[CI_KEEP_IN_ROOT] != 0
    for i in range(start_at, len(slots)):
        if free_rows(NI, META) < reserve:
            return i
        obj = slots[i]
        node = OB[obj, NODE]
        if node < 0:
            continue  # still pending: it is placed at the next flush with its new bounds
        up = node
        climbed = 0
        while up > 0 and not encloses(NF, up, lo[obj], hi[obj]):
            up = NI[up, PARENT]
            climbed += 1
        if up == 0 and not encloses(NF, 0, lo[obj], hi[obj]):
            if keep_in_root and node != 0:
                detach(NI, OB, obj)
                attach(NI, OB, ci, obj, np.int64(0))  # np.int64, not 0: as in place_batch
                maybe_start_countdown(NI, node)
                META[LEVELS_MOVED] += climbed
                META[MAX_LEVELS_MOVED] = max(META[MAX_LEVELS_MOVED], climbed)
            continue
        detach(NI, OB, obj)
        sunk = sink(NI, NF, OB, META, FREE, ci, cf, lo, hi, obj, up, stack_obj, stack_node)
        if OB[obj, NODE] != node:
            maybe_start_countdown(NI, node)
        moved = climbed + sunk
        if OB[obj, NODE] == node:
            moved = 0
        META[LEVELS_MOVED] += moved
        META[MAX_LEVELS_MOVED] = max(META[MAX_LEVELS_MOVED], moved)
    return DONE


@numba.njit(cache=True, nogil=True)
def remove_batch(NI, OB, slots):
    """Unlink removed objects; nodes left empty and childless start their countdown."""
    for i in range(len(slots)):
        obj = slots[i]
        if OB[obj, NODE] < 0:
            continue
        node = detach(NI, OB, obj)
        maybe_start_countdown(NI, node)


@numba.njit(cache=True, nogil=True)
def bounds_of(lo, hi, slots):
    """Bounding box ``(lo, hi)`` of the slots' boxes (one pass; slots must not be empty)."""
    world_lo = lo[slots[0]].copy()
    world_hi = hi[slots[0]].copy()
    for i in range(1, len(slots)):
        s = slots[i]
        for a in range(3):
            world_lo[a] = min(world_lo[a], lo[s, a])
            world_hi[a] = max(world_hi[a], hi[s, a])
    return world_lo, world_hi


@numba.njit(cache=True, nogil=True)
def morton_codes(cf, lo, hi, slots):
    """Morton code of each slot's centre on a 1024-cell grid over the root cube.

    Placing objects in this order sinks neighbours one after another, along the same path.
    """
    code = np.zeros(len(slots), dtype=np.int64)
    scale = 1024.0 / cf[CF_SIDE]
    for i in range(len(slots)):
        s = slots[i]
        c = np.int64(0)
        for axis in range(3):
            centre = (lo[s, axis] + hi[s, axis]) * 0.5
            scaled = (centre - cf[CF_ORIGIN + axis]) * scale
            q = np.int64(min(max(scaled, 0.0), 1023.0))
            for bit in range(10):
                c |= ((q >> bit) & 1) << (3 * bit + axis)
        code[i] = c
    return code


# --------------------------------------------------------------------------- traversal order
@numba.njit(cache=True, nogil=True)
def breadth_first(NI, META):
    """Alive nodes in breadth-first order (parents before children, octants in order)."""
    order = np.empty(META[USED], dtype=np.int64)
    if META[USED] == 0:
        return order[:0]
    order[0] = 0
    head = 0
    tail = 1
    while head < tail:
        node = order[head]
        head += 1
        if NI[node, NCHILD] == 0:
            continue
        for c in range(8):
            child = NI[node, CHILD + c]
            if child >= 0:
                order[tail] = child
                tail += 1
    return order[:tail]


# --------------------------------------------------------------------------- lifespans
@numba.njit(cache=True, nogil=True)
def _prune(NI, META, FREE, node):
    parent = NI[node, PARENT]
    for c in range(8):
        if NI[parent, CHILD + c] == node:
            NI[parent, CHILD + c] = -1
    NI[parent, NCHILD] -= 1
    NI[node, ALIVE] = 0
    NI[node, LIFE_LEFT] = -1
    FREE[META[FREE_TOP]] = node
    META[FREE_TOP] += 1
    META[PRUNED_TOTAL] += 1
    return parent


@numba.njit(cache=True, nogil=True)
def step_lifespans(NI, META, FREE, frames):
    """Advance every countdown by ``frames`` as if stepped one frame at a time.

    A node pruned ``t`` frames into the step may leave its parent empty and childless; the
    parent's countdown then starts at ``t`` (the latest of its children's prunes) and may itself
    expire within the same step. Children are visited before parents so this is exact.
    """
    order = breadth_first(NI, META)
    emptied_at = np.zeros(NI.shape[0], dtype=np.int64)
    handled = np.zeros(NI.shape[0], dtype=np.bool_)
    for k in range(len(order) - 1, 0, -1):
        node = order[k]
        if NI[node, ALIVE] == 0 or handled[node] or NI[node, LIFE_LEFT] < 0:
            continue
        left = NI[node, LIFE_LEFT]
        if left > frames:
            NI[node, LIFE_LEFT] = left - frames
            continue
        when = left
        while True:
            parent = _prune(NI, META, FREE, node)
            emptied_at[parent] = max(emptied_at[parent], when)
            if parent == 0 or NI[parent, COUNT] != 0 or NI[parent, NCHILD] != 0:
                break
            handled[parent] = True
            start = emptied_at[parent]
            if NI[parent, LIFE_MAX] > frames - start:
                NI[parent, LIFE_LEFT] = NI[parent, LIFE_MAX] - (frames - start)
                break
            when = start + NI[parent, LIFE_MAX]
            node = parent


# --------------------------------------------------------------------------- inspection
@numba.njit(cache=True, nogil=True)
def node_columns(NI, OB, order, active, alive_slots):
    """Per-row own count, subtree count and awake flag for the rows in ``order``."""
    n = len(order)
    row_of = np.full(NI.shape[0], -1, dtype=np.int64)
    for r in range(n):
        row_of[order[r]] = r
    own = np.zeros(n, dtype=np.int64)
    subtree = np.zeros(n, dtype=np.int64)
    awake = np.zeros(n, dtype=np.bool_)
    for r in range(n):
        own[r] = NI[order[r], COUNT]
        subtree[r] = own[r]
    for i in range(len(alive_slots)):
        s = alive_slots[i]
        node = OB[s, NODE]
        if node >= 0 and active[s]:
            awake[row_of[node]] = True
    for r in range(n - 1, 0, -1):
        p = row_of[NI[order[r], PARENT]]
        subtree[p] += subtree[r]
        if awake[r]:
            awake[p] = True
    return row_of, own, subtree, awake


@numba.njit(cache=True, nogil=True)
def objects_of(NI, OB, node):
    """Slots in ``node``'s own list."""
    out = np.empty(NI[node, COUNT], dtype=np.int64)
    obj = NI[node, HEAD]
    k = 0
    while obj >= 0 and k < len(out):
        out[k] = obj
        k += 1
        obj = OB[obj, NEXT]
    return out[:k]


# --------------------------------------------------------------------------- validation
@numba.njit(cache=True, nogil=True)
def check_tree(NI, NF, OB, META, ci, cf, lo, hi, alive, pending):
    """Check every structural invariant; returns ``(code, node, slot)`` with code 0 when sound.

    Codes are explained by :data:`CHECK_MESSAGES` in the index module.
    """
    used = META[USED]
    cap = ci[CI_LIFE_CAP]
    keep_in_root = ci[CI_KEEP_IN_ROOT] != 0
    order = breadth_first(NI, META)
    seen = np.zeros(used, dtype=np.bool_)
    for k in range(len(order)):
        node = order[k]
        if seen[node]:
            return 1, node, -1  # reachable twice
        seen[node] = True
        if NI[node, ALIVE] != 1:
            return 2, node, -1  # pruned node still linked
        nchild = 0
        for c in range(8):
            child = NI[node, CHILD + c]
            if child < 0:
                continue
            nchild += 1
            if NI[child, PARENT] != node or NI[child, DEPTH] != NI[node, DEPTH] + 1:
                return 3, child, -1
            for a in range(3):
                if NI[child, IX + a] != 2 * NI[node, IX + a] + ((c >> a) & 1):
                    return 4, child, -1
                if (NF[child, CORE_LO + a] < NF[node, CORE_LO + a]
                        or NF[child, CORE_HI + a] > NF[node, CORE_HI + a]
                        or NF[child, LOOSE_LO + a] < NF[node, LOOSE_LO + a]
                        or NF[child, LOOSE_HI + a] > NF[node, LOOSE_HI + a]
                        or NF[child, LOOSE_LO + a] > NF[child, CORE_LO + a]
                        or NF[child, LOOSE_HI + a] < NF[child, CORE_HI + a]):
                    return 5, child, -1
            if not can_split(ci, cf, NI[node, DEPTH]):
                return 6, node, -1
        if nchild != NI[node, NCHILD]:
            return 7, node, -1
        # own list: linked both ways, count right, every object placed by the rule
        count = 0
        prev = -1
        obj = NI[node, HEAD]
        while obj >= 0:
            if obj >= len(alive) or not alive[obj] or pending[obj]:
                return 8, node, obj
            if OB[obj, NODE] != node or OB[obj, PREV] != prev:
                return 9, node, obj
            count += 1
            if count > NI[node, COUNT]:
                return 10, node, obj
            if not encloses(NF, node, lo[obj], hi[obj]):
                if not (node == 0 and keep_in_root):
                    return 11, node, obj
            elif sinkable(NI, NF, ci, cf, node, lo[obj], hi[obj]):
                if NI[node, NCHILD] != 0 or NI[node, COUNT] != 1:
                    return 12, node, obj
            prev = obj
            obj = OB[obj, NEXT]
        if count != NI[node, COUNT]:
            return 10, node, -1
        left = NI[node, LIFE_LEFT]
        if node > 0:
            if NI[node, COUNT] == 0 and NI[node, NCHILD] == 0 and left < 0:
                return 13, node, -1
            if left >= 0 and (NI[node, COUNT] != 0 or NI[node, NCHILD] != 0):
                return 14, node, -1
            if left > NI[node, LIFE_MAX] or NI[node, LIFE_MAX] > cap \
                    or NI[node, LIFE_MAX] < min(ci[CI_LIFE_INITIAL], cap) \
                    or (left == 0 and NI[node, LIFE_MAX] > 0):
                return 15, node, -1
    for node in range(used):
        if NI[node, ALIVE] == 1 and not seen[node]:
            return 16, node, -1
    for s in range(len(alive)):
        if alive[s] and not pending[s]:
            node = OB[s, NODE]
            if node < 0 or node >= used or not seen[node]:
                return 17, node, s
        elif OB[s, NODE] >= 0:
            return 18, OB[s, NODE], s
    return 0, -1, -1
