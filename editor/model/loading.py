"""Open any level file as a scene, and describe a scene for the headless commands.

Native ``.json`` scenes are read by :mod:`.native`; every other file goes to the importer the
plugin registry matches by file name (``*.map`` -> ``quake-map`` ...). Every failure raises a
:class:`~spatial.errors.PartitionStudioError` whose message names the file.
"""
from __future__ import annotations

import inspect
import os
from pathlib import Path

import numpy as np

from spatial.errors import PartitionStudioError, PluginError

from .entities import Entity
from .index_sync import scene_split_planes
from .scene import Scene
from .stats import scene_counts


def demo_document() -> Scene:
    """The demo level, built in code (equal to ``resources/demo_level.json``)."""
    from .demo import build_demo_scene
    return build_demo_scene()


def load_document(path: str | os.PathLike, registry=None) -> Scene:
    """Read ``path`` into a scene: native JSON, or through a registered importer.

    ``FILE:PART`` (e.g. ``doom.wad:E1M1``) opens one part of a file holding several levels,
    when ``FILE`` exists and ``FILE:PART`` does not; the importer must take a ``member``
    argument.
    """
    path, member = _split_member(Path(path))
    if path.exists():
        _check_readable(path)
    if path.suffix.lower() == ".json":
        from .native import load_scene
        return load_scene(path, registry)
    if registry is None:
        from spatial.registry import default_registry
        registry = default_registry()
    importer = registry.importer_for(path)
    if importer is None:
        known = sorted({p for i in registry.importers.values() for p in i.patterns} | {"*.json"})
        raise PluginError(f"{path}: no importer reads this kind of file (known: {', '.join(known)})")
    if not path.exists():
        raise PartitionStudioError(f"{path}: no such file")
    if member is not None and "member" not in inspect.signature(importer.load).parameters:
        raise PluginError(f"{path}:{member}: importer '{importer.name}' reads whole files only")
    try:
        document = importer.load(path) if member is None else importer.load(path, member=member)
    except OSError as exc:  # read between the check above and now, or by the importer itself
        raise PartitionStudioError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not isinstance(document, Scene):
        raise PluginError(f"{path}: importer '{importer.name}' returned "
                          f"{type(document).__name__}, not a scene")
    return document


def _check_readable(path: Path) -> None:
    """Refuse a folder, a device or pipe (reading one may never end) and an unreadable file."""
    if path.is_dir():
        raise PartitionStudioError(f"{path}: is a folder, not a level file")
    if not path.is_file():
        raise PartitionStudioError(f"{path}: is not a regular file (a device or pipe cannot be "
                                   "read as a level)")
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise PartitionStudioError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _split_member(path: Path) -> tuple[Path, str | None]:
    """``dir/levels.wad:MAP01`` -> ``(dir/levels.wad, "MAP01")`` when only the former exists."""
    head, sep, member = path.name.rpartition(":")
    if sep and head and member and not path.exists() and (path.parent / head).exists():
        return path.parent / head, member
    return path, None


def document_source(scene: Scene, source: str):
    """What the ``stats``/``simulate`` commands need of a scene (an ``editor.cli.SceneSource``)."""
    from editor.cli import SceneSource  # the command line's own record type

    ids = scene.indexed_ids()
    lo, hi = scene.bounds_of(ids)
    counts = scene_counts(scene, indexed=(ids, lo, hi))
    counts = {"brushes": counts["brushes"], "entities": counts["entities"],
              "brush_entities": counts["brush_entities"], "faces": counts["faces"],
              "triangles": len(scene.triangle_ids()), "segments": len(scene.segment_ids()),
              "objects": counts["objects"],
              "bounds": counts["bounds"]}
    # point entities move; brushes, wall segments and mesh triangles are static
    objects = scene.objects
    dynamic = np.array([isinstance(objects[i], Entity) for i in ids.tolist()], dtype=bool)
    settings = scene.settings
    return SceneSource(str(source), counts, ids, lo, hi, dynamic,
                       split_planes=scene_split_planes(scene), backend=settings.backend,
                       params=dict(settings.params), document=scene)
