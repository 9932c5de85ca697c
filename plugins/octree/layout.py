"""Column layout of the octree's pooled node and object arrays.

The tree lives in a few flat numpy arrays (a struct of arrays) so compiled kernels can edit it
without Python objects: one ``int64`` row and one ``float64`` row per node, and one ``int64``
row per object slot. Node 0 is always the root. The constants below name the columns; numba
treats module-level integers as compile-time constants.
"""
from __future__ import annotations

# ---- node integer columns (NI) ------------------------------------------------------------
IX = 0          # IX, IX+1, IX+2: integer cell coordinates at the node's depth
DEPTH = 3
PARENT = 4      # -1 for the root
NCHILD = 5      # number of existing children
HEAD = 6        # first object slot of the node's own list (-1: empty)
COUNT = 7       # objects in the node's own list
LIFE_LEFT = 8   # frames left in the empty-node countdown; -1 when no countdown runs
LIFE_MAX = 9    # lifespan the next countdown starts from (doubles when a node is reused)
ALIVE = 10      # 1 while the node is in the tree, 0 once pruned (slot on the free list)
CHILD = 11      # CHILD .. CHILD+7: child node per octant (bit a of the octant = upper half on axis a)
NI_COLUMNS = 19

# ---- node float columns (NF) --------------------------------------------------------------
CORE_LO = 0     # tight cell
CORE_HI = 3
LOOSE_LO = 6    # containment bounds: centre -/+ looseness * half side, clamped into the parent's
LOOSE_HI = 9
NF_COLUMNS = 12

# ---- object columns (OB), one row per object slot -----------------------------------------
NODE = 0        # node holding the object, -1 when not in the tree (pending or removed)
NEXT = 1        # doubly linked list of a node's own objects
PREV = 2
OB_COLUMNS = 3

# ---- tree-wide scalars (META, int64) ------------------------------------------------------
USED = 0            # node rows ever used (high-water mark)
FREE_TOP = 1        # entries on the free-node stack
PRUNED_TOTAL = 2    # nodes pruned by expired countdowns since the last build
LEVELS_MOVED = 3    # levels climbed plus sunk by the latest update batch
MAX_LEVELS_MOVED = 4
META_SIZE = 8

# ---- configuration passed to kernels ------------------------------------------------------
# float config (CF): root origin (3), root side, looseness, min_size
CF_ORIGIN = 0
CF_SIDE = 3
CF_LOOSENESS = 4
CF_MIN_SIZE = 5
CF_SIZE = 6
# int config (CI): max_depth, initial lifespan, lifespan cap, keep_in_root flag
CI_MAX_DEPTH = 0
CI_LIFE_INITIAL = 1
CI_LIFE_CAP = 2
CI_KEEP_IN_ROOT = 3
CI_SIZE = 4
