"""Open a level file as a :class:`~editor.model.Scene`: native JSON, or any registered importer.

The document model owns the native format; importers come from the plugin registry. While no
``.map`` importer is registered, Quake maps are read with :mod:`plugins.quake_map.syntax` and
turned into scene values here (brushes whose planes do not close a solid are skipped and
counted, as editors do, instead of refusing the whole level).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from spatial.errors import GeometryError, PartitionStudioError


class OpenError(PartitionStudioError):
    """A file could not be opened; the message names the file (and line/field when known)."""


@dataclass
class LoadedScene:
    """A scene read from disk and what the reader had to say about it."""

    scene: object
    path: str | None
    warnings: list[str] = field(default_factory=list)


def demo_path() -> Path:
    from editor.model.demo import DEMO_PATH
    return DEMO_PATH


def load_scene_file(path: str | os.PathLike | None, progress=None) -> LoadedScene:
    """Read ``path`` (``None``: the demo level) into a scene.

    Parameters
    ----------
    path : path-like or None
        The file to open.
    progress : callable, optional
        ``progress(fraction, text)`` for a progress bar; may be called from a worker thread.

    Raises
    ------
    OpenError
        With a one-line message naming the file, for every failure (I/O, syntax, geometry).
    """
    report = progress or (lambda fraction, text: None)
    if path is None:
        from editor.model.native import load_scene
        report(0.1, "Reading the demo level")
        return LoadedScene(load_scene(demo_path()), None)
    path = str(path)
    head, sep, member = path.rpartition(":")
    if sep and member and not os.path.exists(path) and os.path.isfile(head):
        return _load_member(path)  # FILE.wad:MAP — one level of a file holding several
    if not os.path.exists(path):
        raise OpenError(f"{path}: no such file")
    report(0.05, f"Reading {os.path.basename(path)}")
    try:
        if path.lower().endswith(".json"):
            from editor.model.native import load_scene
            return LoadedScene(load_scene(path), path)
        from spatial.registry import default_registry
        importer = default_registry().importer_for(path)
        if importer is not None:
            loaded = importer.load(path)
            scene = getattr(loaded, "scene", loaded)
            return LoadedScene(scene, path, list(getattr(loaded, "warnings", []) or []))
        if path.lower().endswith(".map"):
            return _load_quake_map(path, report)
    except OpenError:
        raise
    except (PartitionStudioError, ValueError, OSError, UnicodeError) as exc:
        message = str(exc)
        if path not in message:
            message = f"{path}: {message}"
        raise OpenError(message) from exc
    raise OpenError(f"{path}: no importer for this kind of file")


def _load_member(path: str) -> LoadedScene:
    from editor.model.loading import load_document
    try:
        return LoadedScene(load_document(path), path)
    except (PartitionStudioError, ValueError, OSError) as exc:
        message = str(exc)
        raise OpenError(message if path.split(":")[0] in message else f"{path}: {message}") from exc


def _load_quake_map(path: str, report) -> LoadedScene:
    from editor.model import Brush, Entity, Face
    from editor.model.brushes import build_solids
    from editor.model.entities import BRUSH, POINT
    from editor.model.scene import Edit, Scene, Settings
    from plugins.quake_map.syntax import read_map

    mapfile = read_map(path)
    report(0.4, "Building brushes")
    scene = Scene()
    objects: dict = {}
    warnings: list[str] = []
    brushes: list[tuple[int, Brush, int]] = []
    for entity in mapfile.entities:
        is_brush_entity = bool(entity.brushes) or entity.classname == "worldspawn" \
            or "origin" not in dict(entity.properties)
        eid = scene.allocate_ids(1)[0]
        objects[eid] = Entity(BRUSH if is_brush_entity else POINT, tuple(entity.properties))
        for mb in entity.brushes:
            faces = tuple(Face(f.points, f.texture, f.offset, f.rotation, f.scale,
                               f.u_axis, f.v_axis, f.extra) for f in mb.faces)
            bid = scene.allocate_ids(1)[0]
            brushes.append((bid, Brush(eid, faces), mb.line))
    try:
        build_solids([b for _, b, _ in brushes])
    except GeometryError:
        pass  # some brush is broken: find which ones below, one by one
    skipped = 0
    for bid, brush, line in brushes:
        try:
            brush.check()
        except GeometryError as exc:
            skipped += 1
            if skipped <= 3:
                warnings.append(f"{path}:{line}: brush skipped: {exc}")
            continue
        objects[bid] = brush
    if skipped > 3:
        warnings.append(f"{path}: {skipped} brushes skipped in all")
    for oid, obj in list(objects.items()):
        if isinstance(obj, Entity) and obj.is_point:
            try:
                _ = obj.origin  # raises on a malformed origin key
            except (GeometryError, ValueError) as exc:
                warnings.append(f"{path}: entity {obj.classname}: {exc}; skipped")
                del objects[oid]
    report(0.8, "Assembling the scene")
    scene.apply(Edit(objects, settings=Settings(
        backend="octree", metadata={"map_format": mapfile.format, "map_header": list(mapfile.header)})))
    return LoadedScene(scene, path, warnings)


def save_scene_file(scene, path: str) -> None:
    """Save ``scene`` to ``path``: native JSON, or a registered exporter for other patterns."""
    if path.lower().endswith(".json"):
        from editor.model.native import save_scene
        save_scene(scene, path)
        return
    from spatial.registry import default_registry
    exporter = default_registry().exporter_for(path)
    if exporter is None:
        raise OpenError(f"{path}: no exporter for this kind of file (save as .json)")
    exporter.save(scene, path)
