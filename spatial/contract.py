"""The contract every spatial-index backend fulfils.

A backend subclasses :class:`SpatialIndex` and implements the underscored hooks. The public
methods here validate input once (ids, finite bounds, flags, modes), keep the shared
:class:`~spatial.objects.ObjectTable` in step, time the work and convert slots back to ids, so
every backend reports errors and results the same way.

Semantics (all backends, checked against :class:`plugins.brute.BruteForce` by the oracle suite):

* Boxes are closed: touching boxes overlap, a point on a face is inside.
* ``query_box/sphere/point/frustum`` return the ids of every object whose box meets the query,
  ascending, together with the work done (nodes visited, objects tested).
* ``query_ray`` returns every hit with its entry distance ``t`` (0 when the origin is inside,
  in multiples of the direction's length), sorted by ``t`` then id, up to ``max_t`` inclusive.
* ``pairs(mode)`` returns every overlapping pair once as ``(a, b)`` with ``a < b``, rows sorted.
  ``mode='all'``: every overlapping pair (the level-analysis view). ``mode='active'``: only pairs
  in which at least one object is dynamic *and* awake (what a game tests each frame).
  ``tests`` counts the candidate pair tests the structure made (a candidate examined in two
  leaves counts twice); ``node_tests`` splits them per row of :meth:`nodes`.
* ``count_pairs(mode)`` returns how many pairs ``pairs(mode)`` would, and the same ``tests``,
  without holding the pairs: a huge level has ~10^8 of them, the count alone is a few bytes.
* A 2D backend partitions on two axes but answers in 3D: it filters its candidates with the
  exact 3D test, so its answers equal the oracle's.
* Batch queries (``query_boxes``, ``query_rays``) return CSR-style results; ids within one query
  are in unspecified order.

Node rows: :meth:`nodes` returns a :class:`NodeTable` (a struct of arrays); ``trace=True`` on a
query reports the rows visited (and, for frusta, the rows culled) in that table's numbering,
valid until the next edit.
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from .errors import GeometryError, IndexInvariantError, ParamError
from .geometry import MAX_COORDINATE, as_boxes, normalize_planes
from .memory_budget import memory_budget_mb, refuse_over_budget
from .objects import ObjectTable
from .params import param_specs, parse_params, validate_params

PAIR_MODES = ("all", "active")


# --------------------------------------------------------------------------- result types
class SlotHits(NamedTuple):
    """What the ``_query_box``, ``_query_sphere`` and ``_query_point`` hooks return (a plain
    tuple in this order works too): object slots, work done, node rows visited when tracing."""

    slots: np.ndarray
    visited: int
    tested: int
    rows: np.ndarray | None = None


class RayHits(NamedTuple):
    """What the ``_query_ray`` hook returns: slots and their entry ``t``, work, rows."""

    slots: np.ndarray
    t: np.ndarray
    visited: int
    tested: int
    rows: np.ndarray | None = None


class FrustumHits(NamedTuple):
    """What the ``_query_frustum`` hook returns: slots, work, rows visited and rows culled."""

    slots: np.ndarray
    visited: int
    tested: int
    rows: np.ndarray | None = None
    culled: np.ndarray | None = None


class PairHits(NamedTuple):
    """What the ``_pairs`` hook returns (a plain tuple in this order works too): the
    overlapping pairs as slots ``(M, 2)``, each once; the box tests made; and the tests per node
    row of :meth:`SpatialIndex.nodes` (or ``None``)."""

    pairs: np.ndarray
    tests: int
    node_tests: np.ndarray | None = None


class PairCount(NamedTuple):
    """What the ``_count_pairs`` hook returns, and :meth:`SpatialIndex.count_pairs`: how many
    distinct overlapping pairs there are, the candidate tests made (as for :class:`PairHits`)
    and the tests per node row (or ``None``)."""

    overlapping: int
    tests: int
    node_tests: np.ndarray | None = None


@dataclass
class QueryResult:
    """Result of one box, sphere, point or frustum query."""

    ids: np.ndarray
    nodes_visited: int
    objects_tested: int
    visited: np.ndarray | None = None  # node rows visited (trace=True only)
    culled: np.ndarray | None = None   # node rows rejected by the query shape (trace=True only)


@dataclass
class RayResult:
    """Every hit of one ray, nearest first."""

    ids: np.ndarray
    t: np.ndarray
    nodes_visited: int
    objects_tested: int
    visited: np.ndarray | None = None


@dataclass
class BatchResult:
    """CSR result of many queries: hits of query ``q`` are ``ids[offsets[q]:offsets[q+1]]``."""

    ids: np.ndarray
    offsets: np.ndarray
    nodes_visited: np.ndarray
    objects_tested: np.ndarray

    def hits(self, q: int) -> np.ndarray:
        return self.ids[self.offsets[q]: self.offsets[q + 1]]


@dataclass
class RayBatchResult:
    """Closest hit of each of many rays: ``ids[q] == -1`` and ``t[q] == inf`` on a miss."""

    ids: np.ndarray
    t: np.ndarray
    nodes_visited: np.ndarray
    objects_tested: np.ndarray


@dataclass
class PairResult:
    """Overlapping pairs ``(M, 2)`` (each once, ``a < b``, rows sorted) and the work it took."""

    pairs: np.ndarray
    tests: int
    node_tests: np.ndarray | None = None


_NODE_COLUMNS = {
    "lo": (np.float64, (3,)), "hi": (np.float64, (3,)),
    "core_lo": (np.float64, (3,)), "core_hi": (np.float64, (3,)),
    "depth": (np.int32, ()), "parent": (np.int32, ()), "is_leaf": (np.bool_, ()),
    "own_count": (np.int32, ()), "subtree_count": (np.int64, ()),
    "lifespan_left": (np.int32, ()), "lifespan_max": (np.int32, ()),
    "awake": (np.bool_, ()), "pair_tests": (np.int64, ()),
}


@dataclass
class NodeTable:
    """The whole tree as a struct of arrays, one row per node, parents before children.

    ``lo``/``hi`` are the bounds used for containment (the *loose* bounds of a loose octree);
    ``core_lo``/``core_hi`` are the tight cell (equal to ``lo``/``hi`` for non-loose trees).
    ``own_count`` counts object references held by the node itself (an object stored in two
    leaves counts in both); ``subtree_count`` counts references in the node and its descendants.
    ``lifespan_left``/``lifespan_max`` are the empty-node countdown (0/0 where it does not apply).
    ``pair_tests`` are the tests made in the node by the latest :meth:`SpatialIndex.pairs` call.
    """

    lo: np.ndarray
    hi: np.ndarray
    core_lo: np.ndarray
    core_hi: np.ndarray
    depth: np.ndarray
    parent: np.ndarray
    is_leaf: np.ndarray
    own_count: np.ndarray
    subtree_count: np.ndarray
    lifespan_left: np.ndarray
    lifespan_max: np.ndarray
    awake: np.ndarray
    pair_tests: np.ndarray

    def __len__(self) -> int:
        return len(self.depth)

    @classmethod
    def empty(cls, n: int = 0) -> NodeTable:
        """A table of ``n`` zeroed rows (``parent`` -1) for a backend to fill."""
        cols: dict[str, np.ndarray] = {}
        for name, (dtype, shape) in _NODE_COLUMNS.items():
            cols[name] = np.zeros((n,) + shape, dtype=dtype)
        cols["parent"][:] = -1
        return cls(**cols)

    @classmethod
    def from_columns(cls, **columns) -> NodeTable:
        """Build a table from the columns given; missing ones are zero-filled, cores = bounds."""
        n = len(columns["depth"])
        table = cls.empty(n)
        for name, values in columns.items():
            if name not in _NODE_COLUMNS:
                raise KeyError(f"unknown node column {name!r}")
            dtype, _ = _NODE_COLUMNS[name]
            setattr(table, name, np.ascontiguousarray(np.asarray(values, dtype=dtype)))
        if "core_lo" not in columns:
            table.core_lo = table.lo.copy()
        if "core_hi" not in columns:
            table.core_hi = table.hi.copy()
        return table


# --------------------------------------------------------------------------- exact geometry
def _id_array(ids, n_expected: int | None, what: str) -> np.ndarray:
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    if n_expected is not None and len(ids) != n_expected:
        raise GeometryError(f"{what}: {len(ids)} ids for {n_expected} rows")
    # sorted neighbours rather than np.unique, whose hash table is many times slower on the
    # millions of already ascending ids of a mesh
    ordered = np.sort(ids)
    if len(ordered) > 1 and (ordered[1:] == ordered[:-1]).any():
        raise GeometryError(f"{what}: ids must be unique")
    return ids


def _points(values, n: int, dims: int, what: str) -> np.ndarray:
    arr = np.ascontiguousarray(np.asarray(values, dtype=np.float64).reshape(-1, dims))
    if len(arr) != n:
        raise GeometryError(f"{what}: expected {n} rows of {dims} numbers, got {len(arr)}")
    in_range = np.abs(arr) <= MAX_COORDINATE  # false for NaN and ±inf too
    if not in_range.all():
        row = int(np.flatnonzero(~in_range.all(axis=1))[0])
        if np.isfinite(arr[row]).all():
            raise GeometryError(f"{what}[{row}]: coordinates must lie within ±{MAX_COORDINATE:g}, "
                                f"got {arr[row].tolist()}")
        raise GeometryError(f"{what}[{row}]: coordinates must be finite, got {arr[row].tolist()}")
    return arr


@dataclass
class Segments:
    """Wall segments offered with :meth:`SpatialIndex.set_segments` (2D endpoints, by id)."""

    ids: np.ndarray
    a: np.ndarray
    b: np.ndarray
    two_sided: np.ndarray

    @classmethod
    def empty(cls) -> Segments:
        return cls(np.empty(0, np.int64), np.empty((0, 2)), np.empty((0, 2)), np.empty(0, bool))

    @classmethod
    def of(cls, ids, a, b, two_sided=None) -> Segments:
        ids = _id_array(ids, None, "segments")
        n = len(ids)
        flags = (np.zeros(n, dtype=bool) if two_sided is None
                 else np.asarray(two_sided, dtype=bool).reshape(-1))
        if len(flags) != n:
            raise GeometryError(f"segments: {len(flags)} two_sided flags for {n} segments")
        return cls(ids, _points(a, n, 2, "segment a"), _points(b, n, 2, "segment b"), flags)

    def __len__(self) -> int:
        return len(self.ids)


@dataclass
class Triangles:
    """Triangles offered with :meth:`SpatialIndex.set_triangles` (3D corners, by id)."""

    ids: np.ndarray
    v0: np.ndarray
    v1: np.ndarray
    v2: np.ndarray

    @classmethod
    def empty(cls) -> Triangles:
        z = np.empty((0, 3))
        return cls(np.empty(0, np.int64), z, z.copy(), z.copy())

    @classmethod
    def of(cls, ids, v0, v1, v2) -> Triangles:
        ids = _id_array(ids, None, "triangles")
        n = len(ids)
        return cls(ids, _points(v0, n, 3, "triangle v0"), _points(v1, n, 3, "triangle v1"),
                   _points(v2, n, 3, "triangle v2"))

    def __len__(self) -> int:
        return len(self.ids)


# --------------------------------------------------------------------------- the contract
class SpatialIndex:
    """Base class of every backend. See the module docstring for the semantics.

    Subclasses set the class attributes and implement the ``_hooks``. ``_insert``, ``_remove``
    and ``_update`` receive *slots* into ``self.objects`` (already updated: bounds written on
    insert/update; on remove, the slots are already freed but still hold the old bounds).
    Queries receive validated arrays and return slots; the base class maps them to ids.
    """

    name: ClassVar[str] = ""
    dims: ClassVar[int] = 3
    description: ClassVar[str] = ""
    Params: ClassVar[type]
    #: children per inner node, for the ideal depth in stats (8 octree, 4 quadtree, 2 binary)
    branching: ClassVar[int] = 2
    #: ``source_format`` values of the document metadata this backend needs to show its real
    #: structure (e.g. a Doom map's shipped nodes); empty: it works on any level. Editors offer
    #: such a backend only for documents from those sources (:meth:`suits_source`).
    source_formats: ClassVar[tuple[str, ...]] = ()

    def __init__(self, params: Any = None, **overrides: Any):
        if params is None:
            params = self.Params()
        elif isinstance(params, dict):
            params = parse_params(self.Params, params)
        elif not isinstance(params, self.Params):
            raise ParamError(type(params).__name__,
                             f"{self.name} expects {self.Params.__name__}, got {type(params).__name__}")
        if overrides:
            params = parse_params(self.Params, overrides, base=params)
        self.params = validate_params(params)
        self.objects = ObjectTable(self.dims)
        self.frame = 0
        self.build_ms = 0.0
        self.update_ms = 0.0
        self._last_node_tests: np.ndarray | None = None
        self.split_planes = np.empty((0, 4))
        self.segments = Segments.empty()
        self.triangles = Triangles.empty()
        self.source: dict = {}
        self._setup()

    # ---------------------------------------------------------------- hooks to implement
    def _setup(self) -> None:
        """Initialise empty structure (called by ``__init__`` and before every ``build``)."""

    def _build(self, slots: np.ndarray) -> None:
        raise NotImplementedError

    def _insert(self, slots: np.ndarray) -> None:
        raise NotImplementedError

    def _remove(self, slots: np.ndarray) -> None:
        raise NotImplementedError

    def _update(self, slots: np.ndarray) -> None:
        raise NotImplementedError

    def _set_awake(self, slots: np.ndarray) -> None:
        """Flags already written to ``self.objects.awake``; refresh derived node state."""

    def _step(self, frames: int) -> None:
        """Advance per-frame bookkeeping (lifespans) by ``frames``."""

    def _flush(self) -> None:
        """Apply deferred work (e.g. a lazy insertion batch) before a query or inspection."""

    def _query_box(self, lo, hi, trace):  # -> SlotHits (slots, visited, tested, rows|None)
        raise NotImplementedError

    def _query_sphere(self, center, radius, trace):
        raise NotImplementedError

    def _query_point(self, point, trace):
        return self._query_box(point, point, trace)

    def _query_ray(self, origin, direction, max_t, trace):  # -> RayHits
        raise NotImplementedError

    def _query_frustum(self, planes, trace):  # -> FrustumHits
        raise NotImplementedError

    def _pairs(self, mode: str):  # -> PairHits
        raise NotImplementedError

    def _count_pairs(self, mode: str) -> PairCount:
        """The number of pairs ``_pairs(mode)`` returns. This default materialises them;
        backends whose pair kernel can count instead of write override it."""
        pairs, tests, node_tests = self._pairs(mode)
        return PairCount(len(pairs), int(tests), node_tests)

    def _nodes(self) -> NodeTable:
        raise NotImplementedError

    def _node_objects(self, row: int) -> np.ndarray:
        """Slots stored in node ``row`` itself."""
        raise NotImplementedError

    def _validate(self) -> None:
        raise NotImplementedError

    def _leaf_capacity(self) -> float:
        """Objects a leaf is meant to hold, for the ideal depth (1 unless a bucket size)."""
        return 1.0

    def _memory_bytes(self) -> int:
        """Estimate of the structure's own memory (not the shared object table)."""
        return 0

    def _extra_stats(self) -> dict:
        return {}

    # ---------------------------------------------------------------- edits
    def build(self, ids, lo, hi, dynamic=None, awake=None) -> None:
        """Replace the whole content with these objects and build the structure eagerly."""
        table = ObjectTable(self.dims)
        slots = table.add(ids, lo, hi, dynamic, awake)
        # refused before the index lets go of its current content
        rows = slice(0, len(slots)) if len(slots) == table.slot_limit else slots  # no copy
        self.check_memory_budget(self.params, table.lo[rows], table.hi[rows])
        self.objects = table
        self._setup()
        start = time.perf_counter()
        self._build(slots)
        self._flush()
        self.build_ms = (time.perf_counter() - start) * 1e3

    def insert(self, ids, lo, hi, dynamic=None, awake=None) -> None:
        """Add objects (ids must be new). Flags default to dynamic and awake."""
        slots = self.objects.add(ids, lo, hi, dynamic, awake)
        if len(slots):
            self._timed_update(self._insert, slots)

    def remove(self, ids) -> None:
        """Remove objects by id."""
        slots = self.objects.remove(ids)
        if len(slots):
            self._timed_update(self._remove, slots)

    def update(self, ids, lo, hi) -> None:
        """Move or resize existing objects, incrementally."""
        slots = self.objects.slots_of(ids)
        lo, hi = self.objects.check_bounds(lo, hi, len(slots))
        if len(slots) == 0:
            return
        self.objects.lo[slots] = lo
        self.objects.hi[slots] = hi
        self._timed_update(self._update, slots)

    def set_awake(self, ids, flags) -> None:
        """Set the awake flag of objects (only dynamic objects use it)."""
        slots = self.objects.slots_of(ids)
        flags = ObjectTable._flags(flags, len(slots), True, "awake")
        self.objects.awake[slots] = flags
        if len(slots):
            self._set_awake(slots)

    def step(self, frames: int = 1) -> None:
        """Advance the clock: empty-node lifespans count down by ``frames``."""
        if int(frames) != frames or frames < 0:
            raise ParamError("frames", f"must be a whole number >= 0, got {frames!r}")
        self._flush()
        self.frame += int(frames)
        self._step(int(frames))

    def _timed_update(self, hook, slots) -> None:
        start = time.perf_counter()
        hook(slots)
        self.update_ms = (time.perf_counter() - start) * 1e3

    def set_split_planes(self, planes) -> None:
        """Offer planes of the scene's own geometry (e.g. brush faces) as split candidates.

        ``planes`` is ``(K, 4)`` rows ``(nx, ny, nz, d)`` with ``n . p + d = 0`` on the plane.
        Backends that choose splits from geometry (BSP) use them at the next build and rebuild
        now; every other backend ignores them. An empty array withdraws the offer.
        """
        planes = np.asarray(planes, dtype=np.float64).reshape(-1, 4)
        self.split_planes = normalize_planes(planes) if len(planes) else planes
        self._split_planes_changed()

    def _split_planes_changed(self) -> None:
        """Hook: backends that use split planes rebuild here."""

    def set_segments(self, ids, a, b, two_sided=None) -> None:
        """Offer the exact wall segments of a 2D level (e.g. Doom linedefs) behind some ids.

        ``a``, ``b`` are ``(N, 2)`` endpoints on the partition plane's two axes; the front of a
        segment is on its right, looking from ``a`` to ``b`` (Doom's convention); a two-sided
        segment (``two_sided[i]``) faces both ways. Backends that split geometry exactly (the
        BSP with ``leaf="convex"``) use them at the next build and rebuild now; every other
        backend ignores them. Queries still answer on the objects' boxes. Empty arrays withdraw
        the offer.
        """
        self.segments = Segments.of(ids, a, b, two_sided)
        self._segments_changed()

    def _segments_changed(self) -> None:
        """Hook: backends that use segments rebuild here."""

    def set_triangles(self, ids, v0, v1, v2) -> None:
        """Offer the exact triangles behind some ids (a mesh: one triangle per object).

        ``v0``, ``v1``, ``v2`` are ``(N, 3)`` corners. A triangle backend stores each one in
        the cells it truly intersects; every other backend ignores them. Empty arrays withdraw
        the offer.
        """
        self.triangles = Triangles.of(ids, v0, v1, v2)
        self._triangles_changed()

    def _triangles_changed(self) -> None:
        """Hook: backends that use triangles rebuild here."""

    def set_source(self, metadata: dict) -> None:
        """Offer the document's source description: the importer's metadata (``source_format``,
        the file and part it came from, ...). Backends that read a structure the level file
        itself ships (a Doom map's NODES) use it at the next build; every other backend ignores
        it. An empty dict withdraws the offer."""
        self.source = dict(metadata)
        self._source_changed()

    def _source_changed(self) -> None:
        """Hook: backends that read the level's own structure reload it here."""

    @classmethod
    def suits_source(cls, metadata: dict) -> bool:
        """True when this backend shows its real structure for a document with ``metadata``."""
        return not cls.source_formats or metadata.get("source_format") in cls.source_formats

    def set_params(self, params: Any = None, **overrides: Any) -> None:
        """Change parameters and rebuild from the current objects (flags kept)."""
        if params is None:
            params = self.params
        elif isinstance(params, dict):
            params = parse_params(self.Params, params, base=self.params)
        if overrides:
            params = parse_params(self.Params, overrides, base=params)
        params = validate_params(params)
        if self.objects.count:  # refused before anything changes (the index keeps its params)
            slots = self.objects.alive_slots()
            self.check_memory_budget(params, self.objects.lo[slots], self.objects.hi[slots])
        self.params = params
        self.rebuild()

    # ---------------------------------------------------------------- memory
    @classmethod
    def worst_case_bytes(cls, params: Any, lo: np.ndarray, hi: np.ndarray) -> float | None:
        """An upper bound, in bytes, of what an index with ``params`` over these boxes can take.

        Backends whose structure can outgrow memory for some in-range parameters override
        this from their own growth rules (see :mod:`spatial.memory_budget`); None states no
        bound, and nothing is refused.

        Parameters
        ----------
        params : the backend's Params
        lo, hi : ndarray, shape (N, 3)
            The boxes to be indexed.
        """
        return None

    @classmethod
    def check_memory_budget(cls, params: Any, lo, hi, budget_mb: int | None = None) -> None:
        """Refuse ``params`` when :meth:`worst_case_bytes` exceeds the memory budget.

        Parameters
        ----------
        params : the backend's Params
        lo, hi : array_like, shape (N, 3)
            The boxes to be indexed.
        budget_mb : int, optional
            Megabytes allowed (default: :func:`spatial.memory_budget.memory_budget_mb`).

        Raises
        ------
        spatial.memory_budget.MemoryBudgetError
            One line naming the backend, its parameters, the estimate and the budget.
        """
        if budget_mb is None:
            budget_mb = memory_budget_mb()
        if budget_mb is None:
            return
        lo = np.asarray(lo, dtype=np.float64).reshape(-1, 3)
        hi = np.asarray(hi, dtype=np.float64).reshape(-1, 3)
        estimate = cls.worst_case_bytes(params, lo, hi)
        if estimate is None:
            return
        text = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                         for k, v in dataclasses.asdict(params).items())
        refuse_over_budget(cls.name, text, len(lo), float(estimate), budget_mb)

    def rebuild(self) -> None:
        """Rebuild the structure from scratch with the current objects and flags."""
        self._flush()
        slots = self.objects.alive_slots()
        obj = self.objects
        self.build(obj.ids[slots], obj.lo[slots], obj.hi[slots], obj.dynamic[slots], obj.awake[slots])

    # ---------------------------------------------------------------- queries
    def __len__(self) -> int:
        return self.objects.count

    def _ids(self, slots) -> np.ndarray:
        return self.objects.ids[np.asarray(slots, dtype=np.int64)]

    def _sorted_ids(self, slots) -> np.ndarray:
        return np.sort(self._ids(slots))

    @staticmethod
    def _point(p, what: str) -> np.ndarray:
        p = np.asarray(p, dtype=np.float64).reshape(-1)
        if p.shape != (3,) or not np.isfinite(p).all():
            raise GeometryError(f"{what} must be 3 finite numbers, got {p.tolist()}")
        return p

    def query_box(self, lo, hi, trace: bool = False) -> QueryResult:
        """Ids of objects whose boxes overlap the closed box ``[lo, hi]``."""
        lo, hi = as_boxes(lo, hi, what="query box")
        self._flush()
        slots, visited, tested, rows = self._query_box(lo[0], hi[0], trace)
        return QueryResult(self._sorted_ids(slots), int(visited), int(tested), rows)

    def query_sphere(self, center, radius, trace: bool = False) -> QueryResult:
        """Ids of objects whose boxes touch the closed sphere."""
        center = self._point(center, "sphere center")
        radius = float(radius)
        if not (math.isfinite(radius) and radius >= 0):
            raise GeometryError(f"sphere radius must be finite and >= 0, got {radius}")
        self._flush()
        slots, visited, tested, rows = self._query_sphere(center, radius, trace)
        return QueryResult(self._sorted_ids(slots), int(visited), int(tested), rows)

    def query_point(self, point, trace: bool = False) -> QueryResult:
        """Ids of objects whose closed boxes contain the point."""
        point = self._point(point, "point")
        self._flush()
        slots, visited, tested, rows = self._query_point(point, trace)
        return QueryResult(self._sorted_ids(slots), int(visited), int(tested), rows)

    def query_ray(self, origin, direction, max_t: float = math.inf, trace: bool = False) -> RayResult:
        """Every box the ray ``origin + t * direction`` (``0 <= t <= max_t``) meets, nearest first."""
        origin = self._point(origin, "ray origin")
        direction = self._point(direction, "ray direction")
        if not direction.any():
            raise GeometryError("ray direction must not be zero")
        max_t = float(max_t)
        if math.isnan(max_t) or max_t < 0:
            raise GeometryError(f"ray max_t must be >= 0, got {max_t}")
        self._flush()
        slots, t, visited, tested, rows = self._query_ray(origin, direction, max_t, trace)
        ids = self._ids(slots)
        t = np.asarray(t, dtype=np.float64)
        order = np.lexsort((ids, t))
        return RayResult(ids[order], t[order], int(visited), int(tested), rows)

    def query_frustum(self, planes, trace: bool = False) -> QueryResult:
        """Objects not entirely outside any of the (inward-facing) planes."""
        planes = normalize_planes(planes)
        self._flush()
        slots, visited, tested, rows, culled = self._query_frustum(planes, trace)
        return QueryResult(self._sorted_ids(slots), int(visited), int(tested), rows, culled)

    def query_boxes(self, lo, hi) -> BatchResult:
        """Many box queries at once (CSR result). Backends override this with a fused kernel."""
        lo, hi = as_boxes(lo, hi, what="query boxes")
        self._flush()
        return self._query_boxes(lo, hi)

    def _query_boxes(self, lo, hi) -> BatchResult:
        parts, offsets, visited, tested = [], [0], [], []
        for q in range(len(lo)):
            slots, v, t, _ = self._query_box(lo[q], hi[q], False)
            parts.append(self._ids(slots))
            offsets.append(offsets[-1] + len(slots))
            visited.append(v)
            tested.append(t)
        ids = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
        return BatchResult(ids, np.asarray(offsets, dtype=np.int64),
                           np.asarray(visited, dtype=np.int64), np.asarray(tested, dtype=np.int64))

    def query_rays(self, origins, directions, max_t: float = math.inf) -> RayBatchResult:
        """Closest hit of each ray (ties broken by the smaller id)."""
        origins = np.ascontiguousarray(np.asarray(origins, dtype=np.float64).reshape(-1, 3))
        directions = np.ascontiguousarray(np.asarray(directions, dtype=np.float64).reshape(-1, 3))
        if origins.shape != directions.shape:
            raise GeometryError("origins and directions must have the same shape")
        if not (np.isfinite(origins).all() and np.isfinite(directions).all()):
            raise GeometryError("ray origins and directions must be finite")
        if len(directions) and not directions.any(axis=1).all():
            raise GeometryError(f"ray {int(np.flatnonzero(~directions.any(axis=1))[0])} has a zero direction")
        if math.isnan(max_t) or max_t < 0:
            raise GeometryError(f"ray max_t must be >= 0, got {max_t}")
        self._flush()
        return self._query_rays(origins, directions, float(max_t))

    def _query_rays(self, origins, directions, max_t) -> RayBatchResult:
        q = len(origins)
        ids = np.full(q, -1, dtype=np.int64)
        ts = np.full(q, np.inf)
        visited = np.zeros(q, dtype=np.int64)
        tested = np.zeros(q, dtype=np.int64)
        for i in range(q):
            slots, t, v, n, _ = self._query_ray(origins[i], directions[i], max_t, False)
            visited[i], tested[i] = v, n
            if len(slots):
                hit_ids = self._ids(slots)
                order = np.lexsort((hit_ids, np.asarray(t)))
                ids[i] = hit_ids[order[0]]
                ts[i] = np.asarray(t)[order[0]]
        return RayBatchResult(ids, ts, visited, tested)

    def pairs(self, mode: str = "all", sort: bool = True) -> PairResult:
        """Every overlapping pair once as ids ``(a, b)`` with ``a < b``; see the module docstring.

        With ``sort`` (the default) rows are in ascending order, so results compare directly;
        a per-frame caller that only consumes the pairs may pass ``sort=False`` to skip it.
        """
        if mode not in PAIR_MODES:
            raise ParamError("mode", f"expected one of {', '.join(PAIR_MODES)}, got {mode!r}")
        self._flush()
        pairs, tests, node_tests = self._pairs(mode)
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        if len(pairs):
            # A big level has tens of millions of pairs: the rows are ordered and sorted in
            # place, with one key column as the only extra array (a few bytes per pair more
            # than the answer itself, where temporaries used to take five times its size).
            ids = self.objects.ids[pairs]
            del pairs
            low, high = ids[:, 0], ids[:, 1]
            swap = np.flatnonzero(low > high)
            low[swap], high[swap] = high[swap], low[swap]
            del swap
            if sort:
                # ids are below 2**27 (MAX_ID), so one int64 key sorts rows far faster than lexsort
                key = np.left_shift(low, 27)
                key |= high
                key.sort()
                np.right_shift(key, 27, out=low)
                np.bitwise_and(key, (1 << 27) - 1, out=high)
                del key
        else:
            ids = np.empty((0, 2), dtype=np.int64)
        self._last_node_tests = node_tests
        return PairResult(ids, int(tests), node_tests)

    def count_pairs(self, mode: str = "all") -> PairCount:
        """How many pairs :meth:`pairs` would return in ``mode``, without building the list.

        For statistics (the ``stats`` command, the editor's Statistics panel): the answer and
        ``tests`` equal ``len(pairs(mode).pairs)`` and ``pairs(mode).tests``, while memory stays
        that of the index (a 2-million-triangle mesh has about 10^8 pairs, gigabytes as a list).

        Parameters
        ----------
        mode : {'all', 'active'}
            As for :meth:`pairs`.

        Returns
        -------
        PairCount
            ``overlapping`` distinct overlapping pairs, ``tests`` candidate tests, ``node_tests`` the
            tests per row of :meth:`nodes` (or ``None``).
        """
        if mode not in PAIR_MODES:
            raise ParamError("mode", f"expected one of {', '.join(PAIR_MODES)}, got {mode!r}")
        self._flush()
        overlapping, tests, node_tests = self._count_pairs(mode)
        self._last_node_tests = node_tests
        return PairCount(int(overlapping), int(tests), node_tests)

    # ---------------------------------------------------------------- inspection
    def nodes(self) -> NodeTable:
        """The whole tree as a struct of arrays (see :class:`NodeTable`)."""
        self._flush()
        table = self._nodes()
        if self._last_node_tests is not None and len(self._last_node_tests) == len(table):
            table.pair_tests = np.asarray(self._last_node_tests, dtype=np.int64)
        return table

    def node_objects(self, row: int) -> np.ndarray:
        """Ids stored in node ``row`` of :meth:`nodes` itself (not its descendants)."""
        self._flush()
        return self._sorted_ids(self._node_objects(int(row)))

    def stats(self, table: NodeTable | None = None) -> dict:
        """Size and shape of the structure: nodes, leaves, depth vs ideal, references, memory.

        ``table``: this index's :meth:`nodes` as it is now, when the caller has just read it
        (a big tree's table takes a second to read again)."""
        if table is None:
            table = self.nodes()
        n = self.objects.count
        leaves = int(table.is_leaf.sum()) if len(table) else 0
        cap = max(self._leaf_capacity(), 1.0)
        ideal = math.ceil(math.log(max(n / cap, 1.0), self.branching)) if n else 0
        obj = self.objects
        out = {
            "backend": self.name,
            "objects": int(n),
            "nodes": int(len(table)),
            "leaves": leaves,
            "max_depth": int(table.depth.max()) if len(table) else 0,
            "ideal_depth": int(ideal),
            "references": int(table.own_count.sum()) if len(table) else 0,
            "memory_bytes": int(self._memory_bytes()),
            "object_table_bytes": int(obj.lo.nbytes + obj.hi.nbytes + obj.ids.nbytes
                                      + obj.dynamic.nbytes + obj.awake.nbytes + obj.alive.nbytes),
            "build_ms": round(self.build_ms, 3),
            "update_ms": round(self.update_ms, 3),
        }
        out.update(self._extra_stats())
        return out

    def validate(self) -> None:
        """Raise :class:`IndexInvariantError` if any invariant of the structure is broken."""
        self._flush()
        obj = self.objects
        alive = obj.alive_slots()
        if len(alive) != obj.count:
            raise IndexInvariantError(f"object table count {obj.count} != {len(alive)} alive slots")
        if len(alive):
            back = obj._slot_by_id[obj.ids[alive]]
            if not np.array_equal(back, alive):
                raise IndexInvariantError("object id map does not point back to its slots")
        self._validate()

    @classmethod
    def param_specs(cls):
        """The :class:`~spatial.params.ParamSpec` of every parameter of this backend."""
        return param_specs(cls.Params)

    def describe_params(self) -> dict:
        return dataclasses.asdict(self.params)
