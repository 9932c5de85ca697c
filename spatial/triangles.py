"""Triangle against axis-aligned box overlap by the separating-axis test.

The test follows Akenine-Möller ("Fast 3D Triangle-Box Overlap Testing", 2001): the triangle
and the box are disjoint exactly when one of 13 axes separates their projections: the three box
axes, the triangle normal and the nine cross products of a triangle edge with a box axis.

Conventions
-----------
* Closed, like every predicate in :mod:`spatial.geometry`: a triangle touching the box in a
  single point (a face, an edge or a corner) overlaps it. Boxes may be flat (``lo == hi``).
* Degenerate triangles are handled: a zero-area triangle is tested as the segment (or point)
  it is. A zero axis never separates, and every axis projects all three vertices, so a
  numerically meaningless normal of a sliver triangle cannot wrongly separate it.
* With small-integer (or dyadic) coordinates every step is exact in float64, so touching
  cases are decided exactly.
"""
from __future__ import annotations

import numba
import numpy as np

from .errors import GeometryError

__all__ = ["tri_box_overlap", "triangles_boxes_overlap", "triangle_bounds"]


@numba.njit(cache=True, nogil=True)
def _separates(ax, ay, az, p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z, hx, hy, hz):
    """True when axis ``a`` strictly separates the triangle ``p`` from the box ``[-h, h]``."""
    d0 = ax * p0x + ay * p0y + az * p0z
    d1 = ax * p1x + ay * p1y + az * p1z
    d2 = ax * p2x + ay * p2y + az * p2z
    radius = abs(ax) * hx + abs(ay) * hy + abs(az) * hz
    return min(d0, d1, d2) > radius or max(d0, d1, d2) < -radius


@numba.njit(cache=True, nogil=True)
def tri_box_overlap(v0, v1, v2, box_lo, box_hi) -> bool:
    """True when the closed triangle ``v0 v1 v2`` meets the closed box ``[box_lo, box_hi]``.

    A compiled scalar kernel: call it from other ``numba.njit`` kernels (e.g. a triangle
    octree's insertion loop) with ``(3,)`` float64 arrays or array rows; from Python use
    :func:`triangles_boxes_overlap`, which validates and vectorises. Inputs must be finite and
    ``box_lo <= box_hi``; this kernel does not check.
    """
    hx = 0.5 * (box_hi[0] - box_lo[0])
    hy = 0.5 * (box_hi[1] - box_lo[1])
    hz = 0.5 * (box_hi[2] - box_lo[2])
    cx = 0.5 * (box_hi[0] + box_lo[0])
    cy = 0.5 * (box_hi[1] + box_lo[1])
    cz = 0.5 * (box_hi[2] + box_lo[2])
    # Triangle relative to the box centre.
    p0x, p0y, p0z = v0[0] - cx, v0[1] - cy, v0[2] - cz
    p1x, p1y, p1z = v1[0] - cx, v1[1] - cy, v1[2] - cz
    p2x, p2y, p2z = v2[0] - cx, v2[1] - cy, v2[2] - cz

    # Box axes: the bounding boxes overlap.
    if min(p0x, p1x, p2x) > hx or max(p0x, p1x, p2x) < -hx:
        return False
    if min(p0y, p1y, p2y) > hy or max(p0y, p1y, p2y) < -hy:
        return False
    if min(p0z, p1z, p2z) > hz or max(p0z, p1z, p2z) < -hz:
        return False

    e0x, e0y, e0z = p1x - p0x, p1y - p0y, p1z - p0z
    e1x, e1y, e1z = p2x - p1x, p2y - p1y, p2z - p1z
    e2x, e2y, e2z = p0x - p2x, p0y - p2y, p0z - p2z

    # Edge x box-axis cross products: (1,0,0) x e = (0, -ez, ey), and so on.
    for ex, ey, ez in ((e0x, e0y, e0z), (e1x, e1y, e1z), (e2x, e2y, e2z)):
        if _separates(0.0, -ez, ey, p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z, hx, hy, hz):
            return False
        if _separates(ez, 0.0, -ex, p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z, hx, hy, hz):
            return False
        if _separates(-ey, ex, 0.0, p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z, hx, hy, hz):
            return False

    # Triangle normal (zero for a degenerate triangle, which then never separates).
    nx = e0y * e1z - e0z * e1y
    ny = e0z * e1x - e0x * e1z
    nz = e0x * e1y - e0y * e1x
    if _separates(nx, ny, nz, p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z, hx, hy, hz):
        return False
    return True


@numba.njit(cache=True, nogil=True)
def _overlap_many(v0, v1, v2, lo, hi, out):
    for k in range(len(out)):
        out[k] = tri_box_overlap(v0[k], v1[k], v2[k], lo[k], hi[k])


def _as_points(name, value):
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape[-1:] != (3,):
        raise GeometryError(f"{name}: last axis must have length 3, got shape {arr.shape}")
    return arr


def triangles_boxes_overlap(v0, v1, v2, lo, hi) -> np.ndarray:
    """Closed triangle-box overlap for many pairs.

    Parameters
    ----------
    v0, v1, v2 : array_like, shape (..., 3)
        Triangle corners.
    lo, hi : array_like, shape (..., 3)
        Box bounds. All five arguments broadcast against each other, so one box against many
        triangles (``lo`` of shape ``(3,)``) or one triangle against many boxes works.

    Returns
    -------
    ndarray of bool, shape (...)
        True where the triangle touches or overlaps the box.

    Raises
    ------
    GeometryError
        For non-finite coordinates, a last axis other than 3, or a box with ``lo > hi``.
    """
    points = [_as_points(name, value) for name, value in
              (("v0", v0), ("v1", v1), ("v2", v2), ("lo", lo), ("hi", hi))]
    try:
        arrays = np.broadcast_arrays(*points)
    except ValueError as exc:
        raise GeometryError(f"triangles and boxes do not broadcast: {exc}") from None
    shape = arrays[0].shape[:-1]
    flat = [np.ascontiguousarray(a.reshape(-1, 3)) for a in arrays]
    for name, arr in zip(("v0", "v1", "v2", "lo", "hi"), flat):
        finite = np.isfinite(arr).all(axis=1)
        if not finite.all():
            row = int(np.flatnonzero(~finite)[0])
            raise GeometryError(f"{name}[{row}]: coordinates must be finite, got "
                                f"{arr[row].tolist()}")
    flat_v0, flat_v1, flat_v2, flat_lo, flat_hi = flat
    inverted = (flat_lo > flat_hi).any(axis=1)
    if inverted.any():
        row = int(np.flatnonzero(inverted)[0])
        raise GeometryError(f"box {row}: lo {flat_lo[row].tolist()} exceeds hi "
                            f"{flat_hi[row].tolist()}")
    out = np.empty(len(flat_v0), dtype=np.bool_)
    _overlap_many(flat_v0, flat_v1, flat_v2, flat_lo, flat_hi, out)
    return out.reshape(shape)


def triangle_bounds(v0, v1, v2) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned bounds ``(lo, hi)`` of triangles, each of the broadcast shape ``(..., 3)``."""
    v0, v1, v2 = (np.asarray(v, dtype=np.float64) for v in (v0, v1, v2))
    return np.minimum(np.minimum(v0, v1), v2), np.maximum(np.maximum(v0, v1), v2)
