"""One colour scale over several overlays: the same value gets the same colour on both sides.

:func:`rescaled` recolours an :class:`~editor.qt.overlay.OverlayGeometry` for a given value
range with the overlay's own normalisation (linear, or logarithmic for heavy-tailed counts), so
the side with fewer pair tests looks cooler than the other instead of both spanning the whole
colour map.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from editor.model import heatmap_metrics as heatmaps
from spatial.outline_raster import box_edge_colours

from ..overlay import OverlayGeometry, colour_values


def shared_range(geoms: Sequence[OverlayGeometry | None]) -> tuple[float, float]:
    """The value range covering every overlay that draws something ((0, 0) if none does;
    None: an overlay not built yet)."""
    drawn = [g for g in geoms if g is not None and g.count]
    if not drawn:
        return 0.0, 0.0
    return min(g.vmin for g in drawn), max(g.vmax for g in drawn)


def rescaled(geom: OverlayGeometry, vmin: float, vmax: float) -> OverlayGeometry:
    """``geom`` coloured on the range ``[vmin, vmax]`` (a new geometry; ``geom`` is kept)."""
    log_scale = heatmaps.metric(geom.metric).logarithmic(vmin, vmax)
    alpha = geom.colours[:, 3] if len(geom.colours) else 1.0
    colours, bins = colour_values(geom.values, vmin, vmax, log_scale, alpha)
    return dataclasses.replace(geom, vmin=float(vmin), vmax=float(vmax), colours=colours,
                               colours3d=box_edge_colours(colours), bins=bins,
                               log_scale=log_scale)
