"""The tree overlay: which nodes to draw, in which colour, as vertex arrays.

Qt-free numpy. :class:`OverlaySettings` says what the user asked for (metric, depth range,
leaves only, cap on boxes); :func:`build_overlay` turns a :class:`~spatial.contract.NodeTable`
into :class:`OverlayGeometry`: the selected rows, their metric values and colours, one line
vertex array for the 3D view (24 vertices a box, one GL item for all boxes) and, per 2D view,
rectangle segments grouped by colour bin (one painter path per bin). Everything is vectorised,
so a 100k-node tree is turned into arrays in milliseconds.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from editor.model import heatmap_metrics as heatmaps
from editor.model.compare.readable import dim_outside_focus
from spatial.outline_raster import EDGE_CORNERS, box_edge_colours, box_edges

from .colors import SPLIT_LINE, colormap

#: colour bins of the 2D views (one painter path each)
COLOUR_BINS = 16

# The 12 edges of a box as corner index pairs; corner k has bit 0 = x, bit 1 = y, bit 2 = z.
_BOX_EDGES = EDGE_CORNERS.reshape(12, 2)  # in the order the 3D lines draw them
_CORNER_BITS = np.array([[(k >> a) & 1 for a in range(3)] for k in range(8)], dtype=bool)


@dataclass
class OverlaySettings:
    """What the user asked the overlay to show."""

    metric: str = "depth"
    min_depth: int = 0
    max_depth: int = 64
    leaves_only: bool = False
    max_boxes: int = 50_000
    show_loose: bool = True   # loose octree: draw the loose bounds and the core cell dimmer
    show_planes: bool = False  # BSP: draw each drawn node's split plane clipped to its box
    focus: int = -1           # a node row: its subtree bright, the rest dimmed; planes in it only

    def __post_init__(self) -> None:
        heatmaps.metric(self.metric)  # a registered heatmap metric, else a ValueError


@dataclass
class OverlayGeometry:
    """Arrays ready for upload. ``rows`` index the node table the overlay was built from."""

    rows: np.ndarray
    values: np.ndarray
    vmin: float
    vmax: float
    colours: np.ndarray                  # (R, 4) float32 RGBA per drawn row
    lines3d: np.ndarray                  # (24 R, 3) float32
    colours3d: np.ndarray                # (24 R, 4) float32
    core_lines3d: np.ndarray             # loose trees: the core cells, dimmer
    core_colours3d: np.ndarray
    truncated: int = 0                   # rows left out by the cap
    total: int = 0                       # rows in the table
    metric: str = "depth"
    has_loose: bool = False
    lo: np.ndarray = field(default_factory=lambda: np.empty((0, 3)))
    hi: np.ndarray = field(default_factory=lambda: np.empty((0, 3)))
    bins: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    log_scale: bool = False
    plane_lines3d: np.ndarray = field(default_factory=lambda: np.empty((0, 3), dtype=np.float32))
    plane_colours3d: np.ndarray = field(default_factory=lambda: np.empty((0, 4), dtype=np.float32))
    plane_normals: np.ndarray = field(default_factory=lambda: np.empty((0, 3)))  # per segment

    def plane_segments_2d(self, axes: tuple[int, int], depth_axis: int,
                          max_normal_along_view: float = 0.2) -> np.ndarray:
        """Split-plane outlines that a 2D view sees edge-on (as split lines), projected on
        ``axes``; planes facing the view would only cover it with rectangles."""
        if not len(self.plane_lines3d):
            return np.empty((0, 2))
        edge_on = np.abs(self.plane_normals[:, depth_axis]) <= max_normal_along_view
        return self.plane_lines3d.reshape(-1, 2, 3)[edge_on][..., list(axes)].reshape(-1, 2)

    def value_at(self, t: float) -> float:
        """The metric value at fraction ``t`` of the colour bar (for legend ticks)."""
        if self.log_scale:
            a, b = np.log1p(self.vmin), np.log1p(self.vmax)
            return float(np.expm1(a + t * (b - a)))
        return self.vmin + t * (self.vmax - self.vmin)

    @property
    def count(self) -> int:
        return len(self.rows)


def metric_values(table, key: str, visits: np.ndarray | None = None) -> np.ndarray:
    """The metric ``key`` (see :mod:`editor.model.heatmap_metrics`) of every row of ``table``."""
    return heatmaps.metric(key).values(table, heatmaps.MetricContext(visits=visits))


def select_rows(table, settings: OverlaySettings) -> tuple[np.ndarray, int]:
    """Rows passing the depth and leaf filters, shallowest first, capped; and how many were cut.

    Level of detail: under the cap the coarse levels win, so a huge tree still shows its shape.
    """
    if len(table) == 0:
        return np.empty(0, dtype=np.int64), 0
    keep = (table.depth >= settings.min_depth) & (table.depth <= settings.max_depth)
    if settings.leaves_only:
        keep &= table.is_leaf
    rows = np.flatnonzero(keep)
    cut = 0
    if len(rows) > settings.max_boxes:
        order = np.argsort(table.depth[rows], kind="stable")
        cut = len(rows) - settings.max_boxes
        rows = np.sort(rows[order[:settings.max_boxes]])
    return rows, cut


def box_lines(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``(24 N, 3)`` float32 line-list vertices of the 12 edges of each box
    (:func:`spatial.outline_raster.box_edges`)."""
    return box_edges(lo, hi)


def colour_values(values: np.ndarray, vmin: float, vmax: float, log_scale: bool,
                  alpha: float | np.ndarray = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``(colours (N, 4) float32, bins (N,) int64)`` of ``values`` on the range ``[vmin, vmax]``,
    linear or logarithmic: the one normalisation every overlay (and compare's shared scale)
    colours with."""
    if log_scale:
        lv, lmin, lmax = np.log1p(values), np.log1p(vmin), np.log1p(vmax)
        norm = (lv - lmin) / (lmax - lmin)
    else:
        span = vmax - vmin
        norm = (values - vmin) / span if span > 0 else np.full(len(values), 0.5)
    colours = np.empty((len(values), 4), dtype=np.float32)
    colours[:, :3] = colormap(norm)
    colours[:, 3] = alpha
    bins = np.minimum((np.clip(norm, 0, 1) * COLOUR_BINS).astype(np.int64), COLOUR_BINS - 1)
    return colours, bins


def build_overlay(table, settings: OverlaySettings, visits: np.ndarray | None = None,
                  alpha: float = 1.0, planes: np.ndarray | None = None) -> OverlayGeometry:
    """Turn a node table into overlay arrays (see :class:`OverlayGeometry`).

    ``planes`` are the split planes of the table's rows (a BSP's ``node_planes()``, NaN for
    leaves); with ``settings.show_planes`` each drawn node's plane is outlined in its box.
    """
    rows, cut = select_rows(table, settings)
    chosen = heatmaps.metric(settings.metric)
    values = chosen.values(table, heatmaps.MetricContext(visits=visits))[rows]
    vmin, vmax, log_scale = chosen.colour_range(values)
    colours, bins = colour_values(values, vmin, vmax, log_scale, alpha)
    focused = dim_outside_focus(table, rows, settings.focus, colours, bins)
    lo, hi = table.lo[rows], table.hi[rows]
    lines = box_lines(lo, hi)
    colours3d = box_edge_colours(colours)
    has_loose = bool(len(table)) and not (np.array_equal(table.lo, table.core_lo)
                                         and np.array_equal(table.hi, table.core_hi))
    if has_loose and settings.show_loose:
        core_lines = box_lines(table.core_lo[rows], table.core_hi[rows])
        dim = colours.copy()
        dim[:, :3] *= 0.45
        core_colours = box_edge_colours(dim)
    else:
        core_lines = np.empty((0, 3), dtype=np.float32)
        core_colours = np.empty((0, 4), dtype=np.float32)
    geom = OverlayGeometry(rows, values, vmin, vmax, colours, lines, colours3d, core_lines,
                           core_colours, cut, len(table), settings.metric, has_loose, lo, hi, bins,
                           log_scale)
    if settings.show_planes and planes is not None and len(planes) == len(table) and len(rows):
        keep = focused if focused is not None else slice(None)  # the focused subtree's only
        segments, owner = plane_outlines(planes[rows][keep], lo[keep], hi[keep])
        geom.plane_lines3d = segments
        geom.plane_normals = planes[rows][keep][owner, :3]
        geom.plane_colours3d = np.tile(np.array([*SPLIT_LINE, 0.85], dtype=np.float32), (len(segments), 1))
    return geom


def plane_outlines(planes: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Outline of each plane ``n . x + d = 0`` clipped to its box, as a line list.

    Returns ``(segments (2 S, 3) float32, owner (S,))`` where ``owner`` is the input row each
    segment outlines. Rows whose plane is NaN (leaves) or misses its box give nothing.
    """
    planes = np.asarray(planes, dtype=np.float64).reshape(-1, 4)
    ok = np.isfinite(planes).all(axis=1)
    n, d = planes[ok, :3], planes[ok, 3]
    rows = np.flatnonzero(ok)
    corners = np.where(_CORNER_BITS[None, :, :], hi[ok][:, None, :], lo[ok][:, None, :])  # (K, 8, 3)
    p0 = corners[:, _BOX_EDGES[:, 0], :]
    p1 = corners[:, _BOX_EDGES[:, 1], :]
    s0 = np.einsum("kej,kj->ke", p0, n) + d[:, None]
    s1 = np.einsum("kej,kj->ke", p1, n) + d[:, None]
    crossing = (s0 * s1 <= 0) & (s0 != s1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(crossing, s0 / (s0 - s1), 0.0)
    points = p0 + t[..., None] * (p1 - p0)                     # (K, 12, 3)
    count = crossing.sum(axis=1)
    centre = np.where(count[:, None] > 0, (points * crossing[..., None]).sum(axis=1)
                      / np.maximum(count, 1)[:, None], 0.0)
    # order each polygon's corners by angle around its centre, in the plane's own 2D basis
    helper = np.where(np.abs(n[:, [2]]) < 0.9, [[0.0, 0.0, 1.0]], [[1.0, 0.0, 0.0]])
    u = np.cross(n, helper)
    u /= np.maximum(np.linalg.norm(u, axis=1, keepdims=True), 1e-12)
    v = np.cross(n, u)
    rel = points - centre[:, None, :]
    angle = np.arctan2(np.einsum("kej,kj->ke", rel, v), np.einsum("kej,kj->ke", rel, u))
    angle = np.where(crossing, angle, np.inf)
    order = np.argsort(angle, axis=1, kind="stable")
    ordered = np.take_along_axis(points, order[..., None], axis=1)
    segments, owner = [], []
    for k in np.flatnonzero(count >= 2):
        poly = ordered[k, :count[k]]
        poly = poly[np.r_[True, (np.abs(np.diff(poly, axis=0)) > 1e-9).any(axis=1)]]  # duplicate corners
        if len(poly) < 2:
            continue
        closed = np.concatenate([poly, poly[:1]]) if len(poly) > 2 else poly
        seg = np.stack([closed[:-1], closed[1:]], axis=1).reshape(-1, 3)
        segments.append(seg)
        owner.append(np.full(len(seg) // 2, rows[k]))
    if not segments:
        return np.empty((0, 3), dtype=np.float32), np.empty(0, dtype=np.int64)
    return np.concatenate(segments).astype(np.float32), np.concatenate(owner)


def bin_colour(b: int) -> np.ndarray:
    """RGB of colour bin ``b`` (its centre on the colour map)."""
    return colormap(np.array([(b + 0.5) / COLOUR_BINS]))[0]


def project_rects(geom: OverlayGeometry, axes: tuple[int, int], core: bool = False,
                  table=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique 2D rectangles of the drawn boxes on ``axes``.

    Many boxes of a 3D tree project onto the same rectangle (a column of octree cells in the
    top view); each rectangle is drawn once, in the colour of its highest value.

    Returns ``(rects (K, 4) as u0, v0, u1, v1; bins (K,); members)`` where ``members`` maps
    every drawn row to its rectangle.
    """
    if geom.count == 0:
        return np.empty((0, 4)), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    if core and table is not None:
        lo, hi = table.core_lo[geom.rows], table.core_hi[geom.rows]
    else:
        lo, hi = geom.lo, geom.hi
    u, v = axes
    rects = np.column_stack([lo[:, u], lo[:, v], hi[:, u], hi[:, v]])
    uniq, members = unique_rows(rects)
    bins = np.full(len(uniq), -1, dtype=np.int64)
    np.maximum.at(bins, members, geom.bins)
    return uniq, bins, members


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(unique rows, index of each input row's unique row)`` — ``np.unique(axis=0)``'s answer
    by one lexsort and a neighbour comparison, several times faster on float rows."""
    if len(rows) == 0:
        return rows.copy(), np.empty(0, dtype=np.int64)
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    starts = np.empty(len(rows), dtype=bool)
    starts[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=starts[1:])
    group = np.cumsum(starts) - 1
    members = np.empty(len(rows), dtype=np.int64)
    members[order] = group
    return ordered[starts], members


def rect_segments(rects: np.ndarray) -> np.ndarray:
    """``(8 K, 2)`` segment end points (pairs) of the outlines of ``rects`` (u0, v0, u1, v1)."""
    u0, v0, u1, v1 = rects.T
    pts = np.stack([u0, v0, u1, v0, u1, v0, u1, v1, u1, v1, u0, v1, u0, v1, u0, v0], axis=1)
    return pts.reshape(-1, 2)
