"""A brush of the document: an ordered list of faces, owned by one entity.

A :class:`Brush` is an immutable value. Moving or resizing it builds a new brush whose face
plane points are transformed (texture attributes untouched), so undo restores the old value
exactly, bit for bit. The convex solid (vertices, bounds) comes from :mod:`spatial.brush` and is
computed once per value; brushes built together by :func:`build_solids` share level-wide arrays
and read their bounds from them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter

import numpy as np

from spatial.errors import GeometryError

from .faces import Face, point_triple
from .transforms import checked_translation


def _spatial_brush():
    # Imported on first use so the document model loads even while geometry is unavailable.
    from spatial import brush as spatial_brush
    return spatial_brush


@dataclass(frozen=True, eq=True)
class Brush:
    """A convex solid bounded by its faces' planes.

    Attributes
    ----------
    entity : int
        Id of the owning entity (worldspawn, a func_door, a TrenchBroom group or layer...).
    faces : tuple of Face
        The faces in file order.
    """

    entity: int
    faces: tuple[Face, ...]
    _cache: dict = field(default_factory=dict, compare=False, repr=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "entity", int(self.entity))
        faces = tuple(self.faces)
        if len(faces) < 4:
            raise GeometryError(f"a brush needs at least 4 faces, got {len(faces)}")
        if not all(isinstance(f, Face) for f in faces):
            raise TypeError("brush faces must be Face objects")
        object.__setattr__(self, "faces", faces)

    @classmethod
    def trusted(cls, entity: int, faces: tuple[Face, ...]) -> Brush:
        """Build a brush from values a loader has already checked, skipping validation.

        ``entity`` must be an ``int`` and ``faces`` a tuple of at least four :class:`Face`;
        importers of large levels use this to avoid checking every face twice.
        """
        brush = object.__new__(cls)
        brush.__dict__.update(entity=entity, faces=faces, _cache={})
        return brush

    # ------------------------------------------------------------------ geometry
    def plane_points(self) -> np.ndarray:
        """Every face's three plane points, ``(F, 3, 3)``."""
        return np.array([f.points for f in self.faces], dtype=np.float64).reshape(-1, 3, 3)

    def planes(self) -> tuple[np.ndarray, np.ndarray]:
        """Face planes ``(normals (F, 3), dists (F,))`` with the inside ``n . x <= d``."""
        cache = self._cache
        planes = cache.get("planes")
        if planes is not None:
            return planes
        built = cache.get("built")
        if built is not None:
            # read from the level's arrays each time, not kept: two small views per brush
            # would cost a level of 200,000 brushes some 80 MB
            level, row = built
            f0, f1 = int(level.face_offsets[row]), int(level.face_offsets[row + 1])
            return level.normals[f0:f1], level.dists[f0:f1]
        planes = cache["planes"] = _spatial_brush().planes_from_points(self.plane_points())
        return planes

    @property
    def solid(self):
        """The convex solid (:class:`spatial.brush.ConvexBrush`); raises ``GeometryError``."""
        cache = self._cache
        if "solid" not in cache:
            built = cache.get("built")
            if built is not None:  # made by build_solids along with a whole level
                cache["solid"] = built[0].brush(built[1])
            else:
                normals, dists = self.planes()
                cache["solid"] = _spatial_brush().brush_from_planes(normals, dists, what="brush")
        return cache["solid"]

    @property
    def batch(self):
        """``(BuiltBrushes, row)`` when this brush's solid was built with a whole level by
        :func:`build_solids` (its geometry can be read from the level's arrays), else None."""
        return self._cache.get("built")

    def _corner(self, name: str) -> np.ndarray:
        """``lo`` or ``hi`` of the bounds: from the level's batch build when there was one."""
        built = self._cache.get("built")
        if built is not None:
            return getattr(built[0], name)[built[1]]
        return np.asarray(getattr(self.solid, name), dtype=np.float64)

    @property
    def lo(self) -> np.ndarray:
        return self._corner("lo")

    @property
    def hi(self) -> np.ndarray:
        return self._corner("hi")

    def check(self) -> Brush:
        """Return self if the faces bound a closed convex solid, else raise ``GeometryError``."""
        if "built" not in self._cache:
            _ = self.solid  # building the solid is the check
        return self

    # ------------------------------------------------------------------ edits (new values)
    def with_entity(self, entity: int) -> Brush:
        return Brush(int(entity), self.faces)

    def _mapped(self, points: np.ndarray) -> Brush:
        if not np.isfinite(points).all():
            raise GeometryError("the transformed brush has non-finite plane points")
        rows = points.tolist()  # one conversion for the whole brush, not one per number
        return Brush(self.entity, tuple(f.with_checked_points(point_triple(r))
                                        for f, r in zip(self.faces, rows)))

    def translated(self, delta) -> Brush:
        """The brush moved by ``delta`` (every plane point translated)."""
        delta = checked_translation(delta)
        if not delta.any():
            return self
        return self._mapped(self.plane_points() + delta)

    def scaled(self, anchor, factors) -> Brush:
        """The brush scaled by ``factors`` (per axis, non-zero) about ``anchor``.

        An affine map sends planes to planes, so transforming the three points of every face is
        exact for any brush. A negative factor mirrors the brush; the point order is then
        reversed so the faces keep pointing outwards.
        """
        anchor = np.asarray(anchor, dtype=np.float64).reshape(3)
        factors = np.asarray(factors, dtype=np.float64).reshape(3)
        if not (np.isfinite(anchor).all() and np.isfinite(factors).all()) or (factors == 0).any():
            raise GeometryError(f"scale factors must be finite and non-zero, got {factors.tolist()}")
        if (factors == 1).all():
            return self
        points = anchor + (self.plane_points() - anchor) * factors
        if np.prod(np.sign(factors)) < 0:
            points = points[:, ::-1, :]
        return self._mapped(points)

    def resized(self, new_lo, new_hi) -> Brush:
        """The brush stretched so that its bounds become ``[new_lo, new_hi]``.

        This is the axial resize of a box brush in TrenchBroom (dragging a face or corner),
        generalised: the map taking the old bounds onto the new ones is applied to every face.
        """
        new_lo = np.asarray(new_lo, dtype=np.float64).reshape(3)
        new_hi = np.asarray(new_hi, dtype=np.float64).reshape(3)
        if not (np.isfinite(new_lo).all() and np.isfinite(new_hi).all()) or (new_hi <= new_lo).any():
            raise GeometryError(f"resize needs lo < hi on every axis, got {new_lo.tolist()} {new_hi.tolist()}")
        lo, hi = self.lo, self.hi
        factors = (new_hi - new_lo) / (hi - lo)
        moved = self.scaled(lo, factors)
        return moved.translated(new_lo - lo)


_faces_of = attrgetter("faces")


def build_solids(brushes, *, what: str = "brush", on_error: str = "raise",
                 plane_points: np.ndarray | None = None) -> list[int]:
    """Compute the solids of many brushes in one compiled call (loaders use this).

    With ``on_error="raise"`` a ``GeometryError`` names ``what`` and the position of the first
    brush that is not a closed solid; with ``"none"`` the positions of such brushes are
    returned instead (their solids are left uncomputed).

    A loader that already holds every face's plane points as numbers passes them as
    ``plane_points``, shape ``(F, 3, 3)``: the faces of all ``brushes`` in order, equal to
    their ``points`` (then they are not read from the faces again).
    """
    brushes = list(brushes)
    counts = np.fromiter(map(len, map(_faces_of, brushes)), dtype=np.int64, count=len(brushes))
    if plane_points is not None:
        plane_points = np.asarray(plane_points, dtype=np.float64)
        if plane_points.shape != (int(counts.sum()), 3, 3):
            raise ValueError(f"plane_points must have shape ({int(counts.sum())}, 3, 3) for "
                             f"these brushes, got {plane_points.shape}")
    todo = [k for k, b in enumerate(brushes) if "solid" not in b._cache and "built" not in b._cache]
    if not todo:
        return []
    positions = todo
    if plane_points is not None and len(todo) < len(brushes):
        first = np.concatenate([[0], np.cumsum(counts)[:-1]])
        rows = np.concatenate([np.arange(first[k], first[k] + counts[k]) for k in todo])
        plane_points = plane_points[rows]
    brushes, counts = [brushes[k] for k in todo], counts[todo]
    sb = _spatial_brush()
    if plane_points is None:
        # A flat stream of numbers is several times faster to read than nested tuples.
        flat = chain.from_iterable(chain.from_iterable(f.points for b in brushes for f in b.faces))
        points = np.fromiter(flat, dtype=np.float64, count=9 * int(counts.sum())).reshape(-1, 3, 3)
    else:
        points = plane_points
    normals, dists = sb.planes_from_points(points, what=what)
    # The solids stay in level-wide arrays; each brush makes its ConvexBrush when asked.
    built = sb.build_brush_arrays(normals, dists, counts, what=what, on_error=on_error)
    offsets = built.face_offsets.tolist()
    failed = []
    for b, (brush, ok) in enumerate(zip(brushes, built.ok.tolist())):
        f0, f1 = offsets[b], offsets[b + 1]
        cache = brush._cache
        if ok:  # its planes are read from the level's arrays (see Brush.planes)
            cache["built"] = (built, b)
        else:
            cache["planes"] = (normals[f0:f1], dists[f0:f1])
            failed.append(positions[b])
    return failed
