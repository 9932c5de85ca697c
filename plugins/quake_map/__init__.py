"""Quake-family ``.map`` files: import into and export from the scene.

:mod:`plugins.quake_map.syntax` reads and writes the text format itself (entities, brushes and
faces exactly as written, standard and Valve 220 texture forms, TrenchBroom headers, layers and
groups kept as ordinary entities) and knows nothing of the scene model.
"""
from __future__ import annotations

import os


# The reader and writer are imported on first use, not when the editor starts (most sessions
# never open a .map): these entry points keep the signatures of :mod:`.convert`'s, which the
# loader inspects for the options it passes.
def load_map(path: str | os.PathLike, on_bad_brush: str = "raise", warn=None):
    """Read a ``.map`` file into a scene; see :func:`.convert.load_map`."""
    from .convert import load_map as load

    return load(path, on_bad_brush, warn)


def save_map_scene(scene, path: str | os.PathLike, map_format: str | None = None) -> None:
    """Write the scene as a ``.map`` file; see :func:`.convert.save_map_scene`."""
    from .convert import save_map_scene as save

    save(scene, path, map_format)


#: the writer keeps brushes bounding no solid as written (editor/model/invalid_brushes.py)
save_map_scene.holds_invalid_brushes = True  # type: ignore[attr-defined]


def register(registry) -> None:
    """Built-in plugin entry point: the ``quake-map`` importer and exporter."""
    registry.add_importer("quake-map", ("*.map",), load_map,
                          "Quake .map (standard and Valve 220, TrenchBroom layers and groups)")
    registry.add_exporter("quake-map", ("*.map",), save_map_scene, kind="scene",
                          description="Quake .map in the scene's own face format",
                          stores_settings=True)
