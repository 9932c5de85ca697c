"""Box outlines for the views: written straight into a pixel buffer (how the 2D views draw
thousands of moving bodies a frame), and as line vertices (the 3D view's boxes).

Stroked as a painter path, every box costs four segments that Qt both builds (deserialising a
path of 80,000 points for 10,000 boxes) and strokes while holding the interpreter lock, on the
window's thread or on the thread preparing the frame. Here one compiled pass maps each box
through the view's affine transform and writes its outline into a ``uint32`` ARGB buffer
without the lock; the view then draws a single image. Boxes are clipped to the buffer, so the
work is bounded by the boxes' visible perimeters, never by how far a view is zoomed in.
"""
from __future__ import annotations

import numba
import numpy as np

#: pixel value of "nothing drawn" (fully transparent, premultiplied)
CLEAR = np.uint32(0)


@numba.njit(cache=True, nogil=True)
def _device_rect(lo, hi, row, u, v, m):
    """Row ``row``'s box seen along ``(u, v)``, mapped by ``m`` (m11, m12, m21, m22, dx, dy)
    to device coordinates: ``(x0, y0, x1, y1)`` with x0 <= x1 and y0 <= y1."""
    a_u, a_v, b_u, b_v = lo[row, u], lo[row, v], hi[row, u], hi[row, v]
    xa = m[0] * a_u + m[2] * a_v + m[4]
    ya = m[1] * a_u + m[3] * a_v + m[5]
    xb = m[0] * b_u + m[2] * b_v + m[4]
    yb = m[1] * b_u + m[3] * b_v + m[5]
    return min(xa, xb), min(ya, yb), max(xa, xb), max(ya, yb)


@numba.njit(cache=True, nogil=True)
def device_bounds(lo, hi, u, v, m, width, height):
    """``(x0, y0, x1, y1)``: the pixels (inclusive) of a ``width`` x ``height`` device that the
    boxes' outlines can touch, or ``x1 < x0`` when none is visible. Boxes with a non-finite
    corner are left out."""
    bx0, by0, bx1, by1 = width, height, -1, -1
    for row in range(lo.shape[0]):
        x0, y0, x1, y1 = _device_rect(lo, hi, row, u, v, m)
        if not (np.isfinite(x0) and np.isfinite(y0) and np.isfinite(x1) and np.isfinite(y1)):
            continue
        if x1 < 0.0 or y1 < 0.0 or x0 >= width or y0 >= height:
            continue
        px0 = int(max(x0, 0.0))
        py0 = int(max(y0, 0.0))
        px1 = int(min(x1, width - 1.0))
        py1 = int(min(y1, height - 1.0))
        bx0, by0 = min(bx0, px0), min(by0, py0)
        bx1, by1 = max(bx1, px1), max(by1, py1)
    return bx0, by0, bx1, by1


@numba.njit(cache=True, nogil=True)
def finite_bounds(lo, hi, u, v):
    """``(u0, v0, u1, v1)``: the rectangle around the boxes seen along ``(u, v)``, those with
    a non-finite corner left out (``u1 < u0`` when none is left)."""
    u0, v0, u1, v1 = np.inf, np.inf, -np.inf, -np.inf
    for row in range(lo.shape[0]):
        a_u, a_v, b_u, b_v = lo[row, u], lo[row, v], hi[row, u], hi[row, v]
        if not (np.isfinite(a_u) and np.isfinite(a_v) and np.isfinite(b_u) and np.isfinite(b_v)):
            continue
        u0, u1 = min(u0, a_u, b_u), max(u1, a_u, b_u)
        v0, v1 = min(v0, a_v, b_v), max(v1, a_v, b_v)
    return u0, v0, u1, v1


@numba.njit(cache=True, nogil=True)
def _fill(buf, x0, y0, x1, y1, colour):
    for y in range(max(y0, 0), min(y1, buf.shape[0] - 1) + 1):
        for x in range(max(x0, 0), min(x1, buf.shape[1] - 1) + 1):
            buf[y, x] = colour


@numba.njit(cache=True, nogil=True)
def draw_outlines(buf, origin, lo, hi, awake, axes, m, style):
    """Write the outline of every box seen along ``axes`` ``(u, v)`` into ``buf`` (``(H, W)``
    uint32, whose pixel ``(0, 0)`` is device pixel ``origin`` ``(left, top)``): sleeping boxes
    (``awake == 0``) in ``style[0]`` first, then awake ones in ``style[1]`` over them. Each
    outline is ``style[2]`` pixels wide, inside the box; a box thinner than twice that is
    filled. Returns the boxes drawn."""
    height, width = buf.shape
    left, top = origin
    u, v = axes
    colours, thickness = style[:2], int(style[2])
    drawn = 0
    t = max(thickness, 1)
    for layer in range(2):
        colour = colours[layer]
        for row in range(lo.shape[0]):
            if (awake[row] != 0) != (layer == 1):
                continue
            x0, y0, x1, y1 = _device_rect(lo, hi, row, u, v, m)
            if not (np.isfinite(x0) and np.isfinite(y0) and np.isfinite(x1) and np.isfinite(y1)):
                continue
            x0, x1 = x0 - left, x1 - left
            y0, y1 = y0 - top, y1 - top
            if x1 < 0.0 or y1 < 0.0 or x0 >= width or y0 >= height:
                continue
            # clamped in floating point before the integer conversion: a box reaching far
            # outside (a huge coordinate) is cut beyond the buffer's edge by more than an
            # outline's width, so that edge stays outside
            pad = t + 1.0
            px0 = int(np.floor(max(x0, -pad)))
            py0 = int(np.floor(max(y0, -pad)))
            px1 = int(np.floor(min(x1, width + pad)))
            py1 = int(np.floor(min(y1, height + pad)))
            drawn += 1
            if px1 - px0 < 2 * t or py1 - py0 < 2 * t:
                _fill(buf, px0, py0, px1, py1, colour)
                continue
            _fill(buf, px0, py0, px1, py0 + t - 1, colour)          # top edge
            _fill(buf, px0, py1 - t + 1, px1, py1, colour)          # bottom edge
            _fill(buf, px0, py0 + t, px0 + t - 1, py1 - t, colour)  # left edge
            _fill(buf, px1 - t + 1, py0 + t, px1, py1 - t, colour)  # right edge
    return drawn


#: the corners (bit ``a`` set: ``hi`` on axis ``a``, else ``lo``) of a box's 12 edges, in pairs
EDGE_CORNERS = np.array([0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 3, 4, 6, 5, 7, 0, 4, 1, 5, 2, 6, 3, 7],
                        dtype=np.int64)


@numba.njit(cache=True, nogil=True)
def _box_edges(lo, hi, corners, out):
    for row in range(lo.shape[0]):
        for k in range(corners.shape[0]):
            corner = corners[k]
            for axis in range(3):
                value = hi[row, axis] if (corner >> axis) & 1 else lo[row, axis]
                out[row * corners.shape[0] + k, axis] = value


def box_edges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``(24 N, 3)`` float32 line-list vertices of the 12 edges of each box ``lo``..``hi``
    (``(N, 3)``), written by a kernel that leaves the interpreter lock to other threads: a
    live game's 10,000 movers took 4-8 ms of numpy indexing with the lock held."""
    lo = np.ascontiguousarray(lo, dtype=np.float64).reshape(-1, 3)
    hi = np.ascontiguousarray(hi, dtype=np.float64).reshape(-1, 3)
    out = np.empty((len(lo) * len(EDGE_CORNERS), 3), dtype=np.float32)
    _box_edges(lo, hi, EDGE_CORNERS, out)
    return out


@numba.njit(cache=True, nogil=True)
def _repeat_rows(rows, times, out):
    width = rows.shape[1]
    for row in range(rows.shape[0]):
        for k in range(times):
            for column in range(width):
                out[row * times + k, column] = rows[row, column]


def box_edge_colours(colours: np.ndarray) -> np.ndarray:
    """Each box's ``(N, 4)`` colour once per vertex of :func:`box_edges` (``(24 N, 4)``
    float32), by a kernel that leaves the interpreter lock (``np.repeat`` held it for a tenth of
    a live game's processing of 10,000 movers)."""
    colours = np.ascontiguousarray(colours, dtype=np.float32).reshape(-1, 4)
    out = np.empty((len(colours) * len(EDGE_CORNERS), 4), dtype=np.float32)
    _repeat_rows(colours, len(EDGE_CORNERS), out)
    return out


def argb(rgb, alpha: float = 1.0) -> np.uint32:
    """A premultiplied ARGB32 pixel value of ``rgb`` (components 0..1) at ``alpha``."""
    a = min(max(float(alpha), 0.0), 1.0)
    r, g, b = (int(round(min(max(float(c), 0.0), 1.0) * a * 255)) for c in rgb[:3])
    return np.uint32((int(round(a * 255)) << 24) | (r << 16) | (g << 8) | b)


def outline_image(lo: np.ndarray, hi: np.ndarray, awake: np.ndarray, axes: tuple[int, int],
                  transform: tuple[float, float, float, float, float, float],
                  size: tuple[int, int], colours: tuple[int, int], thickness: int = 1
                  ) -> tuple[np.ndarray, int, int] | None:
    """The outlines of boxes ``lo``..``hi`` (``(N, 3)``) seen along ``axes`` ``(u, v)`` on a
    ``size`` ``(width, height)`` pixel device, ``transform`` ``(m11, m12, m21, m22, dx, dy)`` mapping
    ``(u, v)`` to device pixels: ``(pixels, left, top)``, ``pixels`` a ``(h, w)`` uint32 ARGB32
    premultiplied buffer covering only the part of the device the outlines touch, its pixel
    ``(0, 0)`` at device pixel ``(left, top)``; ``None`` when no outline is visible.
    ``colours``: ``(sleeping, awake)`` pixel values (:func:`argb`)."""
    lo = np.ascontiguousarray(lo, dtype=np.float64).reshape(-1, 3)
    hi = np.ascontiguousarray(hi, dtype=np.float64).reshape(-1, 3)
    awake = np.ascontiguousarray(awake, dtype=np.uint8).reshape(-1)
    width, height = int(size[0]), int(size[1])
    if not len(lo) or width <= 0 or height <= 0:
        return None
    m = np.asarray(transform, dtype=np.float64)
    u, v = int(axes[0]), int(axes[1])
    x0, y0, x1, y1 = device_bounds(lo, hi, u, v, m, width, height)
    if x1 < x0 or y1 < y0:
        return None
    pixels = np.zeros((y1 - y0 + 1, x1 - x0 + 1), dtype=np.uint32)
    style = np.array([colours[0], colours[1], max(int(thickness), 1)], dtype=np.uint32)
    draw_outlines(pixels, (x0, y0), lo, hi, awake, (u, v), m, style)
    return pixels, x0, y0


def load_kernels() -> None:
    """Load (or compile) this module's kernels in this process on a tiny buffer, so that the
    first frame of bodies a view draws finds them ready (a worker thread calls this before)."""
    lo, hi = np.zeros((1, 3)), np.ones((1, 3))
    outline_image(lo, hi, np.ones(1, dtype=bool), (0, 1), (1.0, 0.0, 0.0, 1.0, 0.0, 0.0), (4, 4),
                  (1, 2), 1)
    finite_bounds(lo, hi, 0, 1)
    box_edges(lo, hi)
    box_edge_colours(np.ones((1, 4)))
