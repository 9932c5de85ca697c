"""The workload every implementation runs: one scene, its queries, rays and motion.

Everything is generated once per (layout, N) from fixed seeds, so every backend and every peer
library sees exactly the same boxes, query boxes, rays and moved objects in one run.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spatial.errors import ParamError

from .families import family_boxes

#: Largest displacement of a moved object per axis and frame, in world units. Small against the
#: 1–100 unit boxes, as in a game frame where objects move a little.
MAX_STEP = 5.0
#: How far query boxes and ray origins may sit from the object they are drawn near, per axis.
QUERY_JITTER = 50.0
#: The scene whose world side is ``REFERENCE_WORLD`` under every ``--world`` mode: ``scaled``
#: grows the side with ``N^(1/3)`` from here, so the object density of this scene is kept.
REFERENCE_N = 100_000
#: ``spatial.scenegen.random_boxes``' own default world side.
REFERENCE_WORLD = 1000.0
#: The named ``--world`` modes (a positive number is accepted too: one fixed side for every N).
WORLD_MODES = ("scaled", "fixed")


def parse_world(text: str) -> str | float:
    """``'scaled'``, ``'fixed'`` or a positive finite side, from the ``--world`` option text.

    Raises ``spatial.errors.ParamError`` (a ``ValueError``) naming the field otherwise.
    """
    text = str(text).strip().lower()
    if text in WORLD_MODES:
        return text
    try:
        side = float(text)
    except ValueError:
        side = float("nan")
    if not (np.isfinite(side) and side > 0):
        raise ParamError("world", f"expected {', '.join(WORLD_MODES)} or a positive number of "
                                  f"world units, got {text!r}")
    return side


def world_side(n: int, world: str | float) -> float:
    """The world cube's side for a scene of ``n`` objects under ``world`` (see ``parse_world``).

    ``scaled`` is ``REFERENCE_WORLD * (n / REFERENCE_N) ** (1/3)``: the volume grows with N, so
    the object density, and with it the number of overlapping pairs per object, stays what it
    is at ``REFERENCE_N`` (a bigger level, not a more crowded one). ``fixed`` is
    ``REFERENCE_WORLD`` for every N; a number is that side for every N.
    """
    world = parse_world(world) if isinstance(world, str) else float(world)
    if world == "scaled":
        return REFERENCE_WORLD * (max(n, 1) / REFERENCE_N) ** (1.0 / 3.0)
    if world == "fixed":
        return REFERENCE_WORLD
    return world


@dataclass
class Workload:
    """Scene and operations for one (layout, N) cell of the benchmark.

    ``moved`` are the indices of the objects moved by an update; ``moved_lo``/``moved_hi`` their
    displaced bounds. Updates alternate between the displaced and the original bounds, so every
    repeat is a real move of the same objects and the scene does not drift.
    """

    layout: str
    n: int
    world: float
    ids: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    query_lo: np.ndarray
    query_hi: np.ndarray
    ray_origins: np.ndarray
    ray_directions: np.ndarray
    moved: np.ndarray
    moved_lo: np.ndarray
    moved_hi: np.ndarray
    estimated_pairs: float
    probe_lo: np.ndarray | None = None
    probe_hi: np.ndarray | None = None
    frame_rays: int = 1000

    def probe(self) -> tuple[np.ndarray, np.ndarray]:
        """The one small box query that ends ``build``, ``update`` and ``rebuild`` (the moment
        the structure can answer, whatever work its backend defers to the first query)."""
        return self.probe_lo, self.probe_hi

    def frame_ray_batch(self) -> tuple[np.ndarray, np.ndarray]:
        """The rays a frame casts after its pairs (the first ``frame_rays`` of the batch)."""
        return self.ray_origins[: self.frame_rays], self.ray_directions[: self.frame_rays]

    def move(self, repeat: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(indices, lo, hi)`` of the move made by repeat number ``repeat`` (0-based)."""
        if repeat % 2 == 0:
            return self.moved, self.moved_lo, self.moved_hi
        return self.moved, self.lo[self.moved], self.hi[self.moved]

    def bounds_after(self, moves: int) -> tuple[np.ndarray, np.ndarray]:
        """Full ``(lo, hi)`` of the scene after ``moves`` alternating moves."""
        if moves % 2 == 0:
            return self.lo, self.hi
        lo, hi = self.lo.copy(), self.hi.copy()
        lo[self.moved], hi[self.moved] = self.moved_lo, self.moved_hi
        return lo, hi


def make_workload(n: int, layout: str, queries: int = 10_000, rays: int = 10_000,
                  moved_fraction: float = 0.1, seed: int = 0,
                  world: float = REFERENCE_WORLD) -> Workload:
    """Generate the scene of family ``layout`` (:mod:`.families`) and everything run against it.

    ``world`` is the side of the cube the objects are placed in (``world_side`` turns the
    ``--world`` option into it for each N); the sparse and real-level families have their own
    world, reported in ``Workload.world`` as the scene's largest extent.

    Query boxes and ray origins sit near randomly chosen objects (their centre plus up to
    ``QUERY_JITTER`` per axis), so they probe where the objects are in both layouts, not the
    empty space between clusters. Query boxes have mixed sizes 1–100 like the objects; rays have
    uniformly random unit directions (picking from a camera inside the level).
    """
    ids, lo, hi, movable = family_boxes(layout, n, seed, float(world))
    rng = np.random.default_rng(seed + 2)
    world_lo, world_hi = lo.min(axis=0), hi.max(axis=0)
    centres = (lo + hi) * 0.5
    query_centres = _near_objects(rng, centres, queries, world_lo, world_hi)
    query_sizes = np.exp(rng.uniform(np.log(1.0), np.log(100.0), size=(queries, 3)))
    query_lo, query_hi = query_centres - query_sizes / 2, query_centres + query_sizes / 2
    ray_origins = _near_objects(rng, centres, rays, world_lo, world_hi)
    directions = rng.normal(size=(rays, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    candidates = np.flatnonzero(movable)
    moved = np.sort(rng.choice(candidates, size=min(len(candidates), max(1, int(round(n * moved_fraction)))),
                               replace=False))
    step = rng.uniform(-MAX_STEP, MAX_STEP, size=(len(moved), 3))
    # Keep moved boxes inside the scene's bounds: leaving them would make some trees grow their
    # root, which is a different operation from the incremental update measured here.
    new_lo, new_hi = lo[moved] + step, hi[moved] + step
    step += np.maximum(world_lo - new_lo, 0.0) - np.maximum(new_hi - world_hi, 0.0)
    probe_centre = centres[:1]
    if layout not in ("uniform", "clustered", "mixed"):
        world = float((world_hi - world_lo).max())
    return Workload(layout, n, float(world), ids, lo, hi, query_lo, query_hi, ray_origins, directions,
                    moved, lo[moved] + step, hi[moved] + step, estimate_pairs(lo, hi, seed),
                    probe_centre - 0.5, probe_centre + 0.5)


def _near_objects(rng, centres, count, world_lo, world_hi) -> np.ndarray:
    """``count`` points near randomly chosen object centres, inside the world."""
    picked = centres[rng.integers(0, len(centres), size=count)]
    jitter = rng.uniform(-QUERY_JITTER, QUERY_JITTER, size=(count, 3))
    return np.clip(picked + jitter, world_lo, world_hi)


def estimate_pairs(lo: np.ndarray, hi: np.ndarray, seed: int = 0, sample: int = 3000) -> float:
    """Estimate the number of overlapping pairs from a random sample (scaled by ``(N/m)^2``).

    Used only to skip pair operations whose output alone would not fit the time or memory
    budget; it is exact when ``N <= sample``.
    """
    n = len(lo)
    if n < 2:
        return 0.0
    m = min(n, sample)
    pick = np.random.default_rng(seed + 3).choice(n, size=m, replace=False)
    slo, shi = lo[pick], hi[pick]
    overlapping = 0
    for start in range(0, m, 500):
        a_lo, a_hi = slo[start:start + 500, None, :], shi[start:start + 500, None, :]
        hit = ((a_lo <= shi[None]) & (slo[None] <= a_hi)).all(axis=2)
        overlapping += int(hit.sum())
    pairs = (overlapping - m) / 2  # drop each box against itself, count each pair once
    return pairs * (n / m) ** 2 if m < n else float(pairs)


def pair_checksum(pairs: np.ndarray, n: int) -> int:
    """Order-independent fingerprint of a set of ``(a, b)`` pairs with ``a < b``.

    Two implementations that report the same count and checksum report the same pairs (up to a
    negligible chance of collision); cheaper than sorting and comparing arrays at 1M objects.
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    key = pairs[:, 0].astype(np.uint64) * np.uint64(n) + pairs[:, 1].astype(np.uint64)
    mixed = (key * np.uint64(0x9E3779B97F4A7C15)) ^ (key >> np.uint64(29))
    return int(np.bitwise_xor.reduce(mixed)) if len(mixed) else 0


def csr_checksum(ids: np.ndarray, counts: np.ndarray, n: int) -> int:
    """Fingerprint of batch query hits (query index, object id), independent of hit order."""
    counts = np.asarray(counts, dtype=np.int64)
    query = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    return pair_checksum(np.stack([query, np.asarray(ids, dtype=np.int64)], axis=1), n)
