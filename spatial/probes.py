"""Sphere probes: how many candidates a collision query gets from an index.

A designer judges a tree built for collision (a triangle octree over a mesh, say) by the work a
moving sphere causes: the *candidates* a query hands to the exact test (``objects_tested``
of :meth:`~spatial.contract.SpatialIndex.query_sphere`, each object counted once) against the
*hits* it really has. :func:`sphere_probes` places ``count`` spheres of one radius at seeded
uniform random centres inside a box (the level's bounds) and reports both, averaged and at
worst, so two trees or two parameter sets can be compared on the same probes.
"""
from __future__ import annotations

import math

import numpy as np

from .errors import GeometryError

DEFAULT_PROBES = 256


def sphere_probes(index, lo, hi, radius: float, count: int = DEFAULT_PROBES, seed: int = 0) -> dict:
    """Query ``count`` spheres of ``radius`` at random centres in ``[lo, hi]``.

    Returns
    -------
    dict
        ``radius``, ``probes``, ``seed``, ``mean_candidates``, ``max_candidates`` (objects the
        index tested per query), ``mean_hits``, ``max_hits`` (objects returned) and
        ``mean_nodes`` (nodes visited).
    """
    radius = float(radius)
    if not (math.isfinite(radius) and radius >= 0):
        raise GeometryError(f"probe radius must be finite and >= 0, got {radius}")
    if count < 1:
        raise GeometryError(f"probe count must be at least 1, got {count}")
    lo = np.asarray(lo, dtype=np.float64).reshape(3)
    hi = np.asarray(hi, dtype=np.float64).reshape(3)
    centres = np.random.default_rng(seed).uniform(lo, hi, size=(int(count), 3))
    candidates = np.empty(len(centres), dtype=np.int64)
    hits = np.empty(len(centres), dtype=np.int64)
    nodes = np.empty(len(centres), dtype=np.int64)
    for k, centre in enumerate(centres):
        result = index.query_sphere(centre, radius)
        candidates[k], hits[k], nodes[k] = result.objects_tested, len(result.ids), result.nodes_visited
    return {"radius": radius, "probes": int(count), "seed": int(seed),
            "mean_candidates": round(float(candidates.mean()), 3),
            "max_candidates": int(candidates.max()),
            "mean_hits": round(float(hits.mean()), 3), "max_hits": int(hits.max()),
            "mean_nodes": round(float(nodes.mean()), 3)}
