"""A common face for our backends and the peer libraries, so one loop times them all.

Every adapter turns the same numpy inputs into the implementation's own calls and returns plain
arrays. What a user of that implementation would have to do to get the answer (build the
library's objects from numpy arrays, filter a superset of candidate pairs, map the library's
handles back to ids) is part of the timed work; checking the answers is not.

Operations (see ``benchmarks/README.md``):

``build``   construct the structure from ``ids, lo, hi`` arrays (the runner adds ``ready``)
``ready``   answer one small box query: whatever a backend defers to its first query
            (a packed query copy, a lazy commit) is done by then
``pairs``   every overlapping pair once (closed overlap), ``(M, 2)`` with ``a < b``
``oneshot`` build a fresh structure from arrays and report every pair, as one call
``box``     batch box queries, CSR ``(ids, counts)``
``ray``     closest hit of each ray, ``(ids, t)`` with ``-1``/``inf`` on a miss
``update``  move some objects incrementally (the runner adds ``ready``)
``rebuild`` rebuild from the current objects (our backends; a peer's rebuild is its build)
``frame``   one frame: move 10 %, update, report every pair, cast a batch of closest-hit rays
"""
from __future__ import annotations

import numpy as np

OPERATIONS = ("build", "pairs", "oneshot", "box", "ray", "update", "rebuild", "frame")


class NotSupported(Exception):
    """The implementation cannot express this operation (reported as n/a with the reason)."""


class Adapter:
    """One implementation under test. Subclasses override the operations they support.

    ``exact`` is True when ``pairs``/``box`` answer exactly the closed-overlap set, so their
    counts must agree with every other exact implementation. ``rebuilds_per_frame`` marks
    static structures whose ``frame`` rebuilds instead of updating.
    """

    label: str = ""
    family: str = "peer"  # "ours" or "peer"
    exact: bool = True
    rebuilds_per_frame: bool = False
    #: False once a frame found no ray query to call (its frames then time pairs alone)
    frame_casts_rays: bool = True

    def build(self, ids: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        raise NotSupported("no build")

    def pairs(self) -> np.ndarray:
        raise NotSupported("no pair query")

    def oneshot(self, ids: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Every overlapping pair of a scene given as arrays, from a fresh structure.

        What a build pipeline does once. The default builds and then asks for the pairs. An
        override may take a cheaper path but must leave the adapter as ``build(ids, lo, hi)``
        would: the runner goes on with box and ray queries on it.
        """
        if type(self).pairs is Adapter.pairs:
            raise NotSupported("no pair query")  # before building: do not time a useless build
        self.build(ids, lo, hi)
        return self.pairs()

    def query_boxes(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotSupported("no box query")

    def ready(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Answer the small box query ``lo, hi`` (one row): the moment a user can query.

        Timed as the end of ``build``, ``update`` and ``rebuild``, so work a structure defers
        to its first query (a packed query copy, a lazy commit) is counted where it is paid.
        """
        self.query_boxes(lo, hi)

    def query_rays(self, origins: np.ndarray, directions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotSupported("no ray query")

    def update(self, index: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        """Move objects ``ids[index]`` to the new bounds."""
        raise NotSupported("no incremental update")

    def rebuild(self) -> None:
        raise NotSupported("rebuild is its build")

    def frame(self, index: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              origins: np.ndarray | None = None, directions: np.ndarray | None = None) -> np.ndarray:
        """One frame: apply the move, report every pair, then cast the rays (closest hit).

        An implementation without a ray query times the rest and clears
        ``frame_casts_rays`` (the report marks its frames).
        """
        self.update(index, lo, hi)
        pairs = self.pairs()
        self._frame_rays(origins, directions)
        return pairs

    def _frame_rays(self, origins, directions) -> None:
        if origins is None or not len(origins):
            return
        try:
            self.query_rays(origins, directions)
        except NotSupported:
            self.frame_casts_rays = False

    def memory(self) -> int | None:
        """Bytes the implementation itself reports for its structure, if it reports any."""
        return None

    def close(self) -> None:
        """Drop the structure (lets the next implementation start with the memory freed)."""


class OurBackend(Adapter):
    """A backend from ``spatial.registry`` driven through its public ``SpatialIndex`` API."""

    family = "ours"

    def __init__(self, name: str, cls: type):
        self.label = name
        self.cls = cls
        self.index = None
        self.ids = None

    def build(self, ids, lo, hi):
        self.ids = ids
        self.index = self.cls()
        self.index.build(ids, lo, hi)

    def pairs(self):
        return self.index.pairs("all").pairs

    def query_boxes(self, lo, hi):
        result = self.index.query_boxes(lo, hi)
        return result.ids, np.diff(result.offsets)

    def query_rays(self, origins, directions):
        result = self.index.query_rays(origins, directions)
        return result.ids, result.t

    def update(self, index, lo, hi):
        self.index.update(self.ids[index], lo, hi)
        # A backend may defer work to the next query (lazy batches); step(0) flushes it without
        # advancing the clock, so the update is timed with all of its work.
        self.index.step(0)

    def rebuild(self):
        self.index.rebuild()

    def memory(self):
        stats = self.index.stats()
        return int(stats["memory_bytes"]) + int(stats["object_table_bytes"])

    def array_bytes(self) -> int:
        """Bytes of every numpy array the index holds (see :func:`held_array_bytes`)."""
        return held_array_bytes(self.index)

    def close(self):
        self.index = None


def held_array_bytes(root, depth: int = 4) -> int:
    """Bytes of the distinct numpy arrays reachable from ``root``'s attributes, tuples, lists
    and dicts (``depth`` levels deep), views counted once through their base.

    What the index's own arrays occupy, whatever its backend reports about itself; memory
    outside numpy arrays (Python objects, numba-compiled closures) is not included.
    """
    seen: set[int] = set()
    total = 0

    def visit(value, level):
        nonlocal total
        if isinstance(value, np.ndarray):
            base = value
            while isinstance(base.base, np.ndarray):
                base = base.base
            if id(base) not in seen:
                seen.add(id(base))
                total += base.nbytes
            return
        if level <= 0 or isinstance(value, (str, bytes, int, float, bool, type(None))):
            return
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, (list, tuple, set, frozenset)):
            children = value
        elif hasattr(value, "__dict__"):
            children = vars(value).values()
        else:
            return
        for child in children:
            visit(child, level - 1)

    visit(root, depth)
    return total


def our_adapters() -> tuple[list[Adapter], dict[str, str]]:
    """Adapters for every registered backend, and the plugins that failed to load.

    Whatever backends are registered when the benchmark starts are measured (the runner limits
    the quadratic ``brute`` oracle to small N, where it cross-checks the answers).
    """
    from spatial.registry import default_registry

    registry = default_registry()
    adapters = []
    for name, cls in sorted(registry.backends.items()):
        adapters.append(OurBackend(name, cls))
    # A module without register() is a helper of another plugin, not a failed plugin.
    failures = {p.name: p.error for p in registry.failures if "no register(" not in p.error}
    return adapters, failures
