"""One brush face as a level editor writes it: three plane points plus texture attributes.

The three points define the face plane the way Quake's ``.map`` format does: seen from outside
the brush they wind clockwise, so ``(p2 - p0) x (p1 - p0)`` points out of the brush. Every
texture attribute is kept verbatim so that exporting an imported level writes what was read.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from spatial.errors import GeometryError

Point = tuple[float, float, float]


def point_triple(rows: Sequence[Sequence[float]]) -> tuple[Point, Point, Point]:
    """Three rows of three numbers (a ``(3, 3)`` array's ``tolist()``) as a face's points.

    Raises ``ValueError`` unless there are exactly three rows of exactly three numbers.
    """
    (x0, y0, z0), (x1, y1, z1), (x2, y2, z2) = rows
    return (x0, y0, z0), (x1, y1, z1), (x2, y2, z2)


def _floats(values, count: int | None, what: str) -> tuple[float, ...]:
    out = tuple(map(float, values))
    if count is not None and len(out) != count:
        raise GeometryError(f"{what}: expected {count} numbers, got {len(out)}")
    if not all(map(math.isfinite, out)):
        raise GeometryError(f"{what}: numbers must be finite, got {list(out)}")
    return out


@dataclass(frozen=True, slots=True)
class Face:
    """A brush face: plane points and texture attributes (immutable; edits make new faces).

    Attributes
    ----------
    points : tuple of three (x, y, z)
        The plane points, clockwise seen from outside (outward normal ``(p2-p0) x (p1-p0)``).
    texture : str
        Texture name as written in the source file.
    offset : (u, v)
        Texture offsets.
    rotation : float
        Texture rotation in degrees.
    scale : (su, sv)
        Texture scale.
    u_axis, v_axis : tuple of float or None
        Valve 220 texture axes (``None`` for the standard Quake format).
    extra : tuple of str
        Any trailing tokens (surface flags of other games) kept for export.
    """

    points: tuple[Point, Point, Point]
    texture: str = "__TB_empty"
    offset: tuple[float, float] = (0.0, 0.0)
    rotation: float = 0.0
    scale: tuple[float, float] = (1.0, 1.0)
    u_axis: tuple[float, ...] | None = None
    v_axis: tuple[float, ...] | None = None
    extra: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        pts = tuple(_floats(p, 3, "face point") for p in self.points)
        if len(pts) != 3:
            raise GeometryError(f"a face needs 3 points, got {len(pts)}")
        object.__setattr__(self, "points", pts)
        object.__setattr__(self, "texture", str(self.texture))
        object.__setattr__(self, "offset", _floats(self.offset, 2, "texture offset"))
        object.__setattr__(self, "rotation", _floats((self.rotation,), 1, "texture rotation")[0])
        object.__setattr__(self, "scale", _floats(self.scale, 2, "texture scale"))
        for name in ("u_axis", "v_axis"):
            axis = getattr(self, name)
            if axis is not None:
                object.__setattr__(self, name, _floats(axis, None, name))
        object.__setattr__(self, "extra", tuple(str(t) for t in self.extra))

    @classmethod
    def trusted(cls, points, texture, offset, rotation, scale, u_axis=None, v_axis=None,
                extra=()) -> Face:
        """Build a face from values a loader has already checked, skipping validation.

        Every argument must already have the exact type the attributes document (tuples of
        finite floats, ``str``); importers of large levels use this to avoid checking each
        number twice.
        """
        face = object.__new__(cls)
        # Slots written straight through their descriptors (the frozen class refuses plain
        # assignment): a big level makes a million faces on import, and slots keep each one
        # at about a third of the size of an instance dictionary.
        _SET_POINTS(face, points)
        _SET_TEXTURE(face, texture)
        _SET_OFFSET(face, offset)
        _SET_ROTATION(face, rotation)
        _SET_SCALE(face, scale)
        _SET_U_AXIS(face, u_axis)
        _SET_V_AXIS(face, v_axis)
        _SET_EXTRA(face, extra)
        return face

    def points_array(self) -> np.ndarray:
        """The plane points as a ``(3, 3)`` float64 array."""
        return np.array(self.points, dtype=np.float64)

    def with_points(self, points) -> Face:
        """A copy with new plane points and every texture attribute unchanged."""
        pts = np.asarray(points, dtype=np.float64)
        if pts.shape != (3, 3) or not np.isfinite(pts).all():
            raise GeometryError(f"face points: expected 3 points of 3 finite numbers, got {pts.tolist()}")
        return self.with_checked_points(point_triple(pts.tolist()))

    def with_checked_points(self, points: tuple[Point, Point, Point]) -> Face:
        """:meth:`with_points` for points already known to be 3 tuples of 3 finite floats."""
        return Face.trusted(points, self.texture, self.offset, self.rotation, self.scale,
                            self.u_axis, self.v_axis, self.extra)


(_SET_POINTS, _SET_TEXTURE, _SET_OFFSET, _SET_ROTATION, _SET_SCALE, _SET_U_AXIS, _SET_V_AXIS,
 _SET_EXTRA) = (getattr(Face, name).__set__ for name in (
    "points", "texture", "offset", "rotation", "scale", "u_axis", "v_axis", "extra"))
