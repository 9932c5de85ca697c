"""Where two partitions of one level differ: per region and per object.

* :func:`region_grid` sums one kind of work over a grid of regions of the level's top (x, y)
  plane: ``query_visits`` (nodes visited by the boxes and rays of the shared query set, each
  counted in the region of its centre or origin) or ``pair_tests`` (candidate pair tests made in
  each node by ``pairs('all')``, counted in the region of the node's centre). A minus B of two
  such grids is the difference heatmap.
* :func:`object_nodes` counts the nodes holding each object (an object stored in 14 octree
  cells counts 14); :func:`costliest_objects` lists the objects whose count differs most
  between the sides ("this brush is in 14 octree nodes and 2 bvh nodes").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatial.contract import SpatialIndex

from .queries import QuerySet

DEFAULT_CELLS = 32
REGION_METRICS = ("query_visits", "pair_tests")


@dataclass
class RegionGrid:
    """Work per region: ``values[i, j]`` covers x in ``x_edges[i:i+2]``, y in ``y_edges[j:j+2]``."""

    values: np.ndarray
    x_edges: np.ndarray
    y_edges: np.ndarray
    metric: str

    def minus(self, other: RegionGrid) -> RegionGrid:
        """This grid minus ``other`` (the same regions)."""
        return RegionGrid(self.values - other.values, self.x_edges, self.y_edges, self.metric)


def _grid(points: np.ndarray, weights: np.ndarray, lo, hi, cells: int) -> tuple:
    x_edges = np.linspace(lo[0], hi[0], cells + 1)
    y_edges = np.linspace(lo[1], hi[1], cells + 1)
    values, _, _ = np.histogram2d(points[:, 0], points[:, 1], bins=[x_edges, y_edges],
                                  weights=weights) if len(points) else \
        (np.zeros((cells, cells)), None, None)
    return values, x_edges, y_edges


def region_grid(index: SpatialIndex, queries: QuerySet, lo, hi, metric: str = "query_visits",
                cells: int = DEFAULT_CELLS) -> RegionGrid:
    """Work of ``index`` per region of ``[lo, hi]`` (see the module docstring).

    ``pair_tests`` runs ``pairs('all')`` on the index (it fills the node table's column).
    """
    if metric not in REGION_METRICS:
        raise ValueError(f"unknown region metric {metric!r}; choose from {REGION_METRICS}")
    if metric == "pair_tests":
        index.pairs("all")
        table = index.nodes()
        points = (table.lo + table.hi) / 2
        weights = table.pair_tests.astype(np.float64)
    else:
        points = np.concatenate([(queries.box_lo + queries.box_hi) / 2, queries.ray_origins])
        parts: list[np.ndarray] = [np.zeros(0)]
        if len(queries.box_lo):
            parts.append(index.query_boxes(queries.box_lo, queries.box_hi).nodes_visited)
        if len(queries.ray_origins):
            parts.append(index.query_rays(queries.ray_origins, queries.ray_directions,
                                          queries.ray_max_t).nodes_visited)
        weights = np.concatenate(parts).astype(np.float64)
    values, x_edges, y_edges = _grid(np.asarray(points).reshape(-1, 3), weights, lo, hi, cells)
    return RegionGrid(values, x_edges, y_edges, metric)


def object_nodes(index: SpatialIndex) -> dict[int, int]:
    """How many nodes of ``index`` hold each object (id -> count)."""
    table = index.nodes()
    counts: dict[int, int] = {}
    for row in np.flatnonzero(table.own_count > 0).tolist():
        for oid in index.node_objects(row).tolist():
            counts[oid] = counts.get(oid, 0) + 1
    return counts


@dataclass
class ObjectCost:
    """One object's node counts in A and B."""

    oid: int
    a_nodes: int
    b_nodes: int

    @property
    def difference(self) -> int:
        return self.a_nodes - self.b_nodes

    def describe(self, kind: str, a_name: str, b_name: str) -> str:
        """``brush 12 is in 14 octree nodes and 2 bvh nodes``."""
        def nodes(n: int) -> str:
            return "node" if n == 1 else "nodes"
        return (f"{kind} {self.oid} is in {self.a_nodes} {a_name} {nodes(self.a_nodes)} "
                f"and {self.b_nodes} {b_name} {nodes(self.b_nodes)}")


def costliest_objects(a: SpatialIndex, b: SpatialIndex, top: int = 10) -> list[ObjectCost]:
    """The ``top`` objects whose node counts differ most between ``a`` and ``b`` (largest
    difference first, then by id); objects held alike are left out."""
    ca, cb = object_nodes(a), object_nodes(b)
    costs = [ObjectCost(oid, ca.get(oid, 0), cb.get(oid, 0)) for oid in set(ca) | set(cb)]
    costs = [c for c in costs if c.difference]
    costs.sort(key=lambda c: (-abs(c.difference), c.oid))
    return costs[:top]
