"""The document model: a Qt-free scene, commands, undo stack, index sync and file format.

API overview
------------
Values (immutable; edits build new ones):

* :class:`Face` — three plane points + texture name, offset, rotation, scale, Valve 220 axes,
  extra tokens, all kept verbatim.
* :class:`Brush` — ``Brush(entity_id, faces)``; ``lo``/``hi``/``solid`` from
  :mod:`spatial.brush`; ``translated(delta)``, ``scaled(anchor, factors)``, ``resized(lo, hi)``.
* :class:`Entity` — ``Entity(kind, properties)`` with kind ``"point"`` or ``"brush"`` and
  ordered ``(key, value)`` pairs; ``classname``, ``origin``, ``lo``/``hi`` (class hull from
  :func:`class_box`), ``get(key)``. Helpers :func:`point_entity`, :func:`brush_entity`.
  TrenchBroom groups/layers are brush entities with ``_tb_type``/``_tb_id``/``_tb_name``;
  members refer to them with ``_tb_layer``/``_tb_group`` — all plain key/values, kept verbatim.

The document:

* :class:`Scene` — ids → objects. ``scene[id]``, ``scene.get(id)``, ``brush_ids()``,
  ``entity_ids()``, ``point_entity_ids()``, ``brushes_of(entity_id)``, ``indexed_ids()``
  (brushes + point entities: what the spatial index holds), ``bounds_of(ids)``, ``bounds()``,
  ``selection``, ``settings`` (backend name, params, metadata), ``worldspawn_id()``,
  ``allocate_ids(n)`` (fresh sequential ids, never reused), ``state()`` (comparable snapshot).
* Events: ``scene.will_change.connect(cb(ids))`` and ``scene.did_change.connect(cb(ids,
  kind))``, once per applied edit; ``kind`` is a :class:`ChangeKind` flag set (ADDED, REMOVED,
  GEOMETRY, PROPERTIES, SELECTION, SETTINGS). ``ids`` are the objects whose value changed (and,
  for SELECTION, those entering or leaving the selection). A did_change callback that raises
  goes to ``scene.listener_error_handler``; the edit and its undo step stand.

Editing — never write the scene directly, push commands:

* ``stack = UndoStack(scene)``; ``stack.push(cmd)`` runs it (no-ops are dropped);
  ``undo()``, ``redo()``, ``can_undo()``, ``can_redo()``, ``undo_text()``, ``redo_text()``,
  ``index``, ``history`` (texts), ``set_index(i)``, ``is_clean()``, ``set_clean()``,
  ``clear()``, ``with stack.transaction("Paste"): ...`` (one step; rolled back on error),
  ``stack.changed.connect(cb(stack))``.
* Commands: ``AddObjects({id: obj}, select=False)``, ``RemoveObjects(ids)`` (entity ids take
  their brushes along), ``Transform(ids, delta=, factors=, anchor=, merge_id=)`` and
  ``Transform.resize(scene, ids, new_lo, new_hi)``, ``SetProperties(ids, {key: value|None})``,
  ``Reparent(brush_ids, entity_id)``, ``SetSelection(ids)``, ``SetSettings(backend=, params=,
  metadata=)``. Give every push of one mouse drag the same ``merge_id`` (e.g. a drag counter)
  to make it one undo step.

Around it:

* :class:`IndexSync` — ``IndexSync(scene)`` keeps ``sync.index`` (any registered backend)
  in step incrementally (brushes static, point entities dynamic, ids shared with the scene);
  ``set_backend(name, params)``, ``set_params(params)``, ``rebuild()``,
  ``offer_split_planes()`` (with ``eager_planes=False`` a geometry-driven backend gets new
  planes only when asked, e.g. at the end of a drag); ``sync.changed`` fires after the index
  caught up (views querying the index listen there). It follows ``scene.settings`` (change
  those with SetSettings, which checks backend and parameters against the registry) and owns
  the rebuild policy: in place or from the scene, through an injected ``runner`` above
  ``background_above`` objects, a ``warm_up`` hook for cold kernels, stale results dropped,
  ``cancel()``; ``rebuild_started``/``rebuild_finished`` around it.
* :mod:`.native` — ``save_scene(scene, path)`` (atomic) and ``load_scene(path)`` (validated;
  ``NativeFormatError`` names the JSON field), ``dumps_scene``/``loads_scene``.
* :mod:`.loading` — ``open_level(path)``, the one path from a file to a document (native JSON
  or a registered importer such as ``quake-map``; ``FILE.wad:MAP``; a ``LoadResult`` with the
  warnings), ``save_level``, ``level_parts``, ``level_file_types``, ``stores_settings``,
  ``demo_document()``.
* :mod:`.index_input` — ``index_input(scene)``: the one record every index is built from
  (boxes, flags, split planes, wall segments, triangles).
* :mod:`.shapes` — ``box_brush``, ``ramp_brush``, ``prism_brush`` for tools.
* :func:`scene_counts` (:mod:`.stats`) — the scene part of ``stats``;
  :func:`~.demo.build_demo_scene` — the demo level (``resources/demo_level.json``).
"""
from .brushes import Brush, build_solids
from .commands import (
                       AddObjects,
                       Command,
                       EditCommand,
                       MacroCommand,
                       RemoveObjects,
                       Reparent,
                       SetProperties,
                       SetSelection,
                       SetSettings,
                       Transform,
)
from .entities import BRUSH, POINT, Entity, brush_entity, point_entity
from .entity_classes import class_box
from .events import ChangeKind, Signal
from .faces import Face
from .index_sync import IndexSync
from .scene import Edit, Scene, SceneEditError, Settings
from .split_planes import scene_split_planes
from .stats import scene_counts
from .undo import UndoStack

__all__ = [
    "AddObjects", "BRUSH", "Brush", "ChangeKind", "Command", "Edit", "EditCommand", "Entity",
    "Face", "IndexSync", "MacroCommand", "POINT", "RemoveObjects", "Reparent", "Scene", "SceneEditError",
    "SetProperties", "SetSelection", "SetSettings", "Settings", "Signal", "Transform",
    "UndoStack", "brush_entity", "build_solids", "class_box", "point_entity", "scene_counts", "scene_split_planes",
]
