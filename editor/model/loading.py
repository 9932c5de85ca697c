"""Open any level file as a scene, and describe a scene for the headless commands.

Native ``.json`` scenes are read by :mod:`.native`; every other file goes to the importer the
plugin registry matches by file name (``*.map`` -> ``quake-map`` ...). Every failure raises a
:class:`~spatial.errors.PartitionStudioError` whose message names the file.
"""
from __future__ import annotations

import inspect
import os
from pathlib import Path

from spatial.errors import PartitionStudioError, PluginError

from .index_input import index_input
from .scene import Scene


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
    if path.suffix.lower() == ".json":
        from .native import load_scene
        return load_scene(path)
    if registry is None:
        from spatial.registry import default_registry
        registry = default_registry()
    importer = registry.importer_for(path)
    if importer is None:
        known = sorted({p for i in registry.importers.values() for p in i.patterns} | {"*.json"})
        raise PluginError(f"{path}: no importer reads this kind of file (known: {', '.join(known)})")
    if not path.exists():
        raise PartitionStudioError(f"{path}: no such file")
    if member is None:
        document = importer.load(path)
    elif "member" in inspect.signature(importer.load).parameters:
        document = importer.load(path, member=member)
    else:
        raise PluginError(f"{path}:{member}: importer '{importer.name}' reads whole files only")
    if not isinstance(document, Scene):
        raise PluginError(f"{path}: importer '{importer.name}' returned "
                          f"{type(document).__name__}, not a scene")
    return document


def _split_member(path: Path) -> tuple[Path, str | None]:
    """``dir/levels.wad:MAP01`` -> ``(dir/levels.wad, "MAP01")`` when only the former exists."""
    head, sep, member = path.name.rpartition(":")
    if sep and head and member and not path.exists() and (path.parent / head).exists():
        return path.parent / head, member
    return path, None


def document_source(scene: Scene, source: str):
    """What the ``stats``/``simulate`` commands need of a scene: its :class:`~.index_input.IndexInput`
    with the scene counts of a report."""
    return index_input(scene, source, counts=True)
