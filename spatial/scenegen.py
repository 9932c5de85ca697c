"""Generated test scenes: uniform, clustered and mixed-size boxes, reproducible from a seed.

Used by the CLI (``stats --random N``), the oracle tests and the benchmarks, so every consumer
measures the same scenes.
"""
from __future__ import annotations

import numpy as np

from .errors import ParamError

LAYOUTS = ("uniform", "clustered")


def random_boxes(n: int, seed: int = 0, layout: str = "uniform", world: float = 1000.0,
                 size_min: float = 1.0, size_max: float = 100.0,
                 clusters: int = 16) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(ids, lo, hi)`` for ``n`` boxes in the cube ``[0, world]^3``.

    Sizes are log-uniform between ``size_min`` and ``size_max`` per axis ("mixed sizes"), so a
    few large boxes straddle many small ones as in real levels. ``clustered`` puts centres in
    Gaussian blobs around ``clusters`` random points (dense rooms in an empty map).
    """
    if not (isinstance(n, (int, np.integer)) and n >= 0):
        raise ParamError("n", f"must be a whole number >= 0, got {n!r}")
    if layout not in LAYOUTS:
        raise ParamError("layout", f"expected one of {', '.join(LAYOUTS)}, got {layout!r}")
    if not (0 < size_min <= size_max and np.isfinite(size_max) and world > 0):
        raise ParamError("size", "need 0 < size_min <= size_max and world > 0")
    rng = np.random.default_rng(seed)
    if layout == "uniform":
        centres = rng.uniform(0.0, world, size=(n, 3))
    else:
        hubs = rng.uniform(0.1 * world, 0.9 * world, size=(clusters, 3))
        which = rng.integers(0, clusters, size=n)
        centres = hubs[which] + rng.normal(0.0, world * 0.03, size=(n, 3))
        centres = np.clip(centres, 0.0, world)
    sizes = np.exp(rng.uniform(np.log(size_min), np.log(size_max), size=(n, 3)))
    lo = centres - sizes / 2
    hi = centres + sizes / 2
    return np.arange(n, dtype=np.int64), lo, hi
