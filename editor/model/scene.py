"""The document: brushes, entities, selection and settings, changed only through edits.

A :class:`Scene` maps stable integer ids to immutable values (:class:`~.brushes.Brush` and
:class:`~.entities.Entity`). Ids are small sequential integers handed out by
:meth:`Scene.allocate_ids` and never reused within a session, so the same id names the same
object in the spatial index, the selection and the undo history. Brushes and point entities
are the *indexed objects*; brush entities (worldspawn, func_door, groups, layers) own brushes.

All writes go through :meth:`Scene.apply` with an :class:`Edit` (new values by id, ``None`` to
delete) and return the inverse edit; commands (:mod:`.commands`) are built on that, which is
what makes undo exact. ``apply`` validates the whole edit before touching anything (ownership,
brush geometry) and then emits ``will_change(ids)`` and ``did_change(ids, kind)`` once.
Ordering is by id: entities are listed in id order and an entity's brushes in id order, which
is file order for an imported level and stays stable through undo.

Mesh triangles come in bulk: an :class:`Edit` adds whole :class:`~.level_geometry.TriangleMesh`
arrays (one id per triangle) without one Python object per triangle. Each triangle is still an
object of the scene under its id: ``scene[oid]`` makes its :class:`~.level_geometry.Triangle`
value, and deleting, restoring or replacing single triangles works like for any other object
(the scene records which triangles of a mesh are present; a replaced one is kept on its own).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import compress
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from spatial.errors import GeometryError, PartitionStudioError

from .brushes import Brush, build_solids
from .entities import BRUSH, Entity
from .events import ChangeKind, Signal, report_listener_error
from .level_geometry import LEVEL_GEOMETRY, Segment, Triangle, TriangleMesh, triangle_corners

if TYPE_CHECKING:
    from spatial.contract import SpatialIndex

SceneObject = Brush | Entity | Segment | Triangle
_Kind = TypeVar("_Kind", Brush, Entity, Segment, Triangle)

#: the index a document uses until it says otherwise: a real tree, not the brute-force oracle
DEFAULT_BACKEND = "octree"


class SceneEditError(PartitionStudioError, ValueError):
    """An edit would break the document (unknown id, orphan brush, wrong owner kind...)."""


@dataclass(frozen=True, eq=True)
class Settings:
    """Document settings saved with the scene: chosen backend, its parameters, metadata.

    ``metadata`` holds what importers want back on export (source format, header comments);
    values must be JSON-compatible.
    """

    backend: str = DEFAULT_BACKEND
    params: dict = field(default_factory=dict, hash=False)
    metadata: dict = field(default_factory=dict, hash=False)
    #: backend class -> its ``Params`` parsed from :attr:`params` (see :meth:`parsed`)
    _parsed: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "backend", str(self.backend))
        for name in ("params", "metadata"):
            value = getattr(self, name)
            try:  # a deep copy through JSON: settings must be saveable and must not alias
                object.__setattr__(self, name, json.loads(json.dumps(dict(value), allow_nan=False)))
            except (TypeError, ValueError) as exc:
                raise SceneEditError(f"settings {name} must be JSON data: {exc}") from None

    def parsed(self, cls: type[SpatialIndex]) -> Any:
        """:attr:`params` as backend ``cls``'s ``Params`` (raises ``ParamError`` when invalid).

        Parsed once, where the settings enter (a reader, the settings command), and kept: the
        live index, its rebuild policy and the panels read this cached value. Settings are
        immutable, so the cache never goes stale.
        """
        found = self._parsed.get(cls)
        if found is None:
            from spatial.params import parse_params

            found = self._parsed[cls] = parse_params(cls.Params, dict(self.params))
        return found

    def adopt_parsed(self, cls: type[SpatialIndex], parsed: Any) -> Settings:
        """Record ``parsed`` as :meth:`parsed` of ``cls`` (a reader that parsed the values while
        checking them: they are not parsed again); returns ``self``."""
        self._parsed[cls] = parsed
        return self


@dataclass
class Edit:
    """A batch of changes: new values by id (``None`` deletes), selection, settings."""

    objects: dict[int, SceneObject | None] = field(default_factory=dict)
    selection: frozenset[int] | None = None
    settings: Settings | None = None
    #: whole meshes added (every triangle present, except ids ``objects`` sets otherwise)
    meshes: tuple[TriangleMesh, ...] = ()
    #: first ids of whole meshes removed (their present triangles)
    drop_meshes: tuple[int, ...] = ()

    def is_empty(self) -> bool:
        return (not self.objects and self.selection is None and self.settings is None
                and not self.meshes and not self.drop_meshes)


class _MeshPart:
    """A mesh of the scene and which of its triangles are present."""

    __slots__ = ("mesh", "present")

    def __init__(self, mesh: TriangleMesh, present: np.ndarray | None = None) -> None:
        self.mesh = mesh
        self.present = (np.ones(len(mesh), dtype=bool) if present is None
                        else np.array(present, dtype=bool))

    def has(self, oid: int) -> bool:
        return self.mesh.holds(oid) and bool(self.present[oid - self.mesh.first_id])

    @property
    def complete(self) -> bool:
        return bool(self.present.all())

    def present_ids(self) -> np.ndarray:
        if self.complete:
            return self.mesh.ids
        return np.flatnonzero(self.present) + self.mesh.first_id

    def state(self) -> tuple:
        return (self.mesh, self.present.tobytes())


class _SceneObjects(Mapping):
    """Read-only view of every object by id; a mesh triangle's value is made when read."""

    def __init__(self, scene: Scene) -> None:
        self._scene = scene

    def __getitem__(self, oid: int) -> SceneObject:
        value = self._scene.get(oid)
        if value is None:
            raise KeyError(oid)
        return value

    def __contains__(self, oid) -> bool:
        return oid in self._scene

    def __iter__(self) -> Iterator[int]:
        yield from self._scene._objects
        for part in self._scene._meshes:
            yield from part.present_ids().tolist()

    def __len__(self) -> int:
        return len(self._scene)


class Scene:
    """The level document. Read freely; change only through commands on an undo stack.

    Attributes
    ----------
    will_change : Signal
        ``callback(ids: frozenset[int])`` before an edit is applied.
    did_change : Signal
        ``callback(ids: frozenset[int], kind: ChangeKind)`` after it was applied. The edit
        stands whatever a callback does: an exception from one is passed to
        :attr:`listener_error_handler` (default: ``sys.excepthook``) and the others still run.
    """

    def __init__(self) -> None:
        self._objects: dict[int, SceneObject] = {}  # everything but the triangles of meshes
        self._meshes: list[_MeshPart] = []
        self._brushes_of: dict[int, set[int]] = {}
        self._selection: frozenset[int] = frozenset()
        self._settings = Settings()
        # bounds() of the objects as they are; forgotten by any edit that changes objects
        self._bounds: tuple[np.ndarray, np.ndarray] | None = None
        self._next_id = 0
        self.listener_error_handler = report_listener_error
        self.will_change = Signal()
        self.did_change = Signal(on_error=lambda exc: self.listener_error_handler(exc))

    # ------------------------------------------------------------------ ids
    @property
    def next_id(self) -> int:
        """The id the next :meth:`allocate_ids` call hands out first."""
        return self._next_id

    def allocate_ids(self, count: int = 1) -> list[int]:
        """Reserve ``count`` fresh ids (never handed out again in this session)."""
        start = self._next_id
        self._next_id += int(count)
        return list(range(start, self._next_id))

    def reserve_ids_below(self, limit: int) -> None:
        """Make sure every id below ``limit`` counts as used (loaders restoring saved ids)."""
        self._next_id = max(self._next_id, int(limit))

    # ------------------------------------------------------------------ reading
    def _mesh_part(self, oid) -> _MeshPart | None:
        """The mesh whose id range holds ``oid`` (present there or not)."""
        for part in self._meshes:
            if part.mesh.holds(oid):
                return part
        return None

    def _in_mesh(self, oid) -> bool:
        part = self._mesh_part(oid)
        return part is not None and part.has(oid)

    def __contains__(self, oid: int) -> bool:
        return oid in self._objects or self._in_mesh(oid)

    def __len__(self) -> int:
        return len(self._objects) + sum(int(part.present.sum()) for part in self._meshes)

    def get(self, oid: int) -> SceneObject | None:
        found = self._objects.get(oid)
        if found is None and self._meshes:
            part = self._mesh_part(oid)
            if part is not None and part.has(oid):
                return part.mesh.triangle(oid)
        return found

    def __getitem__(self, oid: int) -> SceneObject:
        found = self.get(oid)
        if found is None:
            raise SceneEditError(f"no object with id {oid}")
        return found

    def brush(self, oid: int) -> Brush:
        """The :class:`~.brushes.Brush` under ``oid`` (``KeyError``: no such id; ``TypeError``: not a brush)."""
        return self._of_kind(oid, Brush)

    def entity(self, oid: int) -> Entity:
        """The :class:`~.entities.Entity` under ``oid`` (``KeyError``: no such id; ``TypeError``: not an entity)."""
        return self._of_kind(oid, Entity)

    def segment(self, oid: int) -> Segment:
        """The wall :class:`~.level_geometry.Segment` under ``oid`` (``KeyError``, ``TypeError``: as :meth:`brush`)."""
        return self._of_kind(oid, Segment)

    def _of_kind(self, oid: int, kind: type[_Kind]) -> _Kind:
        """The object under ``oid``, typed as ``kind``, for code that knows what the id names.

        Raises
        ------
        KeyError
            No object has the id ``oid``.
        TypeError
            The object is of another kind; the message names the id and the kind found.
        """
        found = self.get(oid)
        if found is None:
            raise KeyError(f"no object with id {oid}")
        if not isinstance(found, kind):
            raise TypeError(f"id {oid} is a {type(found).__name__}, not a {kind.__name__}")
        return found

    @property
    def objects(self) -> Mapping[int, SceneObject]:
        """Read-only view of every object by id (mesh triangles made as they are read)."""
        return _SceneObjects(self) if self._meshes else MappingProxyType(self._objects)

    @property
    def meshes(self) -> tuple[TriangleMesh, ...]:
        """The meshes added in bulk, in the order they were added."""
        return tuple(part.mesh for part in self._meshes)

    def loose_objects(self) -> Iterator[SceneObject]:
        """Every object except the triangles held in meshes (brushes, entities, walls, single
        triangles), without making a value per mesh triangle."""
        return iter(self._objects.values())

    def brush_ids(self) -> list[int]:
        return sorted(i for i, o in self._objects.items() if isinstance(o, Brush))

    def entity_ids(self) -> list[int]:
        return sorted(i for i, o in self._objects.items() if isinstance(o, Entity))

    def point_entity_ids(self) -> list[int]:
        return sorted(i for i, o in self._objects.items() if isinstance(o, Entity) and o.is_point)

    def brushes_of(self, entity_id: int) -> list[int]:
        """Ids of the brushes owned by an entity, in order."""
        return sorted(self._brushes_of.get(entity_id, ()))

    def segment_ids(self) -> list[int]:
        """Ids of the wall segments of a 2D level (see :mod:`.level_geometry`)."""
        return sorted(i for i, o in self._objects.items() if isinstance(o, Segment))

    def triangle_ids(self) -> list[int]:
        """Ids of the mesh triangles (see :mod:`.level_geometry`)."""
        return self.triangle_arrays()[0].tolist()

    def triangle_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Ids ``(T,)`` (ascending) and corners ``(T, 3, 3)`` of every triangle.

        The arrays of a mesh are returned as they are held (read-only, no copy) when the
        scene's triangles are exactly one whole mesh.
        """
        loose_triangles = {i: o for i, o in self._objects.items() if isinstance(o, Triangle)}
        loose = sorted(loose_triangles)
        if not loose and len(self._meshes) == 1 and self._meshes[0].present.all():
            mesh = self._meshes[0].mesh
            return mesh.ids, mesh.corners
        id_parts = [np.array(loose, dtype=np.int64)]
        corner_parts = [triangle_corners([loose_triangles[i] for i in loose])]
        for part in self._meshes:
            id_parts.append(part.present_ids())
            corner_parts.append(part.mesh.corners[part.present])
        ids, corners = np.concatenate(id_parts), np.concatenate(corner_parts)
        order = np.argsort(ids, kind="stable")
        return ids[order], corners[order]

    def is_indexed(self, oid: int) -> bool:
        """True for what the spatial index holds: brushes, point entities, segments, triangles."""
        obj = self._objects.get(oid)
        if obj is None:
            return self._in_mesh(oid)
        return (isinstance(obj, (Brush,) + LEVEL_GEOMETRY)
                or (isinstance(obj, Entity) and obj.is_point))

    def indexed_ids(self) -> np.ndarray:
        """Ids of every indexed object, ascending."""
        loose = np.array(sorted(i for i in self._objects if self.is_indexed(i)), dtype=np.int64)
        if not self._meshes:
            return loose
        return np.sort(np.concatenate([loose] + [part.present_ids() for part in self._meshes]))

    def bounds_of(self, ids: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
        """``(lo, hi)`` arrays ``(N, 3)`` of indexed objects."""
        if not self._meshes:
            return self._loose_bounds(ids)
        ids = np.asarray(ids if isinstance(ids, np.ndarray) else list(ids),
                         dtype=np.int64).reshape(-1)
        lo, hi = np.empty((len(ids), 3)), np.empty((len(ids), 3))
        from_mesh = np.zeros(len(ids), dtype=bool)
        for part in self._meshes:
            mesh = part.mesh
            rows = np.flatnonzero((ids >= mesh.first_id) & (ids < mesh.end_id))
            if not len(rows):
                continue
            boxes_lo, boxes_hi = mesh.boxes()
            if (len(rows) == len(ids) == len(mesh) and part.complete and ids[0] == mesh.first_id
                    and (np.diff(ids) == 1).all()):
                return boxes_lo.copy(), boxes_hi.copy()  # exactly the whole mesh, in order
            offsets = ids[rows] - mesh.first_id
            # a deleted or replaced triangle is absent from its mesh (a replaced one is loose)
            keep = part.present[offsets]
            rows, offsets = rows[keep], offsets[keep]
            lo[rows], hi[rows] = boxes_lo[offsets], boxes_hi[offsets]
            from_mesh[rows] = True
        rest = ~from_mesh
        if rest.any():
            lo[rest], hi[rest] = self._loose_bounds(ids[rest].tolist())
        return lo, hi

    def _loose_bounds(self, ids: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
        objects = [self[oid] for oid in ids]
        is_triangle = np.fromiter((type(obj) is Triangle for obj in objects), dtype=bool,
                                  count=len(objects))
        if is_triangle.any():
            # A mesh holds millions of triangles: their boxes come from one corner array
            # rather than two small arrays per object.
            lo = np.empty((len(objects), 3))
            hi = np.empty((len(objects), 3))
            corners = triangle_corners([obj for obj in objects if type(obj) is Triangle])
            lo[is_triangle], hi[is_triangle] = corners.min(axis=1), corners.max(axis=1)
            rest = ~is_triangle
            if rest.any():
                others = list(compress(objects, rest))
                lo[rest], hi[rest] = self._object_bounds(others)
            return lo, hi
        return self._object_bounds(objects)

    @staticmethod
    def _object_bounds(objects: list) -> tuple[np.ndarray, np.ndarray]:
        # Rows gathered in lists and converted once: one numpy assignment per object costs
        # more than the bounds themselves on a level of thousands of brushes.
        lo = np.array([obj.lo for obj in objects], dtype=np.float64).reshape(-1, 3)
        hi = np.array([obj.hi for obj in objects], dtype=np.float64).reshape(-1, 3)
        return lo, hi

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Bounds of every indexed object (zeros for an empty scene). Kept until an edit
        changes objects: every view frames the level with it, and a big level's objects take
        a while to walk."""
        if self._bounds is None:
            self._bounds = self._walk_bounds()
        lo, hi = self._bounds
        return lo.copy(), hi.copy()

    def _walk_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        loose = [i for i in self._objects if self.is_indexed(i)]
        corners = []
        if loose:
            lo, hi = self._loose_bounds(loose)
            corners.append((lo.min(axis=0), hi.max(axis=0)))
        for part in self._meshes:  # a whole mesh's box is kept with it
            if part.complete:
                corners.append(part.mesh.box())
            elif part.present.any():
                lo, hi = part.mesh.boxes()
                corners.append((lo[part.present].min(axis=0), hi[part.present].max(axis=0)))
        if not corners:
            return np.zeros(3), np.zeros(3)
        return (np.min([c[0] for c in corners], axis=0), np.max([c[1] for c in corners], axis=0))

    def worldspawn_id(self) -> int | None:
        """Id of the first ``worldspawn`` entity, if any."""
        for oid in self.entity_ids():
            if self.entity(oid).classname == "worldspawn":
                return oid
        return None

    def find_entities(self, **keys: str) -> list[int]:
        """Ids of entities whose key/values include every ``key=value`` given."""
        return [oid for oid in self.entity_ids()
                if all(self.entity(oid).get(k) == v for k, v in keys.items())]

    @property
    def selection(self) -> frozenset[int]:
        return self._selection

    @property
    def settings(self) -> Settings:
        return self._settings

    def state(self) -> tuple:
        """A value equal for two scenes with the same content, selection and settings."""
        return (dict(self._objects), self._selection, self._settings,
                [part.state() for part in self._meshes])

    def copy(self) -> Scene:
        """An independent scene with the same content and ids (no subscribers)."""
        other = Scene()
        other._objects = dict(self._objects)
        other._meshes = [_MeshPart(part.mesh, part.present) for part in self._meshes]
        other._brushes_of = {k: set(v) for k, v in self._brushes_of.items()}
        other._selection = self._selection
        other._settings = self._settings
        other._next_id = self._next_id
        return other

    # ------------------------------------------------------------------ writing
    def apply(self, edit: Edit) -> Edit:
        """Apply ``edit`` atomically and return the edit that undoes it.

        Whole meshes are added or dropped first, then ``objects`` are set against that state.
        Raises :class:`SceneEditError` or ``GeometryError`` (nothing changed) if the result
        would be inconsistent: a brush whose owner is missing or a point entity, an entity
        removed while it still owns brushes, a selected id that does not exist, a brush whose
        faces do not bound a closed convex solid, a mesh over ids already used, or an id never
        allocated.
        """
        added = tuple(edit.meshes)
        dropped = [part for part in self._meshes
                   if part.mesh.first_id in {int(f) for f in edit.drop_meshes}]
        self._check_meshes(added, dropped, edit.drop_meshes)
        before = self._value_after_meshes(added, dropped)
        objects = {int(k): v for k, v in edit.objects.items()}
        changed = {oid: new for oid, new in objects.items() if before(oid) != new}
        selection = edit.selection
        removed = {oid for oid, new in changed.items() if new is None and before(oid) is not None}
        removed |= {oid for oid in self._selection if any(p.has(oid) for p in dropped)}
        if selection is None and removed & self._selection:
            selection = self._selection - removed  # removed objects leave the selection
        if selection is not None:
            selection = frozenset(int(i) for i in selection)
            if selection == self._selection:
                selection = None
        settings = edit.settings if edit.settings != self._settings else None
        self._check(changed, selection, before)
        if not changed and selection is None and settings is None and not added and not dropped:
            return Edit()

        inverse_objects = {oid: self.get(oid) for oid in changed}
        for part in dropped:  # re-added whole, so what was absent is removed again
            absent = np.flatnonzero(~part.present) + part.mesh.first_id
            inverse_objects.update((oid, None) for oid in absent.tolist()
                                   if oid not in self._objects)
        inverse = Edit(inverse_objects,
                       self._selection if selection is not None else None,
                       self._settings if settings is not None else None,
                       meshes=tuple(part.mesh for part in dropped),
                       drop_meshes=tuple(mesh.first_id for mesh in added))
        kind = self._kind(changed, settings, before)
        kind |= (ChangeKind.ADDED if added else ChangeKind.NONE) | (
            ChangeKind.REMOVED if dropped else ChangeKind.NONE)
        touched = set(changed)
        if (added or dropped) and (len(self.will_change) or len(self.did_change)):
            # millions of ids: gathered only when somebody listens
            for ids in [mesh.ids for mesh in added] + [part.present_ids() for part in dropped]:
                touched.update(ids.tolist())
        if selection is not None:
            sel_touched = selection ^ self._selection
            touched |= sel_touched
            kind |= ChangeKind.SELECTION
        touched_ids = frozenset(touched)
        self.will_change.emit(touched_ids)
        self._swap_meshes(added, dropped)
        for oid, new in changed.items():
            self._set_object(oid, new)
        if changed or added or dropped:
            self._bounds = None
        if selection is not None:
            self._selection = selection
        if settings is not None:
            self._settings = settings
        self.did_change.emit(touched_ids, kind)
        return inverse

    def _swap_meshes(self, added, dropped) -> None:
        """Take the ``dropped`` mesh parts out and put the ``added`` meshes in, whole."""
        self._meshes = [part for part in self._meshes if part not in dropped]
        for mesh in added:
            part = _MeshPart(mesh)
            for oid in self._objects:  # an id kept on its own stays so
                if mesh.holds(oid):
                    part.present[oid - mesh.first_id] = False
            self._meshes.append(part)

    def _set_object(self, oid: int, new: SceneObject | None) -> None:
        old = self._objects.get(oid)
        if isinstance(old, Brush) and old.entity in self._brushes_of:
            self._brushes_of[old.entity].discard(oid)
        part = self._mesh_part(oid) if self._meshes else None
        if part is not None and isinstance(new, Triangle) and new == part.mesh.triangle(oid):
            self._objects.pop(oid, None)  # back in its mesh
            part.present[oid - part.mesh.first_id] = True
            return
        if part is not None:
            part.present[oid - part.mesh.first_id] = False
        if new is None:
            self._objects.pop(oid, None)
            self._brushes_of.pop(oid, None)
        else:
            self._objects[oid] = new
            if isinstance(new, Brush):
                self._brushes_of.setdefault(new.entity, set()).add(oid)
            elif isinstance(new, Entity):
                self._brushes_of.setdefault(oid, set())

    def _check_meshes(self, added, dropped, drop_ids) -> None:
        if len(dropped) != len(set(drop_ids)):
            known = {part.mesh.first_id for part in self._meshes}
            missing = next(int(f) for f in drop_ids if int(f) not in known)
            raise SceneEditError(f"no mesh starts at id {missing}")
        kept = [part.mesh for part in self._meshes if part not in dropped]
        for k, mesh in enumerate(added):
            if not isinstance(mesh, TriangleMesh):
                raise SceneEditError(f"expected a TriangleMesh, got {type(mesh).__name__}")
            if mesh.first_id < 0 or mesh.end_id > self._next_id:
                raise SceneEditError(f"mesh ids {mesh.first_id}..{mesh.end_id - 1} were never "
                                     f"allocated (next id is {self._next_id})")
            for other in kept + list(added[:k]):
                if mesh.first_id < other.end_id and other.first_id < mesh.end_id:
                    raise SceneEditError(f"mesh ids {mesh.first_id}..{mesh.end_id - 1} overlap "
                                         f"the mesh of ids {other.first_id}..{other.end_id - 1}")

    def _value_after_meshes(self, added, dropped):
        """``value(oid)``: what the scene holds under ``oid`` once the meshes are changed."""
        objects, meshes = self._objects, self._meshes

        def value(oid):
            found = objects.get(oid)
            if found is not None or not (meshes or added):
                return found
            for mesh in added:
                if mesh.holds(oid):
                    return mesh.triangle(oid)
            part = self._mesh_part(oid)
            if part is not None and part not in dropped and part.has(oid):
                return part.mesh.triangle(oid)
            return None

        return value

    def _kind(self, changed: dict, settings, before) -> ChangeKind:
        kind = ChangeKind.SETTINGS if settings is not None else ChangeKind.NONE
        olds = [before(oid) for oid in changed]
        if not any(old is not None for old in olds):  # only additions (an import)
            return kind | ChangeKind.ADDED if changed else kind
        for new, old in zip(changed.values(), olds):
            if old is None:
                kind |= ChangeKind.ADDED
            elif new is None:
                kind |= ChangeKind.REMOVED
            elif isinstance(new, Brush):
                if new.faces != old.faces:
                    kind |= ChangeKind.GEOMETRY
                if new.entity != old.entity:
                    kind |= ChangeKind.PROPERTIES
            elif isinstance(new, LEVEL_GEOMETRY):
                kind |= ChangeKind.GEOMETRY | ChangeKind.PROPERTIES
            else:
                kind |= ChangeKind.PROPERTIES
                if new.is_point and ((old.origin != new.origin).any() or new.classname != old.classname):
                    kind |= ChangeKind.GEOMETRY
        return kind

    def _check(self, changed: dict, selection, before) -> None:
        def final(oid):
            return changed[oid] if oid in changed else before(oid)

        # The solids of many new brushes (a big paste or move) in one compiled call; the loop
        # below then finds them cached and names the first brush that is not a closed solid.
        build_solids([b for b in changed.values() if isinstance(b, Brush)], on_error="none")
        owners_losing: set[int] = set()
        for oid, new in changed.items():
            old = before(oid)
            if oid < 0 or oid >= self._next_id:
                raise SceneEditError(f"id {oid} was never allocated (next id is {self._next_id})")
            if new is None:
                if isinstance(old, Entity):
                    owners_losing.add(oid)
                continue
            _check_replacement(oid, old, new)
            if isinstance(new, Brush):
                _check_brush(oid, new, final(new.entity))
            elif isinstance(new, Entity) and new.is_point:
                _ = new.origin  # raises GeometryError on a malformed origin key
        for eid in owners_losing:
            left = [b for b in self._brushes_of.get(eid, ()) if final(b) is not None
                    and final(b).entity == eid]
            if left:
                raise SceneEditError(f"entity {eid} cannot be removed while it owns brush {left[0]}")
        if selection is not None:
            for oid in selection:
                if final(oid) is None:
                    raise SceneEditError(f"cannot select id {oid}: no such object")


def _check_replacement(oid: int, old, new) -> None:
    """Refuse an object of an unknown type, or one that changes type or entity kind."""
    if not isinstance(new, (Brush, Entity) + LEVEL_GEOMETRY):
        raise SceneEditError(f"id {oid}: expected a Brush, an Entity, a Segment or a "
                             f"Triangle, got {type(new).__name__}")
    if old is not None and type(old) is not type(new):
        raise SceneEditError(f"id {oid}: a {type(old).__name__} cannot become a {type(new).__name__}")
    if isinstance(new, Entity) and isinstance(old, Entity) and new.kind != old.kind:
        raise SceneEditError(f"entity {oid}: a {old.kind} entity cannot become a {new.kind} entity")


def _check_brush(oid: int, brush: Brush, owner) -> None:
    """Refuse a brush whose owner is not a brush entity, or that is not a closed solid."""
    if not isinstance(owner, Entity) or owner.kind != BRUSH:
        what = "does not exist" if owner is None else "is not a brush entity"
        raise SceneEditError(f"brush {oid}: owner entity {brush.entity} {what}")
    try:
        brush.check()
    except GeometryError as exc:
        raise GeometryError(f"brush {oid}: {exc}") from None
