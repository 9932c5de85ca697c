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
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import compress
from types import MappingProxyType

import numpy as np

from spatial.errors import GeometryError, PartitionStudioError

from .brushes import Brush, build_solids
from .entities import BRUSH, Entity
from .events import ChangeKind, Signal, report_listener_error
from .level_geometry import LEVEL_GEOMETRY, Segment, Triangle, triangle_corners

SceneObject = Brush | Entity | Segment | Triangle

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

    def __post_init__(self) -> None:
        object.__setattr__(self, "backend", str(self.backend))
        for name in ("params", "metadata"):
            value = getattr(self, name)
            try:  # a deep copy through JSON: settings must be saveable and must not alias
                object.__setattr__(self, name, json.loads(json.dumps(dict(value), allow_nan=False)))
            except (TypeError, ValueError) as exc:
                raise SceneEditError(f"settings {name} must be JSON data: {exc}") from None


@dataclass
class Edit:
    """A batch of changes: new values by id (``None`` deletes), selection, settings."""

    objects: dict[int, SceneObject | None] = field(default_factory=dict)
    selection: frozenset[int] | None = None
    settings: Settings | None = None

    def is_empty(self) -> bool:
        return not self.objects and self.selection is None and self.settings is None


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
        self._objects: dict[int, SceneObject] = {}
        self._brushes_of: dict[int, set[int]] = {}
        self._selection: frozenset[int] = frozenset()
        self._settings = Settings()
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
    def __contains__(self, oid: int) -> bool:
        return oid in self._objects

    def __len__(self) -> int:
        return len(self._objects)

    def get(self, oid: int) -> SceneObject | None:
        return self._objects.get(oid)

    def __getitem__(self, oid: int) -> SceneObject:
        try:
            return self._objects[oid]
        except KeyError:
            raise SceneEditError(f"no object with id {oid}") from None

    @property
    def objects(self) -> Mapping[int, SceneObject]:
        """Read-only view of every object by id."""
        return MappingProxyType(self._objects)

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
        return sorted(i for i, o in self._objects.items() if isinstance(o, Triangle))

    def is_indexed(self, oid: int) -> bool:
        """True for what the spatial index holds: brushes, point entities, segments, triangles."""
        obj = self._objects.get(oid)
        return (isinstance(obj, (Brush,) + LEVEL_GEOMETRY)
                or (isinstance(obj, Entity) and obj.is_point))

    def indexed_ids(self) -> np.ndarray:
        """Ids of every indexed object, ascending."""
        return np.array(sorted(i for i in self._objects if self.is_indexed(i)), dtype=np.int64)

    def bounds_of(self, ids: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
        """``(lo, hi)`` arrays ``(N, 3)`` of indexed objects."""
        objects = [self[oid] for oid in ids]
        is_triangle = np.fromiter((type(obj) is Triangle for obj in objects), dtype=bool,
                                  count=len(objects))
        if is_triangle.any():
            # A mesh holds millions of triangles: their boxes come from one corner array
            # rather than two small arrays per object.
            lo = np.empty((len(objects), 3))
            hi = np.empty((len(objects), 3))
            corners = triangle_corners(list(compress(objects, is_triangle)))
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
        """Bounds of every indexed object (zeros for an empty scene)."""
        ids = self.indexed_ids()
        if not len(ids):
            return np.zeros(3), np.zeros(3)
        lo, hi = self.bounds_of(ids)
        return lo.min(axis=0), hi.max(axis=0)

    def worldspawn_id(self) -> int | None:
        """Id of the first ``worldspawn`` entity, if any."""
        for oid in self.entity_ids():
            if self._objects[oid].classname == "worldspawn":
                return oid
        return None

    def find_entities(self, **keys: str) -> list[int]:
        """Ids of entities whose key/values include every ``key=value`` given."""
        return [oid for oid in self.entity_ids()
                if all(self._objects[oid].get(k) == v for k, v in keys.items())]

    @property
    def selection(self) -> frozenset[int]:
        return self._selection

    @property
    def settings(self) -> Settings:
        return self._settings

    def state(self) -> tuple:
        """A value equal for two scenes with the same content, selection and settings."""
        return (dict(self._objects), self._selection, self._settings)

    def copy(self) -> Scene:
        """An independent scene with the same content and ids (no subscribers)."""
        other = Scene()
        other._objects = dict(self._objects)
        other._brushes_of = {k: set(v) for k, v in self._brushes_of.items()}
        other._selection = self._selection
        other._settings = self._settings
        other._next_id = self._next_id
        return other

    # ------------------------------------------------------------------ writing
    def apply(self, edit: Edit) -> Edit:
        """Apply ``edit`` atomically and return the edit that undoes it.

        Raises :class:`SceneEditError` or ``GeometryError`` (nothing changed) if the result
        would be inconsistent: a brush whose owner is missing or a point entity, an entity
        removed while it still owns brushes, a selected id that does not exist, a brush whose
        faces do not bound a closed convex solid, or an id never allocated.
        """
        objects = {int(k): v for k, v in edit.objects.items()}
        changed = {oid: new for oid, new in objects.items() if self._objects.get(oid) != new}
        selection = edit.selection
        removed = {oid for oid, new in changed.items() if new is None and oid in self._objects}
        if selection is None and removed & self._selection:
            selection = self._selection - removed  # removed objects leave the selection
        if selection is not None:
            selection = frozenset(int(i) for i in selection)
            if selection == self._selection:
                selection = None
        settings = edit.settings if edit.settings != self._settings else None
        self._check(changed, selection)
        if not changed and selection is None and settings is None:
            return Edit()

        inverse = Edit({oid: self._objects.get(oid) for oid in changed},
                       self._selection if selection is not None else None,
                       self._settings if settings is not None else None)
        kind = self._kind(changed, settings)
        touched = set(changed)
        if selection is not None:
            sel_touched = selection ^ self._selection
            touched |= sel_touched
            kind |= ChangeKind.SELECTION
        touched = frozenset(touched)
        self.will_change.emit(touched)
        for oid, new in changed.items():
            old = self._objects.get(oid)
            if isinstance(old, Brush) and old.entity in self._brushes_of:
                self._brushes_of[old.entity].discard(oid)
            if new is None:
                self._objects.pop(oid, None)
                self._brushes_of.pop(oid, None)
            else:
                self._objects[oid] = new
                if isinstance(new, Brush):
                    self._brushes_of.setdefault(new.entity, set()).add(oid)
                elif isinstance(new, Entity):
                    self._brushes_of.setdefault(oid, set())
        if selection is not None:
            self._selection = selection
        if settings is not None:
            self._settings = settings
        self.did_change.emit(touched, kind)
        return inverse

    def _kind(self, changed: dict, settings) -> ChangeKind:
        kind = ChangeKind.SETTINGS if settings is not None else ChangeKind.NONE
        objects = self._objects
        if not any(map(objects.__contains__, changed)):  # only additions (an import)
            return kind | ChangeKind.ADDED if changed else kind
        for oid, new in changed.items():
            old = objects.get(oid)
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

    def _check(self, changed: dict, selection) -> None:
        def final(oid):
            return changed[oid] if oid in changed else self._objects.get(oid)

        # The solids of many new brushes (a big paste or move) in one compiled call; the loop
        # below then finds them cached and names the first brush that is not a closed solid.
        build_solids([b for b in changed.values() if isinstance(b, Brush)], on_error="none")
        owners_losing: set[int] = set()
        for oid, new in changed.items():
            old = self._objects.get(oid)
            if oid < 0 or oid >= self._next_id:
                raise SceneEditError(f"id {oid} was never allocated (next id is {self._next_id})")
            if new is None:
                if isinstance(old, Entity):
                    owners_losing.add(oid)
                continue
            if not isinstance(new, (Brush, Entity) + LEVEL_GEOMETRY):
                raise SceneEditError(f"id {oid}: expected a Brush, an Entity, a Segment or a "
                                     f"Triangle, got {type(new).__name__}")
            if old is not None and type(old) is not type(new):
                raise SceneEditError(f"id {oid}: a {type(old).__name__} cannot become a {type(new).__name__}")
            if isinstance(new, Entity) and isinstance(old, Entity) and new.kind != old.kind:
                raise SceneEditError(f"entity {oid}: a {old.kind} entity cannot become a {new.kind} entity")
            if isinstance(new, Brush):
                owner = final(new.entity)
                if not isinstance(owner, Entity) or owner.kind != BRUSH:
                    what = "does not exist" if owner is None else "is not a brush entity"
                    raise SceneEditError(f"brush {oid}: owner entity {new.entity} {what}")
                try:
                    new.check()
                except GeometryError as exc:
                    raise GeometryError(f"brush {oid}: {exc}") from None
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
