"""Undoable commands: a few primitives that compose (add, remove, transform, set properties,
reparent, select, settings).

A command computes its forward :class:`~.scene.Edit` from the scene the first time it is
redone, and keeps the exact inverse the scene returned, so undo and redo replay stored values
(no floating-point drift, no re-planning). Like ``QUndoCommand``:

* :meth:`Command.redo` / :meth:`Command.undo` apply and revert;
* :attr:`Command.merge_id` — consecutive commands with the same non-``None`` id may merge
  (:meth:`Command.merge_with`), e.g. the moves of one mouse drag;
* :attr:`Command.is_obsolete` — the command changed nothing (the stack drops it);
* :attr:`Command.modifies_document` — ``False`` for selection-only commands (the document
  stays clean).
"""
from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping

import numpy as np

from .brushes import Brush
from .entities import Entity
from .scene import Edit, Scene, SceneEditError, SceneObject, Settings


class Command:
    """Base class of every undoable command."""

    def __init__(self, text: str = "", merge_id: Hashable | None = None) -> None:
        self.text = text
        self.merge_id = merge_id

    def redo(self, scene: Scene) -> None:
        raise NotImplementedError

    def undo(self, scene: Scene) -> None:
        raise NotImplementedError

    def merge_with(self, other: Command) -> bool:
        """Absorb ``other`` (already redone, pushed right after this one); True on success."""
        return False

    @property
    def is_obsolete(self) -> bool:
        return False

    @property
    def modifies_document(self) -> bool:
        return True

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.text!r}>"


class EditCommand(Command):
    """A command defined by the edit :meth:`plan` computes from the current scene."""

    def __init__(self, text: str = "", merge_id: Hashable | None = None) -> None:
        super().__init__(text, merge_id)
        #: ``(forward, inverse)`` once the command was first redone
        self._edits: tuple[Edit, Edit] | None = None

    def plan(self, scene: Scene) -> Edit:
        """The forward edit, computed from the scene as it is at the first redo."""
        raise NotImplementedError

    def redo(self, scene: Scene) -> None:
        if self._edits is not None:
            scene.apply(self._edits[0])
            return
        inverse = scene.apply(self.plan(scene))
        # Keep only what really changed, with the values the scene now holds.
        forward = Edit({oid: scene.get(oid) for oid in inverse.objects},
                       scene.selection if inverse.selection is not None else None,
                       scene.settings if inverse.settings is not None else None,
                       meshes=tuple(m for m in scene.meshes
                                    if m.first_id in inverse.drop_meshes),
                       drop_meshes=tuple(m.first_id for m in inverse.meshes))
        self._edits = (forward, inverse)

    def undo(self, scene: Scene) -> None:
        if self._edits is None:
            raise SceneEditError(f"{self!r} cannot be undone before it was done")
        scene.apply(self._edits[1])

    @property
    def is_obsolete(self) -> bool:
        if self._edits is None:
            return False
        fwd, inv = self._edits
        return (all(fwd.objects[oid] == inv.objects[oid] for oid in fwd.objects)
                and fwd.selection == inv.selection and fwd.settings == inv.settings
                and not (fwd.meshes or fwd.drop_meshes))

    @property
    def modifies_document(self) -> bool:
        if self._edits is None:
            return True
        inv = self._edits[1]
        return (bool(inv.objects) or inv.settings is not None
                or bool(inv.meshes or inv.drop_meshes))

    def merge_with(self, other: Command) -> bool:
        if (type(other) is not type(self) or self.merge_id is None or other.merge_id != self.merge_id
                or self._edits is None or not isinstance(other, EditCommand) or other._edits is None):
            return False
        fwd, inv = self._edits
        other_fwd, other_inv = other._edits
        fwd.objects.update(other_fwd.objects)
        for oid, old in other_inv.objects.items():
            inv.objects.setdefault(oid, old)  # our own "before" values are older, they win
        if other_fwd.selection is not None:
            fwd.selection = other_fwd.selection
            if inv.selection is None:
                inv.selection = other_inv.selection
        if other_fwd.settings is not None:
            fwd.settings = other_fwd.settings
            if inv.settings is None:
                inv.settings = other_inv.settings
        return True


def _expand(scene: Scene, ids: Iterable[int]) -> list[int]:
    """Ids with every brush entity replaced by itself plus its brushes (sorted, unique)."""
    out: set[int] = set()
    for oid in ids:
        obj = scene[int(oid)]
        out.add(int(oid))
        if isinstance(obj, Entity) and not obj.is_point:
            out.update(scene.brushes_of(int(oid)))
    return sorted(out)


def _replace_each(scene: Scene, ids: Iterable[int], kind: type, refusal: str, change) -> Edit:
    """An edit replacing every object of ``ids`` by ``change(object)``.

    Raises ``SceneEditError`` with ``refusal`` (``{oid}`` names the object) for an object that is
    not a ``kind``, before anything changes.
    """
    out = {}
    for oid in ids:
        obj = scene[oid]
        if not isinstance(obj, kind):
            raise SceneEditError(refusal.format(oid=oid))
        out[oid] = change(obj)
    return Edit(out)


class AddObjects(EditCommand):
    """Add objects under ids from :meth:`Scene.allocate_ids` (entities before their brushes
    need no particular order: the edit is checked as a whole)."""

    def __init__(self, objects: Mapping[int, SceneObject], text: str = "Add", select: bool = False):
        super().__init__(text)
        self.objects = {int(k): v for k, v in objects.items()}
        self.select = select

    def plan(self, scene: Scene) -> Edit:
        for oid in self.objects:
            if oid in scene:
                raise SceneEditError(f"cannot add id {oid}: it is already in use")
        return Edit(dict(self.objects), frozenset(self.objects) if self.select else None)


class RemoveObjects(EditCommand):
    """Remove objects; removing a brush entity removes its brushes too."""

    def __init__(self, ids: Iterable[int], text: str = "Delete"):
        super().__init__(text)
        self.ids = [int(i) for i in ids]

    def plan(self, scene: Scene) -> Edit:
        return Edit({oid: None for oid in _expand(scene, self.ids)})


class Transform(EditCommand):
    """Scale about ``anchor`` by ``factors`` (brushes only), then translate by ``delta``.

    Brush entities in ``ids`` stand for their brushes. Point entities move with their origin
    (they keep their class size). Wall segments and mesh triangles are static level geometry
    and stay where they are. Moves carrying the same ``merge_id`` (one id per mouse drag)
    merge into one undo step.
    """

    def __init__(self, ids: Iterable[int], delta=(0.0, 0.0, 0.0), factors=(1.0, 1.0, 1.0),
                 anchor=(0.0, 0.0, 0.0), text: str = "Move", merge_id: Hashable | None = None):
        super().__init__(text, merge_id)
        self.ids = [int(i) for i in ids]
        self.delta = np.asarray(delta, dtype=np.float64).reshape(3)
        self.factors = np.asarray(factors, dtype=np.float64).reshape(3)
        self.anchor = np.asarray(anchor, dtype=np.float64).reshape(3)

    @classmethod
    def resize(cls, scene: Scene, ids: Iterable[int], new_lo, new_hi, text: str = "Resize",
               merge_id: Hashable | None = None) -> Transform:
        """The transform taking the joint bounds of ``ids`` onto ``[new_lo, new_hi]``."""
        targets = [i for i in _expand(scene, ids) if scene.is_indexed(i)]
        if not targets:
            raise SceneEditError("nothing to resize")
        lo, hi = scene.bounds_of(targets)
        lo, hi = lo.min(axis=0), hi.max(axis=0)
        new_lo = np.asarray(new_lo, dtype=np.float64).reshape(3)
        new_hi = np.asarray(new_hi, dtype=np.float64).reshape(3)
        if (new_hi <= new_lo).any() or (hi <= lo).any():
            raise SceneEditError("resize needs a positive size on every axis, "
                                 f"got {new_lo.tolist()} .. {new_hi.tolist()}")
        return cls(ids, delta=new_lo - lo, factors=(new_hi - new_lo) / (hi - lo), anchor=lo,
                   text=text, merge_id=merge_id)

    def plan(self, scene: Scene) -> Edit:
        changes: dict[int, SceneObject | None] = {}
        for oid in _expand(scene, self.ids):
            obj = scene[oid]
            if isinstance(obj, Brush):
                changes[oid] = obj.scaled(self.anchor, self.factors).translated(self.delta)
            elif isinstance(obj, Entity) and obj.is_point:
                origin = obj.origin
                target = self.anchor + (origin - self.anchor) * self.factors + self.delta
                changes[oid] = obj.translated(target - origin)
        return Edit(changes)


class SetProperties(EditCommand):
    """Set (str) or delete (``None``) key/values of entities; new keys go last."""

    def __init__(self, ids: Iterable[int], changes: Mapping[str, str | None],
                 text: str = "Set Properties", merge_id: Hashable | None = None):
        super().__init__(text, merge_id)
        self.ids = [int(i) for i in ids]
        self.changes = {str(k): (None if v is None else str(v)) for k, v in changes.items()}

    def plan(self, scene: Scene) -> Edit:
        return _replace_each(scene, self.ids, Entity, "id {oid} is a brush; only entities have key/values",
                             lambda entity: entity.with_properties(self.changes))


class Reparent(EditCommand):
    """Move brushes into another brush entity (grouping, func_door from world brushes...)."""

    def __init__(self, brush_ids: Iterable[int], entity: int, text: str = "Reparent"):
        super().__init__(text)
        self.brush_ids = [int(i) for i in brush_ids]
        self.entity = int(entity)

    def plan(self, scene: Scene) -> Edit:
        return _replace_each(scene, self.brush_ids, Brush, "id {oid} is not a brush",
                             lambda brush: brush.with_entity(self.entity))


class SetSelection(EditCommand):
    """Replace the selection (undoable; never makes the document dirty)."""

    def __init__(self, ids: Iterable[int], text: str = "Select"):
        super().__init__(text)
        self.ids = frozenset(int(i) for i in ids)

    def plan(self, scene: Scene) -> Edit:
        return Edit(selection=self.ids)


class SetSettings(EditCommand):
    """Change the document's backend choice, its parameters or metadata (``None`` = keep)."""

    def __init__(self, backend: str | None = None, params: Mapping | None = None,
                 metadata: Mapping | None = None, text: str = "Change Settings",
                 merge_id: Hashable | None = None, registry=None, saved: bool = True):
        super().__init__(text, merge_id)
        self.backend, self.params, self.metadata = backend, params, metadata
        self.registry = registry
        #: False when the document's file format cannot hold settings: the change is undoable
        #: but leaves the document clean (there is nothing new to save)
        self.saved = saved

    @property
    def modifies_document(self) -> bool:
        return self.saved and super().modifies_document

    def plan(self, scene: Scene) -> Edit:
        cur = scene.settings
        backend = cur.backend if self.backend is None else self.backend
        if self.params is not None:
            params = dict(self.params)
        else:
            params = cur.params if backend == cur.backend else {}
        metadata = cur.metadata if self.metadata is None else dict(self.metadata)
        settings = Settings(backend, params, metadata)
        if self.backend is not None or self.params is not None:
            _check_backend_params(settings, self.registry, scene)
        return Edit(settings=settings)


def _check_backend_params(settings: Settings, registry=None, scene: Scene | None = None) -> None:
    """Reject an unknown backend, a bad parameter, or parameters whose worst-case memory on
    the scene's objects exceeds the budget, before the document records them. The parameters
    are parsed here, once: the settings keep the parsed value (:meth:`Settings.parsed`)."""
    from spatial.backend_lookup import backend_class

    cls = backend_class(settings.backend, registry)
    parsed = settings.parsed(cls)
    if scene is not None:
        cls.check_memory_budget(parsed, *scene.bounds_of(scene.indexed_ids()))


class MacroCommand(Command):
    """Several commands as one undo step (what a transaction produces)."""

    def __init__(self, text: str, children: list[Command] | None = None):
        super().__init__(text)
        self.children: list[Command] = list(children or [])

    def redo(self, scene: Scene) -> None:
        for child in self.children:
            child.redo(scene)

    def undo(self, scene: Scene) -> None:
        for child in reversed(self.children):
            child.undo(scene)

    @property
    def is_obsolete(self) -> bool:
        return all(c.is_obsolete for c in self.children)

    @property
    def modifies_document(self) -> bool:
        return any(c.modifies_document and not c.is_obsolete for c in self.children)
