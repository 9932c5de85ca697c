"""One colour scale over several overlays: the same value gets the same colour on both sides.

:func:`rescaled` recolours an :class:`~editor.qt.overlay.OverlayGeometry` for a given value
range with the overlay's own normalisation (linear, or logarithmic for heavy-tailed counts), so
the side with fewer pair tests looks cooler than the other instead of both spanning the whole
colour map.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..colors import colormap
from ..overlay import COLOUR_BINS, LOG_SCALE_ABOVE, OverlayGeometry

_COUNT_METRICS = ("own_count", "subtree_count", "pair_tests")


def shared_range(geoms: list[OverlayGeometry]) -> tuple[float, float]:
    """The value range covering every overlay that draws something ((0, 0) if none does)."""
    drawn = [g for g in geoms if g is not None and g.count]
    if not drawn:
        return 0.0, 0.0
    return min(g.vmin for g in drawn), max(g.vmax for g in drawn)


def rescaled(geom: OverlayGeometry, vmin: float, vmax: float) -> OverlayGeometry:
    """``geom`` coloured on the range ``[vmin, vmax]`` (a new geometry; ``geom`` is kept)."""
    values = geom.values
    log_scale = geom.metric in _COUNT_METRICS and vmax - vmin > LOG_SCALE_ABOVE and vmin >= 0
    if log_scale:
        span = np.log1p(vmax) - np.log1p(vmin)
        norm = (np.log1p(values) - np.log1p(vmin)) / span
    else:
        span = vmax - vmin
        norm = (values - vmin) / span if span > 0 else np.full(len(values), 0.5)
    colours = np.empty((len(values), 4), dtype=np.float32)
    colours[:, :3] = colormap(norm)
    colours[:, 3] = geom.colours[:, 3] if len(geom.colours) else 1.0
    bins = np.minimum((np.clip(norm, 0, 1) * COLOUR_BINS).astype(np.int64), COLOUR_BINS - 1)
    return dataclasses.replace(geom, vmin=float(vmin), vmax=float(vmax), colours=colours,
                               colours3d=np.repeat(colours, 24, axis=0), bins=bins,
                               log_scale=bool(log_scale))
