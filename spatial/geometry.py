"""Vectorised geometric predicates on axis-aligned boxes, rays, spheres and frusta.

Conventions
-----------
* A box is a pair ``lo``, ``hi`` of ``(..., 3)`` float64 arrays with ``lo <= hi``, every
  coordinate within ``±MAX_COORDINATE``.
* Every test is **closed**: touching counts as overlapping, a point on a face is inside,
  a ray grazing an edge hits.
* A plane is ``(nx, ny, nz, d)``; a point ``p`` is on the inner side when ``n . p + d >= 0``.
  A frustum is six such planes with normals pointing inwards.

All functions broadcast over leading dimensions, so one call tests one query against many boxes
(or many against many) without Python loops. The tree backends use the same formulas in their
compiled kernels; these are the reference the oracle (the brute-force backend) is built on.
"""
from __future__ import annotations

import numba
import numpy as np

from .errors import GeometryError

__all__ = [
    "as_boxes", "boxes_overlap", "box_contains_box", "box_contains_point", "ray_box",
    "sphere_box", "frustum_box", "frustum_planes_from_camera", "normalize_planes",
    "box_union", "MAX_COORDINATE",
]

#: the largest coordinate magnitude an index accepts, in level units. Far beyond any game world
#: (a kilometre-scale level spans ~1e5 units), yet small enough that sizes, areas and
#: power-of-two root cubes computed from it stay finite and exact enough in float64; larger
#: coordinates (1e308) are refused with the offending row rather than overflowing a tree.
MAX_COORDINATE = 1e12


def as_boxes(lo, hi, *, dims: int = 3, what: str = "boxes") -> tuple[np.ndarray, np.ndarray]:
    """Validate and return ``(lo, hi)`` as contiguous ``(N, dims)`` float64 arrays.

    Raises :class:`GeometryError` naming the first offending row for NaN/inf coordinates,
    coordinates outside ``±MAX_COORDINATE``, wrong shapes or inverted boxes (``lo > hi``).
    """
    lo = np.ascontiguousarray(np.asarray(lo, dtype=np.float64).reshape(-1, dims))
    hi = np.ascontiguousarray(np.asarray(hi, dtype=np.float64).reshape(-1, dims))
    if lo.shape != hi.shape:
        raise GeometryError(f"{what}: lo has shape {lo.shape} but hi has shape {hi.shape}")
    not_finite, inverted = _first_bad_rows(lo, hi)
    if not_finite >= 0:
        row = int(not_finite)
        if np.isfinite(lo[row]).all() and np.isfinite(hi[row]).all():
            raise GeometryError(f"{what}[{row}]: coordinates must lie within ±{MAX_COORDINATE:g}, "
                                f"got lo={lo[row].tolist()} hi={hi[row].tolist()}")
        raise GeometryError(f"{what}[{row}]: coordinates must be finite, got lo={lo[row].tolist()}"
                            f" hi={hi[row].tolist()}")
    if inverted >= 0:
        row = int(inverted)
        raise GeometryError(f"{what}[{row}]: lo {lo[row].tolist()} exceeds hi {hi[row].tolist()}")
    return lo, hi


@numba.njit(cache=True, nogil=True)
def _first_bad_rows(lo, hi):
    """First row with a coordinate that is not finite or out of range, and first inverted row
    (``-1``: none), in one pass: validating a million boxes with numpy's chained masks costs
    several full passes."""
    not_finite = -1
    inverted = -1
    for i in range(lo.shape[0]):
        for a in range(lo.shape[1]):
            x = lo[i, a]
            y = hi[i, a]
            # false for NaN and ±inf too
            if not_finite < 0 and not (abs(x) <= MAX_COORDINATE and abs(y) <= MAX_COORDINATE):
                not_finite = i
            elif inverted < 0 and x > y:
                inverted = i
        if not_finite >= 0:
            break
    return not_finite, inverted


def boxes_overlap(lo_a, hi_a, lo_b, hi_b) -> np.ndarray:
    """Closed overlap: ``lo_a <= hi_b`` and ``lo_b <= hi_a`` on every axis."""
    return np.all((np.asarray(lo_a) <= hi_b) & (np.asarray(lo_b) <= hi_a), axis=-1)


def box_contains_box(outer_lo, outer_hi, inner_lo, inner_hi) -> np.ndarray:
    """True where the inner box lies inside the outer one (faces may coincide)."""
    return np.all((np.asarray(outer_lo) <= inner_lo) & (np.asarray(inner_hi) <= outer_hi), axis=-1)


def box_contains_point(lo, hi, point) -> np.ndarray:
    """True where ``point`` lies in the closed box."""
    return np.all((np.asarray(lo) <= point) & (np.asarray(point) <= hi), axis=-1)


def box_union(lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """Bounding box of a set of boxes; an empty set gives an inverted (+inf, -inf) box."""
    lo = np.asarray(lo, dtype=np.float64).reshape(-1, 3)
    hi = np.asarray(hi, dtype=np.float64).reshape(-1, 3)
    if len(lo) == 0:
        return np.full(3, np.inf), np.full(3, -np.inf)
    # column by column: numpy reduces an (n, 3) array over axis 0 with a 3-wide inner loop run
    # n times, about twenty times slower than three column reductions (2 ms for 80,000 boxes)
    return (np.array([lo[:, k].min() for k in range(3)]),
            np.array([hi[:, k].max() for k in range(3)]))


def ray_box(origin, direction, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """Slab test of rays against boxes.

    Returns ``(hit, t)``: ``hit`` is True where the ray ``origin + t * direction`` with ``t >= 0``
    meets the closed box, and ``t`` is the entry distance (0 when the origin is inside; ``inf``
    where there is no hit). ``t`` is measured in multiples of ``direction``'s length.

    A zero direction component is handled without dividing by zero: the ray then hits only if
    the origin lies within that slab.
    """
    origin = np.asarray(origin, dtype=np.float64)
    direction = np.asarray(direction, dtype=np.float64)
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    parallel = direction == 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(parallel, 0.0, 1.0 / np.where(parallel, 1.0, direction))
        t1 = (lo - origin) * inv
        t2 = (hi - origin) * inv
    t_near = np.where(parallel, -np.inf, np.minimum(t1, t2))
    t_far = np.where(parallel, np.inf, np.maximum(t1, t2))
    inside_slab = (lo <= origin) & (origin <= hi)
    slab_ok = np.where(parallel, inside_slab, True)
    t_enter = np.max(t_near, axis=-1)
    t_exit = np.min(t_far, axis=-1)
    t_enter = np.maximum(t_enter, 0.0)
    hit = np.all(slab_ok, axis=-1) & (t_enter <= t_exit)
    return hit, np.where(hit, t_enter, np.inf)


def sphere_box(center, radius, lo, hi) -> np.ndarray:
    """True where the closed sphere touches or overlaps the closed box."""
    center = np.asarray(center, dtype=np.float64)
    closest = np.clip(center, lo, hi)
    d2 = np.sum((closest - center) ** 2, axis=-1)
    return d2 <= np.asarray(radius, dtype=np.float64) ** 2


def normalize_planes(planes) -> np.ndarray:
    """Return ``(K, 4)`` planes with unit normals, rejecting zero normals and NaNs."""
    planes = np.asarray(planes, dtype=np.float64).reshape(-1, 4)
    if not np.isfinite(planes).all():
        raise GeometryError("frustum planes must be finite")
    norms = np.linalg.norm(planes[:, :3], axis=1)
    if (norms == 0).any():
        raise GeometryError(f"frustum plane {int(np.flatnonzero(norms == 0)[0])} has a zero normal")
    return planes / norms[:, None]


def frustum_box(planes, lo, hi) -> np.ndarray:
    """True where a box is not entirely outside any plane of the frustum.

    This is the standard conservative plane/box test used for culling (the "positive vertex"
    test): a box that is outside one plane is culled; a box near a frustum corner may be kept
    although it misses the frustum. Every backend and the oracle use exactly this test.
    """
    planes = np.asarray(planes, dtype=np.float64).reshape(-1, 4)
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    keep = np.ones(np.broadcast_shapes(lo.shape, hi.shape)[:-1], dtype=bool)
    for plane in planes:
        normal = plane[:3]
        positive = np.where(normal >= 0, hi, lo)  # corner furthest along the normal
        keep &= positive @ normal + plane[3] >= 0
    return keep


def frustum_planes_from_camera(position, forward, up, fov_y_deg: float, aspect: float,
                               near: float, far: float) -> np.ndarray:
    """Six inward-facing unit planes (near, far, left, right, bottom, top) of a perspective camera.

    ``fov_y_deg`` is the full vertical field of view in degrees; ``aspect`` is width / height.
    """
    position = np.asarray(position, dtype=np.float64)
    f = np.asarray(forward, dtype=np.float64)
    u = np.asarray(up, dtype=np.float64)
    if not (0 < fov_y_deg < 180):
        raise GeometryError(f"fov_y_deg must be in (0, 180), got {fov_y_deg}")
    if not (aspect > 0 and 0 < near < far and np.isfinite(far)):
        raise GeometryError(f"need aspect > 0 and 0 < near < far < inf, got aspect={aspect}, "
                            f"near={near}, far={far}")
    fn = np.linalg.norm(f)
    if fn == 0 or not np.isfinite(fn):
        raise GeometryError("camera forward vector must be finite and non-zero")
    f = f / fn
    right = np.cross(f, u)
    rn = np.linalg.norm(right)
    if rn < 1e-12:
        raise GeometryError("camera up vector must not be parallel to forward")
    right /= rn
    up_true = np.cross(right, f)
    half_v = np.radians(fov_y_deg) / 2.0
    half_h = np.arctan(np.tan(half_v) * aspect)
    planes = []

    def plane(normal, point):
        normal = normal / np.linalg.norm(normal)
        planes.append(np.append(normal, -normal @ point))

    plane(f, position + f * near)            # near: inside is in front of it
    plane(-f, position + f * far)            # far
    # side planes pass through the eye; their inward normals lean towards the view axis
    plane(np.cos(half_h) * right + np.sin(half_h) * f, position)    # left
    plane(-np.cos(half_h) * right + np.sin(half_h) * f, position)   # right
    plane(np.cos(half_v) * up_true + np.sin(half_v) * f, position)  # bottom
    plane(-np.cos(half_v) * up_true + np.sin(half_v) * f, position)  # top
    return np.array(planes)
