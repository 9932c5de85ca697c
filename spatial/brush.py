"""Convex brushes (Quake / TrenchBroom style) built from their bounding planes.

Conventions
-----------
* A brush is the intersection of half-spaces ``normal . x <= dist``: normals point **out** of
  the solid. :func:`brush_from_planes` normalises the normals, so any non-zero length works.
* A Quake ``.map`` face line lists three points ``( x y z ) ( x y z ) ( x y z ) TEXTURE ...``;
  :func:`plane_from_points` turns them into an outward plane with the convention of id's qbsp
  (``normal = (p0 - p1) x (p2 - p1)``, i.e. the points run clockwise seen from outside).
* Face polygons of a :class:`ConvexBrush` list vertex indices counter-clockwise seen from
  outside, so ``(v1 - v0) x (v2 - v0)`` points along the face's outward normal.

How a brush is built
--------------------
For every plane a huge square lying in that plane is clipped by every other plane
(Sutherland-Hodgman, as qbsp's ``CreateBrushWindings`` does). Each polygon edge remembers the
plane that cut it; an edge still lying on the huge square after all clips proves the brush
open. Every vertex is then recomputed as the exact intersection of its face plane with the
two planes of its adjacent edges, and vertices shared between faces are merged within a
tolerance relative to the brush size (a brush much smaller than its distance from the origin is
rebuilt about its own centre, so tolerances never depend on where it sits). A brush thinner
than that tolerance is degenerate. The kernel is compiled with numba;
:func:`brushes_from_planes` and :func:`brushes_from_plane_arrays` build a whole level in one
compiled call (about 10 microseconds per six-sided brush).
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from .errors import GeometryError

__all__ = [
    "ConvexBrush", "plane_from_points", "planes_from_points", "brush_from_planes",
    "brushes_from_planes", "brushes_from_plane_arrays", "build_brush_arrays", "BuiltBrushes",
    "is_closed_convex", "closure_problems",
]

# Kernel status codes.
_OK, _OPEN, _EMPTY, _DEGENERATE = 0, 1, 2, 3

# The huge starting square spans this many times the largest plane distance (plus one unit);
# a bounded brush whose vertices reach beyond it is reported as open.
_HUGE_FACTOR = 1.0e3
# Points this close to a plane (relative to the coordinate magnitude) count as on the plane;
# double rounding on the huge square stays about a thousand times below it.
_ON_PLANE_REL = 1.0e-9
# Vertices this close (relative to the brush extent) are merged into one.
_MERGE_REL = 1.0e-6
# Brushes smaller than this fraction of their distance from the origin are rebuilt about their
# centre, so that the on-plane and merge tolerances stay small relative to the brush itself
# (above it, the coordinate-based tolerance is already below 1e-5 of the brush extent).
_RECENTRE_BELOW = 1.0e-2


@dataclass(frozen=True, eq=False)
class ConvexBrush:
    """A closed convex polyhedron.

    Attributes
    ----------
    vertices : ndarray, shape (V, 3), float64
        Unique corner points.
    faces : tuple of ndarray
        One int64 index array per input plane, in plane order, listing that face's vertices
        counter-clockwise seen from outside. A redundant plane that touches the solid in fewer
        than three vertices has an empty array.
    normals : ndarray, shape (F, 3)
        Unit outward normals of the input planes.
    dists : ndarray, shape (F,)
        Plane distances matching ``normals`` (inside is ``normals @ x <= dists``).
    lo, hi : ndarray, shape (3,)
        Axis-aligned bounds of the vertices.
    """

    vertices: np.ndarray
    faces: tuple
    normals: np.ndarray
    dists: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    def edges(self) -> np.ndarray:
        """Unique undirected edges as an ``(E, 2)`` int64 array with ``a < b``, sorted."""
        pairs = [np.column_stack([face, np.roll(face, -1)]) for face in self.faces if len(face)]
        if not pairs:
            return np.empty((0, 2), dtype=np.int64)
        both = np.sort(np.concatenate(pairs), axis=1)
        return np.unique(both, axis=0)

    def triangles(self) -> np.ndarray:
        """Fan triangulation of every face, ``(T, 3)`` int64, counter-clockwise from outside."""
        tris = [np.column_stack([np.full(len(face) - 2, face[0]), face[1:-1], face[2:]])
                for face in self.faces if len(face) >= 3]
        if not tris:
            return np.empty((0, 3), dtype=np.int64)
        return np.concatenate(tris).astype(np.int64, copy=False)

    def volume(self) -> float:
        """Enclosed volume (divergence theorem over the fan triangles)."""
        tris = self.vertices[self.triangles()] - self.vertices[0]
        return float(np.einsum("ij,ij->i", tris[:, 0], np.cross(tris[:, 1], tris[:, 2])).sum()
                     / 6.0)


# --------------------------------------------------------------------------------------------
# planes from .map point triples


def planes_from_points(points, *, what: str = "brush") -> tuple[np.ndarray, np.ndarray]:
    """Outward planes of many ``.map`` face point triples.

    Parameters
    ----------
    points : array_like, shape (F, 3, 3)
        For each face the three points in file order.
    what : str
        Name used in error messages (e.g. ``"e1m1.map:120"``).

    Returns
    -------
    normals : ndarray, shape (F, 3)
        Unit normals pointing out of the brush.
    dists : ndarray, shape (F,)
        ``normals[k] . points[k, 0]``; the inside is ``normal . x <= dist``.

    Raises
    ------
    GeometryError
        For non-finite coordinates or three collinear (or coincident) points.
    """
    pts = np.asarray(points, dtype=np.float64)
    if pts.ndim != 3 or pts.shape[1:] != (3, 3):
        raise GeometryError(f"{what}: plane points must have shape (F, 3, 3), got {pts.shape}")
    finite = np.isfinite(pts).all(axis=(1, 2))
    if not finite.all():
        k = int(np.flatnonzero(~finite)[0])
        raise GeometryError(f"{what}: face {k}: plane points must be finite, got "
                            f"{pts[k].tolist()}")
    p0, p1, p2 = pts[:, 0], pts[:, 1], pts[:, 2]
    normals = np.cross(p0 - p1, p2 - p1)
    length = np.linalg.norm(normals, axis=1)
    # Collinearity is judged by the sine of the angle at p1, so it does not depend on scale.
    span = np.linalg.norm(p0 - p1, axis=1) * np.linalg.norm(p2 - p1, axis=1)
    bad = ~(length > 1e-12 * span) | (span == 0)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise GeometryError(f"{what}: face {k}: three collinear plane points {pts[k].tolist()}")
    normals /= length[:, None]
    dists = np.einsum("ij,ij->i", normals, p0)
    return normals, dists


def plane_from_points(p0, p1, p2, *, what: str = "plane") -> tuple[np.ndarray, float]:
    """Outward plane through three ``.map`` face points: ``(unit normal (3,), dist)``.

    See :func:`planes_from_points` for the convention and the errors raised.
    """
    normals, dists = planes_from_points(np.stack([np.asarray(p, dtype=np.float64).reshape(3)
                                                  for p in (p0, p1, p2)])[None], what=what)
    return normals[0], float(dists[0])


# --------------------------------------------------------------------------------------------
# compiled kernel
#
# Rows are copied coordinate by coordinate, never as array slices (``a[k] = b[k]``): the kernel
# computes the same either way, but numba compiles slice assignment into general broadcasting
# code, which doubled the time a first start spends compiling this kernel.


@numba.njit(cache=True, nogil=True)
def _clip_polygon(poly, lab, m, normal, dist, plane, eps, out_poly, out_lab, side, side_dist):
    """Keep the part of polygon ``poly[:m]`` with ``normal . x <= dist`` (closed, within eps).

    ``lab[k]`` is the plane that made edge ``poly[k] -> poly[k+1]``; the new edge along the
    clip plane gets label ``plane``. Returns the new vertex count written to ``out_*``, or -1
    when every vertex lies on the clip plane (the caller decides what a coplanar plane means).
    ``side`` and ``side_dist`` are scratch arrays of at least ``m`` entries.
    """
    n_out = 0
    n_in = 0
    for k in range(m):
        s = (normal[0] * poly[k, 0] + normal[1] * poly[k, 1] + normal[2] * poly[k, 2]) - dist
        side_dist[k] = s
        if s > eps:
            side[k] = 1
            n_out += 1
        elif s < -eps:
            side[k] = -1
            n_in += 1
        else:
            side[k] = 0
    if n_out == 0:
        if n_in == 0:
            return -1
        for k in range(m):
            for a in range(3):
                out_poly[k, a] = poly[k, a]
            out_lab[k] = lab[k]
        return m
    if n_in == 0:
        # Only on-plane and outside points: what is left is at most an edge or a point.
        count = 0
        for k in range(m):
            if side[k] == 0:
                for a in range(3):
                    out_poly[count, a] = poly[k, a]
                out_lab[count] = plane
                count += 1
        return count
    count = 0
    for k in range(m):
        nxt = k + 1 if k + 1 < m else 0
        sk = side[k]
        sn = side[nxt]
        if sk <= 0:
            for a in range(3):
                out_poly[count, a] = poly[k, a]
            out_lab[count] = plane if (sk == 0 and sn == 1) else lab[k]
            count += 1
        if (sk == -1 and sn == 1) or (sk == 1 and sn == -1):
            t = side_dist[k] / (side_dist[k] - side_dist[nxt])
            for a in range(3):
                out_poly[count, a] = poly[k, a] + t * (poly[nxt, a] - poly[k, a])
            out_lab[count] = plane if sk == -1 else lab[k]
            count += 1
    return count


@numba.njit(cache=True, nogil=True)
def _extent_of_rows(points, n, centre_out):
    """Largest side of the bounding box of ``points[:n]`` (``n >= 1``); its centre goes to
    ``centre_out``."""
    extent = 0.0
    for a in range(3):
        lo = points[0, a]
        hi = points[0, a]
        for k in range(n):
            lo = min(lo, points[k, a])
            hi = max(hi, points[k, a])
        centre_out[a] = 0.5 * (lo + hi)
        extent = max(extent, hi - lo)
    return extent


@numba.njit(cache=True, nogil=True)
def _build_brush_local(normals, dists, scale, vert_out, face_idx_out, face_len_out):
    """Build one brush whose planes lie within about ``scale`` of the origin.

    Returns ``(status, detail_plane, n_vertices, n_face_indices)``; see :func:`_build_brush`.
    """
    n_faces = normals.shape[0]
    cap = n_faces + 4
    huge = _HUGE_FACTOR * scale
    eps = _ON_PLANE_REL * scale

    poly = np.empty((cap, 3))
    lab = np.empty(cap, dtype=np.int64)
    tmp = np.empty((cap, 3))
    tmp_lab = np.empty(cap, dtype=np.int64)
    side = np.empty(cap, dtype=np.int64)
    side_dist = np.empty(cap)
    raw = np.empty((n_faces * cap, 3))
    raw_start = np.zeros(n_faces + 1, dtype=np.int64)
    any_vertex = False
    n_raw = 0
    for i in range(n_faces):
        nx, ny, nz = normals[i, 0], normals[i, 1], normals[i, 2]
        # In-plane axes u, v with u x v = n, so the square runs counter-clockwise from outside.
        ax, ay, az = abs(nx), abs(ny), abs(nz)
        if ax <= ay and ax <= az:
            ux, uy, uz = 0.0, nz, -ny          # n x (1, 0, 0)
        elif ay <= az:
            ux, uy, uz = -nz, 0.0, nx          # n x (0, 1, 0)
        else:
            ux, uy, uz = ny, -nx, 0.0          # n x (0, 0, 1)
        ul = np.sqrt(ux * ux + uy * uy + uz * uz)
        ux, uy, uz = ux / ul, uy / ul, uz / ul
        vx, vy, vz = ny * uz - nz * uy, nz * ux - nx * uz, nx * uy - ny * ux
        cx, cy, cz = nx * dists[i], ny * dists[i], nz * dists[i]
        corner_u = (-1.0, 1.0, 1.0, -1.0)
        corner_v = (-1.0, -1.0, 1.0, 1.0)
        for k in range(4):
            su = corner_u[k] * huge
            sv = corner_v[k] * huge
            poly[k, 0] = cx + su * ux + sv * vx
            poly[k, 1] = cy + su * uy + sv * vy
            poly[k, 2] = cz + su * uz + sv * vz
            lab[k] = -1
        m = 4
        for j in range(n_faces):
            if j == i or m == 0:
                continue
            count = _clip_polygon(poly, lab, m, normals[j], dists[j], j, eps, tmp, tmp_lab, side,
                                  side_dist)
            if count == -1:
                # Coplanar planes facing the same way duplicate a face: the first one keeps it.
                same_way = (nx * normals[j, 0] + ny * normals[j, 1] + nz * normals[j, 2]) > 0.0
                if same_way and j < i:
                    m = 0
                continue
            m = count
            for k in range(m):
                for a in range(3):
                    poly[k, a] = tmp[k, a]
                lab[k] = tmp_lab[k]
        if m > 0:
            any_vertex = True
        if m >= 3:
            for k in range(m):
                if lab[k] < 0:
                    return _OPEN, i, 0, 0
            # Recompute each corner as the exact meet of this plane and its two edge planes.
            for k in range(m):
                a = lab[k - 1] if k > 0 else lab[m - 1]
                b = lab[k]
                r = n_raw + k
                raw[r, 0] = poly[k, 0]
                raw[r, 1] = poly[k, 1]
                raw[r, 2] = poly[k, 2]
                if a != b:
                    # x = (d_i (n_a x n_b) + d_a (n_b x n_i) + d_b (n_i x n_a)) / det
                    abx = normals[a, 1] * normals[b, 2] - normals[a, 2] * normals[b, 1]
                    aby = normals[a, 2] * normals[b, 0] - normals[a, 0] * normals[b, 2]
                    abz = normals[a, 0] * normals[b, 1] - normals[a, 1] * normals[b, 0]
                    det = nx * abx + ny * aby + nz * abz
                    if abs(det) > 1e-6:
                        bix = normals[b, 1] * nz - normals[b, 2] * ny
                        biy = normals[b, 2] * nx - normals[b, 0] * nz
                        biz = normals[b, 0] * ny - normals[b, 1] * nx
                        iax = ny * normals[a, 2] - nz * normals[a, 1]
                        iay = nz * normals[a, 0] - nx * normals[a, 2]
                        iaz = nx * normals[a, 1] - ny * normals[a, 0]
                        raw[r, 0] = (dists[i] * abx + dists[a] * bix + dists[b] * iax) / det
                        raw[r, 1] = (dists[i] * aby + dists[a] * biy + dists[b] * iay) / det
                        raw[r, 2] = (dists[i] * abz + dists[a] * biz + dists[b] * iaz) / det
            n_raw += m
        raw_start[i + 1] = n_raw

    if n_raw == 0:
        return (_DEGENERATE if any_vertex else _EMPTY), -1, 0, 0

    # Merge coincident corners with a tolerance relative to the brush size.
    extent = _extent_of_rows(raw, n_raw, np.empty(3))
    tol = max(_MERGE_REL * extent, 100.0 * eps)
    remap = np.empty(n_raw, dtype=np.int64)
    n_vert = 0
    for k in range(n_raw):
        found = -1
        for q in range(n_vert):
            if (abs(vert_out[q, 0] - raw[k, 0]) <= tol and abs(vert_out[q, 1] - raw[k, 1]) <= tol
                    and abs(vert_out[q, 2] - raw[k, 2]) <= tol):
                found = q
                break
        if found < 0:
            for a in range(3):
                vert_out[n_vert, a] = raw[k, a]
            found = n_vert
            n_vert += 1
        remap[k] = found

    # Face index lists without repeated neighbours; fewer than three corners is no face.
    n_idx = 0
    area = 0.0
    volume = 0.0
    ox, oy, oz = vert_out[0, 0], vert_out[0, 1], vert_out[0, 2]
    for i in range(n_faces):
        start = n_idx
        for k in range(raw_start[i], raw_start[i + 1]):
            v = remap[k]
            if n_idx > start and face_idx_out[n_idx - 1] == v:
                continue
            face_idx_out[n_idx] = v
            n_idx += 1
        while n_idx - start > 1 and face_idx_out[n_idx - 1] == face_idx_out[start]:
            n_idx -= 1
        if n_idx - start < 3:
            n_idx = start
        face_len_out[i] = n_idx - start
        for k in range(start + 1, n_idx - 1):
            i0, i1, i2 = face_idx_out[start], face_idx_out[k], face_idx_out[k + 1]
            p0x, p0y, p0z = vert_out[i0, 0], vert_out[i0, 1], vert_out[i0, 2]
            e1x, e1y, e1z = vert_out[i1, 0] - p0x, vert_out[i1, 1] - p0y, vert_out[i1, 2] - p0z
            e2x, e2y, e2z = vert_out[i2, 0] - p0x, vert_out[i2, 1] - p0y, vert_out[i2, 2] - p0z
            cxx = e1y * e2z - e1z * e2y
            cxy = e1z * e2x - e1x * e2z
            cxz = e1x * e2y - e1y * e2x
            area += 0.5 * np.sqrt(cxx * cxx + cxy * cxy + cxz * cxz)
            volume += ((p0x - ox) * cxx + (p0y - oy) * cxy + (p0z - oz) * cxz) / 6.0
    # A slab of thickness t has volume ~ t * area / 2: demand a thickness above the tolerance.
    if n_idx == 0 or volume <= tol * area:
        return _DEGENERATE, -1, n_vert, 0
    return _OK, -1, n_vert, n_idx


@numba.njit(cache=True, nogil=True)
def _build_brush(normals, dists, vert_out, face_idx_out, face_len_out):
    """Build one brush; returns ``(status, detail_plane, n_vertices, n_face_indices)``.

    ``vert_out`` and ``face_idx_out`` need room for ``F * (F + 4)`` entries (every face polygon
    has at most ``F + 4`` vertices: four from the square, one more per clip).
    """
    scale = 1.0
    for i in range(len(dists)):
        scale = max(scale, abs(dists[i]) + 1.0)
    result = _build_brush_local(normals, dists, scale, vert_out, face_idx_out, face_len_out)
    n_vert = result[2]
    if n_vert == 0:
        return result
    # Tolerances must follow the brush size, not its distance from the origin: a brush much
    # smaller than its distance from the origin is built again about the centre found by the
    # first pass, with its planes translated there.
    centre = np.empty(3)
    extent = _extent_of_rows(vert_out, n_vert, centre)
    if extent > _RECENTRE_BELOW * scale:
        return result
    local = np.empty(len(dists))
    local_scale = 1e-9 * scale
    for i in range(len(dists)):
        local[i] = dists[i] - (normals[i, 0] * centre[0] + normals[i, 1] * centre[1]
                               + normals[i, 2] * centre[2])
        local_scale = max(local_scale, abs(local[i]))
    result = _build_brush_local(normals, local, local_scale, vert_out, face_idx_out,
                                face_len_out)
    for k in range(result[2]):
        for a in range(3):
            vert_out[k, a] += centre[a]
    return result


@numba.njit(cache=True, nogil=True)
def _build_brushes(normals, dists, face_offsets, slot_offsets, vert_out, face_idx_out,
                   face_len_out, status, detail, n_verts, n_idx, lo_out, hi_out):
    """Build every brush ``b`` from planes ``face_offsets[b]:face_offsets[b + 1]``."""
    for b in range(len(face_offsets) - 1):
        f0, f1 = face_offsets[b], face_offsets[b + 1]
        s0, s1 = slot_offsets[b], slot_offsets[b + 1]
        st, det, nv, ni = _build_brush(normals[f0:f1], dists[f0:f1], vert_out[s0:s1],
                                       face_idx_out[s0:s1], face_len_out[f0:f1])
        status[b] = st
        detail[b] = det
        n_verts[b] = nv
        n_idx[b] = ni
        for a in range(3):
            lo = np.inf
            hi = -np.inf
            for k in range(s0, s0 + nv):
                lo = min(lo, vert_out[k, a])
                hi = max(hi, vert_out[k, a])
            lo_out[b, a] = lo
            hi_out[b, a] = hi


# --------------------------------------------------------------------------------------------
# public builders


def _checked_planes(normals, dists, counts, names) -> tuple[np.ndarray, np.ndarray]:
    """Validate concatenated planes and return them with unit normals."""
    normals = np.asarray(normals, dtype=np.float64)
    dists = np.asarray(dists, dtype=np.float64)
    if normals.ndim != 2 or normals.shape[1] != 3 or dists.shape != (normals.shape[0],):
        raise GeometryError(f"{names(0)}: need normals (F, 3) and dists (F,), got "
                            f"{normals.shape} and {dists.shape}")
    owner = np.repeat(np.arange(len(counts)), counts)
    first_plane = np.concatenate([[0], np.cumsum(counts)[:-1]]) if len(counts) else counts
    finite = np.isfinite(normals).all(axis=1) & np.isfinite(dists)
    if not finite.all():
        k = int(np.flatnonzero(~finite)[0])
        raise GeometryError(f"{names(owner[k])}: plane {k - first_plane[owner[k]]} is not finite"
                            f" (normal {normals[k].tolist()}, dist {float(dists[k])})")
    length = np.sqrt(np.einsum("ij,ij->i", normals, normals))
    if (length == 0).any():
        k = int(np.flatnonzero(length == 0)[0])
        raise GeometryError(f"{names(owner[k])}: plane {k - first_plane[owner[k]]} has a zero "
                            f"normal")
    return (np.ascontiguousarray(normals / length[:, None]),
            np.ascontiguousarray(dists / length))


def _failure(what: str, status: int, detail: int, n_planes: int) -> GeometryError:
    if n_planes < 4:
        return GeometryError(f"{what}: open (unbounded): {n_planes} planes cannot enclose a "
                             f"volume, at least 4 are needed")
    if status == _OPEN:
        return GeometryError(f"{what}: open (unbounded): the solid extends without limit along "
                             f"plane {detail}")
    if status == _EMPTY:
        return GeometryError(f"{what}: empty: the half-spaces of its planes do not intersect")
    return GeometryError(f"{what}: degenerate: the planes enclose zero volume (flat, a line "
                         f"or a point)")


def brushes_from_plane_arrays(normals, dists, face_counts, *, what: str = "brush",
                              on_error: str = "raise") -> list:
    """Build many brushes whose planes are concatenated, in one compiled call.

    This is the fast path for importers: brush ``b`` owns the next ``face_counts[b]`` rows.

    Parameters
    ----------
    normals : array_like, shape (F_total, 3)
        Outward plane normals of every brush, one brush after the other.
    dists : array_like, shape (F_total,)
        Matching plane distances; inside is ``normal . x <= dist``.
    face_counts : array_like of int, shape (B,)
        Number of planes of each brush.
    what : str
        Prefix for error messages; the brush index is appended (``"brush 12: ..."``).
    on_error : {"raise", "none"}
        ``"raise"`` raises :class:`GeometryError` for the first open, empty or degenerate
        brush; ``"none"`` puts ``None`` in its place (invalid input such as NaN always raises).

    Returns
    -------
    list of ConvexBrush (or None where a brush failed and ``on_error="none"``)
    """
    return _build_many(normals, dists, face_counts, lambda b: f"{what} {b}", on_error)


def brushes_from_planes(planes, *, what: str = "brush", on_error: str = "raise") -> list:
    """Build many brushes in one compiled call.

    Parameters
    ----------
    planes : sequence of (normals, dists)
        One ``((F, 3), (F,))`` pair per brush; inside is ``normal . x <= dist``.
    what, on_error
        As for :func:`brushes_from_plane_arrays`.

    Returns
    -------
    list of ConvexBrush (or None where a brush failed and ``on_error="none"``)
    """
    planes = list(planes)
    if not planes:
        return []
    normals = [np.asarray(n, dtype=np.float64).reshape(-1, 3) for n, _ in planes]
    dists = [np.asarray(d, dtype=np.float64).reshape(-1) for _, d in planes]
    for b, (n, d) in enumerate(zip(normals, dists)):
        if len(n) != len(d):
            raise GeometryError(f"{what} {b}: {len(n)} normals but {len(d)} dists")
    counts = np.array([len(d) for d in dists], dtype=np.int64)
    return _build_many(np.concatenate(normals), np.concatenate(dists), counts,
                       lambda b: f"{what} {b}", on_error)


class BuiltBrushes:
    """Many brushes built in one compiled call, kept as level-wide arrays.

    A loader asks for bounds of every brush at once and makes a :class:`ConvexBrush` only when
    one is looked at (:meth:`brush`), so importing a level does not pay for thousands of small
    objects up front.

    Attributes
    ----------
    ok : ndarray of bool, shape (B,)
        Brushes that are closed convex solids.
    lo, hi : ndarray, shape (B, 3)
        Bounds of each brush (meaningless where ``ok`` is False).
    normals : ndarray, shape (F, 3)
        Unit plane normals of every brush, one brush after the other.
    dists : ndarray, shape (F,)
        Matching plane distances.
    face_offsets : ndarray of int64, shape (B + 1,)
        Brush ``b`` owns planes ``face_offsets[b]:face_offsets[b + 1]``.
    """

    __slots__ = ("ok", "lo", "hi", "normals", "dists", "face_offsets", "_vertices", "_indices",
                 "_vert_offsets", "_idx_offsets", "_face_ends")

    def __init__(self, ok, lo, hi, normals, dists, face_offsets, vertices, indices,
                 vert_offsets, idx_offsets, face_ends):
        self.ok, self.lo, self.hi = ok, lo, hi
        self.normals, self.dists, self.face_offsets = normals, dists, face_offsets
        self._vertices, self._indices = vertices, indices
        self._vert_offsets, self._idx_offsets, self._face_ends = vert_offsets, idx_offsets, face_ends

    def __len__(self) -> int:
        return len(self.ok)

    def brush(self, b: int) -> ConvexBrush | None:
        """Brush ``b`` as a :class:`ConvexBrush` (its own copies of the arrays), or None."""
        if not self.ok[b]:
            return None
        f0, f1 = int(self.face_offsets[b]), int(self.face_offsets[b + 1])
        idx = self._indices[int(self._idx_offsets[b]):int(self._idx_offsets[b + 1])].copy()
        ends = self._face_ends[f0:f1].tolist()
        starts = [0] + ends[:-1]
        v0, v1 = int(self._vert_offsets[b]), int(self._vert_offsets[b + 1])
        return ConvexBrush(vertices=self._vertices[v0:v1].copy(),
                           faces=tuple(idx[a:e] for a, e in zip(starts, ends)),
                           normals=self.normals[f0:f1], dists=self.dists[f0:f1],
                           lo=self.lo[b], hi=self.hi[b])


    def face_arrays(self, rows) -> tuple[np.ndarray, ...]:
        """The solids of brushes ``rows`` (closed ones only) as flat arrays, without a
        :class:`ConvexBrush` each: ``(vertices (V, 3), vertex offsets (R + 1,), face vertex
        indices (local to each brush), face starts and face lengths in those indices (one per
        plane), plane offsets (R + 1,))``: brush ``rows[k]`` owns ``vertices[vo[k]:vo[k + 1]]``
        and planes ``po[k]:po[k + 1]`` (a redundant plane has length 0), its faces exactly as
        :meth:`brush` would make them."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        if not self.ok[rows].all():
            raise ValueError("face_arrays needs closed brushes")
        nv = self._vert_offsets[rows + 1] - self._vert_offsets[rows]
        ni = self._idx_offsets[rows + 1] - self._idx_offsets[rows]
        nf = self.face_offsets[rows + 1] - self.face_offsets[rows]
        vo, io, po = _csr(nv), _csr(ni), _csr(nf)
        vertices = self._vertices[_ranges(self._vert_offsets[rows], nv)]
        indices = self._indices[_ranges(self._idx_offsets[rows], ni)]
        ends = self._face_ends[_ranges(self.face_offsets[rows], nf)]
        first = np.zeros(len(ends), dtype=bool)
        first[po[:-1][nf > 0]] = True
        starts = np.concatenate([[0], ends[:-1]]) if len(ends) else ends
        lengths = ends - np.where(first, 0, starts)
        face_starts = np.repeat(io[:-1], nf) + ends - lengths
        return vertices, vo, indices, face_starts, lengths, po


def _csr(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + c) for s, c in zip(starts, counts)])`` without the loop."""
    total = int(counts.sum())
    out = np.arange(total, dtype=np.int64)
    out += np.repeat(np.asarray(starts, dtype=np.int64) - _csr(counts)[:-1], counts)
    return out


def build_brush_arrays(normals, dists, face_counts, *, what: str = "brush",
                       on_error: str = "raise") -> BuiltBrushes:
    """Build many brushes whose planes are concatenated, in one compiled call.

    As :func:`brushes_from_plane_arrays`, but the result stays in level-wide arrays
    (:class:`BuiltBrushes`) until a brush is asked for.
    """
    return _build_arrays(normals, dists, face_counts, lambda b: f"{what} {b}", on_error)


#: brushes built per compiled call: the kernel writes into blocks sized for the worst case (60
#: rows for a box that uses 8 and 24), so a level is built in slices, each compacted before the
#: next, rather than with the blocks of every brush at once (about 380 MB for 200,000 boxes)
BUILD_SLICE = 32_768


def _build_arrays(normals, dists, counts, names, on_error) -> BuiltBrushes:
    if on_error not in ("raise", "none"):
        raise ValueError(f"on_error must be 'raise' or 'none', got {on_error!r}")
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    if (counts < 0).any() or counts.sum() != len(np.asarray(dists).reshape(-1)):
        raise GeometryError(f"{names(0)}: face counts sum to {int(counts.sum())} but "
                            f"{len(np.asarray(dists).reshape(-1))} planes were given")
    normals, dists = _checked_planes(normals, dists, counts, names)
    n_brushes = len(counts)
    face_offsets = np.zeros(n_brushes + 1, dtype=np.int64)
    np.cumsum(counts, out=face_offsets[1:])
    face_len_out = np.zeros(face_offsets[-1], dtype=np.int64)
    status = np.empty(n_brushes, dtype=np.int64)
    detail = np.empty(n_brushes, dtype=np.int64)
    lo_out = np.empty((n_brushes, 3))
    hi_out = np.empty((n_brushes, 3))
    vertex_parts, index_parts = [], []
    vertices_used = np.zeros(n_brushes, dtype=np.int64)
    indices_used = np.zeros(n_brushes, dtype=np.int64)
    for first in range(0, n_brushes, BUILD_SLICE):
        end = min(first + BUILD_SLICE, n_brushes)
        f0, f1 = int(face_offsets[first]), int(face_offsets[end])
        part_counts = counts[first:end]
        slot_offsets = _csr(part_counts * (part_counts + 4))
        vert_out = np.empty((slot_offsets[-1], 3))
        face_idx_out = np.empty(slot_offsets[-1], dtype=np.int64)
        n_verts = np.empty(end - first, dtype=np.int64)
        n_idx = np.empty(end - first, dtype=np.int64)
        part_status = status[first:end]
        _build_brushes(normals[f0:f1], dists[f0:f1], face_offsets[first:end + 1] - f0,
                       slot_offsets, vert_out, face_idx_out, face_len_out[f0:f1], part_status,
                       detail[first:end], n_verts, n_idx, lo_out[first:end], hi_out[first:end])
        part_status[part_counts < 4] = _OPEN  # whatever a kernel made of them, they cannot be closed
        if on_error == "raise" and (part_status != _OK).any():
            b = first + int(np.flatnonzero(part_status != _OK)[0])
            raise _failure(names(b), int(status[b]), int(detail[b]), int(counts[b]))
        ok = part_status == _OK
        room = np.diff(slot_offsets)  # a failed brush keeps nothing, whatever the kernel left
        vertices_used[first:end] = np.where(ok, np.clip(n_verts, 0, room), 0)
        indices_used[first:end] = np.where(ok, np.clip(n_idx, 0, room), 0)
        vertex_parts.append(_compact(vert_out, slot_offsets, vertices_used[first:end])[0])
        del vert_out
        index_parts.append(_compact(face_idx_out, slot_offsets, indices_used[first:end])[0])
        del face_idx_out
    # Per-face split points inside each brush's index block, computed once for the level.
    running = np.concatenate([[0], np.cumsum(face_len_out)])
    face_ends = running[1:] - np.repeat(running[face_offsets[:-1]], counts)
    ok = status == _OK
    vertices = np.concatenate(vertex_parts) if vertex_parts else np.empty((0, 3))
    indices = np.concatenate(index_parts) if index_parts else np.empty(0, dtype=np.int64)
    return BuiltBrushes(ok, lo_out, hi_out, normals, dists, face_offsets, vertices,
                        indices, _csr(vertices_used), _csr(indices_used), face_ends)


def _compact(rows: np.ndarray, offsets: np.ndarray, used: np.ndarray):
    """The first ``used[b]`` rows of each block ``offsets[b]:offsets[b + 1]`` of ``rows``, packed
    one after the other, and the packed blocks' start offsets. The kernel writes into blocks
    sized for the worst case (``F * (F + 4)`` per brush, 60 rows for a box that uses 8 and 24):
    a 200,000-brush level would keep hundreds of megabytes of unused rows alive."""
    starts = np.zeros(len(used) + 1, dtype=np.int64)
    np.cumsum(used, out=starts[1:])
    keep = np.arange(int(starts[-1]), dtype=np.int64)
    keep += np.repeat(offsets[:-1] - starts[:-1], used)
    return rows[keep], starts


def _build_many(normals, dists, counts, names, on_error):
    built = _build_arrays(normals, dists, counts, names, on_error)
    return [built.brush(b) for b in range(len(built))]


def brush_from_planes(normals, dists, *, what: str = "brush") -> ConvexBrush:
    """Build the convex brush ``{x : normals @ x <= dists}``.

    Parameters
    ----------
    normals : array_like, shape (F, 3)
        Outward plane normals (any non-zero length; they are normalised).
    dists : array_like, shape (F,)
        Plane distances.
    what : str
        Name used in error messages, e.g. ``"dm1.map:812"``.

    Raises
    ------
    GeometryError
        ``"{what}: ..."`` when a plane is NaN/inf or has a zero normal, or when the planes leave
        the brush open (unbounded), empty, or degenerate (zero volume).
    """
    dists = np.asarray(dists, dtype=np.float64).reshape(-1)
    normals = np.asarray(normals, dtype=np.float64)
    if normals.shape != (len(dists), 3):
        raise GeometryError(f"{what}: need normals (F, 3) and dists (F,), got {normals.shape} "
                            f"and {dists.shape}")
    return _build_many(normals, dists, [len(dists)], lambda b: what, "raise")[0]


# --------------------------------------------------------------------------------------------
# checks


def closure_problems(brush: ConvexBrush, *, rel_tol: float = 1e-6) -> list[str]:
    """Describe every way ``brush`` fails to be a closed convex polyhedron (empty if none).

    Checks: each directed edge occurs once and its reverse once (two faces per edge, consistent
    orientation), Euler's ``V - E + F = 2``, every vertex inside every plane and every face
    vertex on its plane (within ``rel_tol`` times the brush extent), each face's winding normal
    agrees with its plane normal, every vertex used, and a positive volume.
    """
    problems = []
    verts = brush.vertices
    extent = float(np.max(brush.hi - brush.lo)) if len(verts) else 0.0
    tol = rel_tol * max(extent, 1.0)
    directed: dict[tuple[int, int], int] = {}
    used = np.zeros(len(verts), dtype=bool)
    n_faces = 0
    for f, face in enumerate(brush.faces):
        if len(face) == 0:
            continue
        n_faces += 1
        used[face] = True
        if len(face) < 3:
            problems.append(f"face {f} has {len(face)} vertices")
            continue
        pts = verts[face]
        off = np.abs(pts @ brush.normals[f] - brush.dists[f])
        if off.max() > tol:
            problems.append(f"face {f} vertices are {off.max():g} off their plane")
        winding = np.cross(pts[1:-1] - pts[0], pts[2:] - pts[0]).sum(axis=0)
        if winding @ brush.normals[f] <= 0:
            problems.append(f"face {f} is not counter-clockwise seen from outside")
        for a, b in zip(face.tolist(), np.roll(face, -1).tolist()):
            directed[(a, b)] = directed.get((a, b), 0) + 1
    for (a, b), count in directed.items():
        if count != 1 or directed.get((b, a), 0) != 1:
            problems.append(f"edge ({a}, {b}) is used {count} times one way and "
                            f"{directed.get((b, a), 0)} times the other")
    n_edges = len(directed) // 2
    if len(verts) - n_edges + n_faces != 2:
        problems.append(f"Euler characteristic V - E + F = {len(verts)} - {n_edges} + {n_faces}"
                        f" is not 2")
    if not used.all():
        problems.append(f"{int((~used).sum())} vertices belong to no face")
    if len(verts):
        outside = verts @ brush.normals.T - brush.dists
        if outside.max() > tol:
            problems.append(f"a vertex lies {outside.max():g} outside a plane")
    if not problems and brush.volume() <= 0:
        problems.append("volume is not positive")
    return problems


def is_closed_convex(brush: ConvexBrush, *, rel_tol: float = 1e-6) -> bool:
    """True when :func:`closure_problems` finds nothing wrong with ``brush``."""
    return not closure_problems(brush, rel_tol=rel_tol)
