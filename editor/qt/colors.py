"""Colours: the heatmap colour map and the colour of each entity class.

The heatmap uses viridis (perceptually uniform, readable by colour-blind users, and still
ordered when printed in grey). Entity classes get the family colours level editors use.
"""
from __future__ import annotations

import numpy as np

#: viridis sampled at 9 even stops (from matplotlib's published table)
_VIRIDIS = np.array([
    [0.267, 0.005, 0.329], [0.278, 0.175, 0.483], [0.230, 0.322, 0.546],
    [0.173, 0.449, 0.558], [0.128, 0.567, 0.551], [0.153, 0.680, 0.504],
    [0.361, 0.785, 0.388], [0.668, 0.862, 0.196], [0.993, 0.906, 0.144],
])


def colormap(values: np.ndarray) -> np.ndarray:
    """RGB rows ``(N, 3)`` in [0, 1] for ``values`` in [0, 1] (clipped)."""
    v = np.clip(np.asarray(values, dtype=np.float64), 0.0, 1.0) * (len(_VIRIDIS) - 1)
    i = np.minimum(v.astype(np.int64), len(_VIRIDIS) - 2)
    f = (v - i)[:, None]
    return _VIRIDIS[i] * (1 - f) + _VIRIDIS[i + 1] * f


#: (class-name prefix, RGB) — the first match wins
_CLASS_COLOURS = (
    ("info_player", (0.2, 0.9, 0.2)),
    ("info_", (0.6, 0.9, 0.6)),
    ("monster_", (0.95, 0.25, 0.2)),
    ("light", (1.0, 0.85, 0.3)),
    ("weapon_", (0.3, 0.6, 1.0)),
    ("item_", (0.3, 0.9, 0.95)),
    ("trigger", (0.8, 0.5, 1.0)),
    ("func_", (0.9, 0.6, 0.3)),
    ("misc_", (0.8, 0.8, 0.8)),
)
DEFAULT_CLASS_COLOUR = (0.75, 0.55, 0.95)


def class_colour(classname: str) -> tuple[float, float, float]:
    """The display colour of an entity class (by family prefix)."""
    for prefix, colour in _CLASS_COLOURS:
        if classname.startswith(prefix):
            return colour
    return DEFAULT_CLASS_COLOUR


BRUSH_FACE = (0.62, 0.66, 0.74)      # world brushes
BRUSH_ENTITY_FACE = (0.85, 0.6, 0.35)  # brushes of func_* and trigger entities
BRUSH_EDGE = (0.85, 0.88, 0.95)
SELECTED = (1.0, 0.25, 0.2)
HIGHLIGHT = (1.0, 0.75, 0.1)         # gesture previews
# The query layer draws over the viridis heatmap, so its colours are ones viridis never uses.
QUERY_RAY = (1.0, 1.0, 1.0)          # the ray itself
QUERY_HIT = (1.0, 0.2, 0.6)          # objects a ray hit or a frustum holds
VISITED = (0.25, 0.95, 1.0)          # nodes the query visited
CULLED = (1.0, 0.55, 0.1)           # nodes the frustum rejected: orange, clear on the dark views
SPLIT_LINE = (1.0, 0.45, 0.35)       # a BSP's split lines in the 2D views
