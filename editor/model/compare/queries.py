"""The work both sides of a comparison answer: one deterministic set of rays, frusta and boxes.

The rays and frusta are the tuner's own samples (:mod:`editor.model.tuning`: rays from the
moving entities' centres, frusta out of the player starts and cameras), so a comparison and a
tuning run measure the same kind of work. Boxes are seeded uniform centres in the level's
bounds, each a cube :data:`BOX_FRACTION` of the level's diagonal on a side (a trigger or an
explosion radius rather than a whole room). The same document and seed always give the same set.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..index_input import IndexInput
from ..tuning import sample_frusta, sample_rays

DEFAULT_RAYS = 256
DEFAULT_FRUSTA = 16
DEFAULT_BOXES = 256
#: edge of a query box as a fraction of the level's diagonal
BOX_FRACTION = 1 / 32


@dataclass
class QuerySet:
    """Rays (closest hit up to ``ray_max_t``), frusta ``(F, 6, 4)`` and boxes ``(B, 3)``."""

    ray_origins: np.ndarray
    ray_directions: np.ndarray
    ray_max_t: float
    frusta: np.ndarray
    box_lo: np.ndarray
    box_hi: np.ndarray
    seed: int = 0

    def describe(self) -> dict:
        """The counts and seed, for a report."""
        return {"rays": len(self.ray_origins), "frusta": len(self.frusta),
                "boxes": len(self.box_lo), "seed": self.seed}


def world_bounds(record: IndexInput) -> tuple[np.ndarray, np.ndarray]:
    """The bounds of the indexed objects (a unit box for an empty level)."""
    if len(record.ids) == 0:
        return np.zeros(3), np.ones(3)
    return record.lo.min(axis=0), record.hi.max(axis=0)


def query_set(record: IndexInput, seed: int = 0, *, rays: int = DEFAULT_RAYS,
              frusta: int = DEFAULT_FRUSTA, boxes: int = DEFAULT_BOXES) -> QuerySet:
    """The deterministic query set of a document (see the module docstring).

    Parameters
    ----------
    record : IndexInput
        What the index is built from (its ``document`` supplies the cameras of the frusta).
    seed : int
        Seed of every sample.
    rays, frusta, boxes : int
        How many of each.
    """
    lo, hi = world_bounds(record)
    diagonal = max(float(np.linalg.norm(hi - lo)), 1.0)
    origins, directions = sample_rays(record.ids, record.lo, record.hi, record.dynamic, rays, seed)
    views = np.empty((0, 6, 4))
    if frusta and record.document is not None:
        views = sample_frusta(record.document, frusta, seed, diagonal, lo, hi)
    rng = np.random.default_rng([int(seed), 4])
    centres = rng.uniform(lo, hi, size=(int(boxes), 3))
    half = 0.5 * BOX_FRACTION * diagonal
    return QuerySet(origins, directions, diagonal, views, centres - half, centres + half, int(seed))
