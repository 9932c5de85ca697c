"""Brush builders for tools and the demo level: boxes, ramps and upright prisms.

Face points follow the ``.map`` convention (clockwise seen from outside), with the points laid
on the brush's own corners so a file written from them reads naturally.
"""
from __future__ import annotations

import math

import numpy as np

from spatial.errors import GeometryError

from .brushes import Brush
from .faces import Face


def _face(p0, p1, p2, texture: str, valve: bool) -> Face:
    p0, p1, p2 = (tuple(float(c) for c in p) for p in (p0, p1, p2))
    if not valve:
        return Face((p0, p1, p2), texture)
    # Valve 220 axes: project on the dominant plane of the face, like editors do by default.
    normal = np.cross(np.subtract(p0, p1), np.subtract(p2, p1))
    axis = int(np.argmax(np.abs(normal)))
    u, v = {0: ((0, 1, 0), (0, 0, -1)), 1: ((1, 0, 0), (0, 0, -1)), 2: ((1, 0, 0), (0, -1, 0))}[axis]
    return Face((p0, p1, p2), texture, u_axis=u, v_axis=v)


def box_brush(entity: int, lo, hi, texture: str = "__TB_empty", valve: bool = False) -> Brush:
    """An axis-aligned box brush ``[lo, hi]`` owned by ``entity``."""
    lo = np.asarray(lo, dtype=np.float64).reshape(3)
    hi = np.asarray(hi, dtype=np.float64).reshape(3)
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()) or (hi <= lo).any():
        raise GeometryError(f"box brush needs lo < hi on every axis, got {lo.tolist()} {hi.tolist()}")
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    corners = [
        ((x0, y0, z0), (x0, y1, z0), (x0, y0, z1)),  # -x
        ((x1, y0, z0), (x1, y0, z1), (x1, y1, z0)),  # +x
        ((x0, y0, z0), (x0, y0, z1), (x1, y0, z0)),  # -y
        ((x0, y1, z0), (x1, y1, z0), (x0, y1, z1)),  # +y
        ((x0, y0, z0), (x1, y0, z0), (x0, y1, z0)),  # -z
        ((x0, y0, z1), (x0, y1, z1), (x1, y0, z1)),  # +z
    ]
    return Brush(entity, tuple(_face(*c, texture, valve) for c in corners)).check()


def ramp_brush(entity: int, lo, hi, rise_axis: int = 0, texture: str = "__TB_empty",
               valve: bool = False) -> Brush:
    """A wedge in the box ``[lo, hi]``: height 0 at ``lo`` rising to full height at ``hi``
    along ``rise_axis`` (0 = x, 1 = y): five faces, the slope non-axial."""
    lo = np.asarray(lo, dtype=np.float64).reshape(3)
    hi = np.asarray(hi, dtype=np.float64).reshape(3)
    if rise_axis not in (0, 1) or (hi <= lo).any():
        raise GeometryError("ramp needs rise_axis 0 or 1 and lo < hi on every axis")
    box = box_brush(entity, lo, hi, texture, valve)
    keep = [f for k, f in enumerate(box.faces) if k != 5 and k != 2 * rise_axis]
    # The slope: through the low edge at lo[rise] on the floor and the top edge at hi[rise].
    a = lo.copy()
    b = lo.copy()
    c = hi.copy()
    other = 1 - rise_axis
    b[other] = hi[other]
    c[other] = lo[other]
    pts = (a, b, c) if rise_axis == 0 else (a, c, b)
    slope = _face(*pts, texture, valve)
    return Brush(entity, tuple(keep) + (slope,)).check()


def prism_brush(entity: int, center, radius: float, heights: tuple[float, float], sides: int = 6,
                angle_deg: float = 0.0, texture: str = "__TB_empty", valve: bool = False) -> Brush:
    """An upright regular prism (pillar) with ``sides`` vertical faces around ``center``
    ``(x, y)``, from the floor to the top of ``heights`` ``(z0, z1)``."""
    z0, z1 = heights
    if sides < 3 or not (radius > 0 and z1 > z0):
        raise GeometryError("prism needs at least 3 sides, radius > 0 and z1 > z0")
    cx, cy = float(center[0]), float(center[1])
    faces = []
    for k in range(sides):
        t0 = math.radians(angle_deg) + 2 * math.pi * k / sides
        t1 = math.radians(angle_deg) + 2 * math.pi * (k + 1) / sides
        p = (round(cx + radius * math.cos(t0), 3), round(cy + radius * math.sin(t0), 3))
        q = (round(cx + radius * math.cos(t1), 3), round(cy + radius * math.sin(t1), 3))
        # counter-clockwise around z: outward normal is (q - p) x z ... clockwise from outside
        faces.append(_face((p[0], p[1], z0), (p[0], p[1], z1), (q[0], q[1], z0), texture, valve))
    faces.append(_face((cx, cy, z0), (cx + 1, cy, z0), (cx, cy + 1, z0), texture, valve))
    faces.append(_face((cx, cy, z1), (cx, cy + 1, z1), (cx + 1, cy, z1), texture, valve))
    return Brush(entity, tuple(faces)).check()
