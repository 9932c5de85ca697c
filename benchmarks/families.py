"""Scene families of the broad-phase benchmark: generated layouts and boxes from real levels.

Each family answers one question a user's scene raises:

``uniform``, ``clustered``
    :func:`spatial.scenegen.random_boxes` (log-uniform sizes 1–100 per axis) in the world the
    ``--world`` option gives; the scenes of earlier runs.
``sparse``
    Small boxes (0.5–4 units per axis) in a fixed ``SPARSE_WORLD``³ world at every N: most
    boxes touch nothing, and rays cross long empty stretches before they hit anything.
``mixed``
    Sizes 1–100 units per axis in the ``--world`` world, plus ``HUGE_BOXES`` static boxes a
    fifth to a half of the world wide (terrain, skyboxes, trigger volumes): they straddle every
    split and overlap thousands of small boxes. The huge boxes never move.
``quake``
    The brushes and entities of Quake's e3m4 (``librequake_e3m4_valve220.map``, 4,035 boxes),
    tiled on a 3D grid of copies with a gap between them until N boxes are reached.
``doom``
    The things and wall segments of every map of ``freedoom2.wad``, each map a tile on a flat
    grid (Doom levels are 2.5D), repeated until N boxes are reached.

Real levels are read by the product's own importers (:func:`editor.model.loading.open_level`
and :func:`editor.model.index_input.index_input`), once per process.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from benchmarks.data import E3M4, data_file, doom_wad
from spatial.scenegen import random_boxes

QUAKE_LEVEL = data_file(*E3M4)
DOOM_WAD = doom_wad("freedoom2.wad")

GENERATED = ("uniform", "clustered", "sparse", "mixed")
FROM_LEVELS = ("quake", "doom")
FAMILIES = GENERATED + FROM_LEVELS

#: Side of the sparse family's world, the same at every N.
SPARSE_WORLD = 8000.0
#: Static boxes spanning a fifth to a half of the world in the mixed family.
HUGE_BOXES = 8
#: Space left between two tiles of a real level, as a share of the level's extent.
TILE_GAP = 0.1


class FamilyUnavailable(Exception):
    """A family's source file is missing (the run lists the family as not measured)."""


def family_boxes(layout: str, n: int, seed: int, world: float):
    """``(ids, lo, hi, movable)`` of ``n`` boxes of the family ``layout``.

    ``world`` is the side ``--world`` gives for generated families with a scaled world; the
    sparse and real-level families ignore it. ``movable`` is a mask of the objects a benchmark
    may move (everything but the mixed family's huge static boxes).
    """
    if layout in ("uniform", "clustered"):
        ids, lo, hi = random_boxes(n, seed=seed, layout=layout, world=float(world))
    elif layout == "sparse":
        ids, lo, hi = random_boxes(n, seed=seed, world=SPARSE_WORLD, size_min=0.5, size_max=4.0)
    elif layout == "mixed":
        return _mixed(n, seed, float(world))
    elif layout == "quake":
        ids, lo, hi = _tiled(*_quake_boxes(), n, flat=False)
    elif layout == "doom":
        ids, lo, hi = _tiled(*_doom_boxes(), n, flat=True)
    else:
        raise ValueError(f"unknown scene family {layout!r} (known: {', '.join(FAMILIES)})")
    return ids, lo, hi, np.ones(len(ids), dtype=bool)


def _mixed(n: int, seed: int, world: float):
    huge = min(HUGE_BOXES, n)
    ids, lo, hi = random_boxes(n - huge, seed=seed, world=world)
    rng = np.random.default_rng(seed + 5)
    size = rng.uniform(0.2, 0.5, size=(huge, 3)) * world
    corner = rng.uniform(0.0, 1.0, size=(huge, 3)) * (world - size)
    lo = np.vstack([lo, corner])
    hi = np.vstack([hi, corner + size])
    movable = np.ones(n, dtype=bool)
    movable[n - huge:] = False
    return np.arange(n, dtype=np.int64), lo, hi, movable


def _level_boxes(path: str) -> tuple[np.ndarray, np.ndarray]:
    from editor.model.index_input import index_input
    from editor.model.loading import open_level

    source = index_input(open_level(path).document)
    return np.asarray(source.lo, dtype=np.float64), np.asarray(source.hi, dtype=np.float64)


@lru_cache(maxsize=1)
def _quake_boxes() -> tuple[np.ndarray, np.ndarray]:
    if not QUAKE_LEVEL.exists():
        raise FamilyUnavailable(f"{QUAKE_LEVEL}: not found (the quake family tiles this level)")
    return _level_boxes(str(QUAKE_LEVEL))


@lru_cache(maxsize=1)
def _doom_boxes() -> tuple[np.ndarray, np.ndarray]:
    """Every map of the WAD side by side in x (one tile row), as one box set."""
    from editor.model.loading import level_parts

    if not DOOM_WAD.exists():
        raise FamilyUnavailable(f"{DOOM_WAD}: not found (install the Debian package freedoom)")
    los, his, offset = [], [], 0.0
    for part in level_parts(str(DOOM_WAD)) or []:
        lo, hi = _level_boxes(f"{DOOM_WAD}:{part['name']}")
        if not len(lo):
            continue
        shift = np.array([offset - lo[:, 0].min(), -lo[:, 1].min(), -lo[:, 2].min()])
        los.append(lo + shift)
        his.append(hi + shift)
        offset += float(hi[:, 0].max() - lo[:, 0].min()) * (1.0 + TILE_GAP)
    if not los:
        raise FamilyUnavailable(f"{DOOM_WAD}: no maps with things or walls")
    return np.vstack(los), np.vstack(his)


def _tiled(lo: np.ndarray, hi: np.ndarray, n: int, flat: bool):
    """``n`` boxes: copies of ``lo, hi`` on a grid (square in x, y when ``flat``, else cubic)."""
    base = lo.min(axis=0)
    lo, hi = lo - base, hi - base
    step = (hi.max(axis=0)) * (1.0 + TILE_GAP)
    copies = max(1, math.ceil(n / len(lo)))
    per_axis = math.ceil(copies ** (1 / 2 if flat else 1 / 3))
    k = np.arange(copies)
    cell = np.stack([k % per_axis, (k // per_axis) % per_axis,
                     np.zeros_like(k) if flat else k // (per_axis * per_axis)], axis=1)
    shift = np.repeat(cell * step, len(lo), axis=0)
    out_lo = (np.tile(lo, (copies, 1)) + shift)[:n]
    out_hi = (np.tile(hi, (copies, 1)) + shift)[:n]
    return np.arange(n, dtype=np.int64), out_lo, out_hi
