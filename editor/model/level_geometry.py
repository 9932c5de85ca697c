"""Geometry of levels that are not made of brushes: wall segments and mesh triangles.

* :class:`Segment` — a wall of a 2D level (a Doom linedef): two endpoints on the map plane
  (``x, y``; ``z`` is up), extruded between ``floor`` and ``ceiling`` for the 3D view, with the
  references the level format gives it (linedef number, front/back sidedef and sector, -1 for
  none) and the remaining attributes as ordered ``(key, value)`` strings.
* :class:`Triangle` — one triangle of an imported mesh, with the mesh (file part, node) it
  came from in ``group``; :class:`TriangleMesh` holds a whole mesh as arrays.

Both are immutable values like :class:`~.brushes.Brush`, indexed under their scene ids with
their boxes ``lo``/``hi``, and static (they never move in the simulation).
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from operator import attrgetter

import numpy as np

from spatial.errors import GeometryError, UnsupportedContentError

# Triangles converted between arrays and objects at a time: bounds the temporary lists.
_TRIANGLES_PER_SLICE = 1 << 16


def _finite(values, count: int, what: str) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if len(out) != count or not all(np.isfinite(out)):
        raise GeometryError(f"{what} must be {count} finite numbers, got {list(values)}")
    return out


@dataclass(frozen=True)
class Segment:
    """A wall segment of a 2D level, from ``a`` to ``b`` with its front on the right."""

    a: tuple[float, float]
    b: tuple[float, float]
    floor: float
    ceiling: float
    linedef: int = -1
    front_side: int = -1
    back_side: int = -1
    front_sector: int = -1
    back_sector: int = -1
    properties: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "a", _finite(self.a, 2, "segment start"))
        object.__setattr__(self, "b", _finite(self.b, 2, "segment end"))
        floor, ceiling = _finite((self.floor, self.ceiling), 2, "segment floor/ceiling")
        object.__setattr__(self, "floor", floor)
        object.__setattr__(self, "ceiling", ceiling)
        object.__setattr__(self, "properties",
                           tuple((str(k), str(v)) for k, v in self.properties))

    @property
    def two_sided(self) -> bool:
        return self.back_side >= 0

    def get(self, key: str, default: str | None = None) -> str | None:
        for k, v in self.properties:
            if k == key:
                return v
        return default

    @property
    def lo(self) -> np.ndarray:
        return np.array([min(self.a[0], self.b[0]), min(self.a[1], self.b[1]),
                         min(self.floor, self.ceiling)])

    @property
    def hi(self) -> np.ndarray:
        return np.array([max(self.a[0], self.b[0]), max(self.a[1], self.b[1]),
                         max(self.floor, self.ceiling)])


@dataclass(frozen=True, slots=True)
class Triangle:
    """One triangle of a mesh: corners ``v0 v1 v2`` and the ``group`` it was read from.

    A mesh is held as a :class:`TriangleMesh`; this value is made for one triangle at a time
    (the inspector, a selection, an undo record) or for a triangle kept on its own.
    """

    v0: tuple[float, float, float]
    v1: tuple[float, float, float]
    v2: tuple[float, float, float]
    group: str = ""

    def __post_init__(self) -> None:
        for name in ("v0", "v1", "v2"):
            object.__setattr__(self, name, _finite(getattr(self, name), 3, f"triangle {name}"))

    @property
    def corners(self) -> np.ndarray:
        return np.array([self.v0, self.v1, self.v2])

    @property
    def lo(self) -> np.ndarray:
        return self.corners.min(axis=0)

    @property
    def hi(self) -> np.ndarray:
        return self.corners.max(axis=0)


class TriangleMesh:
    """The triangles of one imported mesh, held as arrays: ids ``first_id ... first_id + T - 1``.

    A mesh of millions of triangles would take a gigabyte as :class:`Triangle` objects; held
    here it is one corner array and one group number per triangle, read directly by the
    scene's bounds, the index record and the views. :meth:`triangle` makes the
    :class:`Triangle` value of one id when somebody asks for one object (the inspector, a
    selection, an undo record). Immutable: the scene records deleted triangles itself.

    Parameters
    ----------
    first_id : int
        Id of the first triangle; the others follow in file order.
    corners : ndarray, shape (T, 3, 3)
        Corners of each triangle (finite).
    groups : sequence of str
        Names of the mesh parts; ``group_of[k]`` indexes it for triangle ``k``.
    group_of : ndarray of int, shape (T,)

    Raises
    ------
    GeometryError
        A coordinate is not finite (naming the first such triangle), or a group number is
        outside ``groups``.
    """

    __slots__ = ("first_id", "corners", "groups", "group_of", "_ids", "_boxes", "_box")

    def __init__(self, first_id: int, corners, groups, group_of) -> None:
        corners = np.ascontiguousarray(corners, dtype=np.float64).reshape(-1, 3, 3)
        bad = ~np.isfinite(corners).all(axis=(1, 2))
        if bad.any():
            raise GeometryError(f"triangle {int(np.flatnonzero(bad)[0])}: corners must be "
                                "finite numbers")
        group_of = np.asarray(group_of, dtype=np.int32).reshape(-1)
        groups = tuple(str(g) for g in groups)
        if len(group_of) != len(corners):
            raise GeometryError(f"{len(corners)} triangles but {len(group_of)} group numbers")
        if len(group_of) and (group_of.min() < 0 or group_of.max() >= len(groups)):
            raise GeometryError(f"a triangle's group number is outside the {len(groups)} groups")
        corners.flags.writeable = False
        group_of.flags.writeable = False
        self.first_id = int(first_id)
        self.corners = corners
        self.groups = groups
        self.group_of = group_of
        # made on first use (see ids, boxes and box)
        self._ids: np.ndarray | None = None
        self._boxes: tuple[np.ndarray, np.ndarray] | None = None
        self._box: tuple[np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.corners)

    @property
    def end_id(self) -> int:
        """One past the last id."""
        return self.first_id + len(self.corners)

    @property
    def ids(self) -> np.ndarray:
        """``(T,)`` ids of the triangles, ascending (one read-only array, made once)."""
        if self._ids is None:
            ids = np.arange(self.first_id, self.end_id, dtype=np.int64)
            ids.flags.writeable = False
            self._ids = ids
        return self._ids

    def boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lo, hi)`` ``(T, 3)`` boxes of the triangles (read-only, computed once: the scene's
        bounds and every index record read them)."""
        if self._boxes is None:
            lo, hi = triangle_bounds(self.corners)
            lo.flags.writeable = hi.flags.writeable = False
            self._boxes = (lo, hi)
        return self._boxes

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lo, hi)`` ``(3,)`` of the whole mesh."""
        if self._box is None:
            lo, hi = self.boxes()
            self._box = (lo.min(axis=0), hi.max(axis=0))
        return self._box

    def holds(self, oid: int) -> bool:
        """True when ``oid`` is one of this mesh's ids."""
        return self.first_id <= oid < self.end_id

    def triangle(self, oid: int) -> Triangle:
        """The :class:`Triangle` value of id ``oid`` (one of :attr:`ids`)."""
        row = oid - self.first_id
        v0, v1, v2 = (tuple(point) for point in self.corners[row].tolist())
        return Triangle(v0, v1, v2, self.groups[int(self.group_of[row])])

    def __eq__(self, other) -> bool:
        if not isinstance(other, TriangleMesh):
            return NotImplemented
        return (self.first_id == other.first_id and self.groups == other.groups
                and np.array_equal(self.group_of, other.group_of)
                and np.array_equal(self.corners, other.corners))

    # compared by content, like the arrays it holds; the checker does not accept the None
    # that marks a class unhashable in place of object.__hash__
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TriangleMesh(ids {self.first_id}..{self.end_id - 1}, {len(self.groups)} groups)"


def triangle_bounds(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` ``(T, 3)`` boxes of ``(T, 3, 3)`` corners.

    Two element-wise passes over the corner columns: reducing the short middle axis of the
    ``(T, 3, 3)`` array instead is several times slower on millions of triangles.
    """
    lo = np.minimum(np.minimum(corners[:, 0], corners[:, 1]), corners[:, 2])
    hi = np.maximum(np.maximum(corners[:, 0], corners[:, 1]), corners[:, 2])
    return lo, hi


LEVEL_GEOMETRY = (Segment, Triangle)


def refuse_level_geometry(scene, format_label: str) -> None:
    """Raise if ``scene`` holds wall segments or triangles, for formats of brushes and entities.

    Writers of such formats call this before writing anything, so a save or a conversion never
    produces a file that silently lacks the level's walls or meshes.

    Parameters
    ----------
    scene : Scene
        The document about to be written.
    format_label : str
        The format, as the message should name it (``"a Quake .map"``).

    Raises
    ------
    UnsupportedContentError
        One line counting what the format cannot hold.
    """
    segments, triangles = len(scene.segment_ids()), len(scene.triangle_arrays()[0])
    if not (segments or triangles):
        return
    held = " and ".join(f"{count} {what}" for count, what in
                        ((segments, "wall segments"), (triangles, "mesh triangles")) if count)
    raise UnsupportedContentError(f"{format_label} holds brushes and entities only; this level "
                                  f"also has {held}, which would be lost (nothing was written)")


def triangle_corners(triangles: list[Triangle]) -> np.ndarray:
    """``(T, 3, 3)`` corners of many triangles, gathered in one conversion."""
    out = np.empty((len(triangles), 3, 3))
    flat = out.reshape(-1)
    corners_of = attrgetter("v0", "v1", "v2")
    # A flat stream of floats is converted several times faster than nested tuples.
    for start in range(0, len(triangles), _TRIANGLES_PER_SLICE):
        part = triangles[start:start + _TRIANGLES_PER_SLICE]
        numbers = chain.from_iterable(chain.from_iterable(map(corners_of, part)))
        flat[9 * start:9 * (start + len(part))] = np.fromiter(numbers, dtype=np.float64,
                                                              count=9 * len(part))
    return out
