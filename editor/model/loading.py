"""Open any level file as a scene, and describe a scene for the headless commands.

Native ``.json`` scenes are read by :mod:`.native`; every other file goes to the importer the
plugin registry matches by file name (``*.map`` -> ``quake-map`` ...). Every failure raises a
:class:`~spatial.errors.PartitionStudioError` whose message names the file.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from spatial.errors import PartitionStudioError, PluginError

from .brushes import Brush
from .index_sync import scene_split_planes
from .scene import Scene
from .stats import scene_counts


def demo_document() -> Scene:
    """The demo level, built in code (equal to ``resources/demo_level.json``)."""
    from .demo import build_demo_scene
    return build_demo_scene()


def load_document(path: str | os.PathLike, registry=None) -> Scene:
    """Read ``path`` into a scene: native JSON, or through a registered importer."""
    path = Path(path)
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
    document = importer.load(path)
    if not isinstance(document, Scene):
        raise PluginError(f"{path}: importer '{importer.name}' returned "
                          f"{type(document).__name__}, not a scene")
    return document


def document_source(scene: Scene, source: str):
    """What the ``stats``/``simulate`` commands need of a scene (an ``editor.cli.SceneSource``)."""
    from editor.cli import SceneSource  # the command line's own record type

    counts = scene_counts(scene)
    counts = {"brushes": counts["brushes"], "entities": counts["entities"],
              "brush_entities": counts["brush_entities"], "faces": counts["faces"],
              "triangles": 0, "segments": 0, "objects": counts["objects"],
              "bounds": counts["bounds"]}
    ids = scene.indexed_ids()
    lo, hi = scene.bounds_of(ids)
    dynamic = np.array([not isinstance(scene[int(i)], Brush) for i in ids], dtype=bool)
    settings = scene.settings
    return SceneSource(str(source), counts, ids, lo, hi, dynamic,
                       split_planes=scene_split_planes(scene), backend=settings.backend,
                       params=dict(settings.params), document=scene)
