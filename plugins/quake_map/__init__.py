"""Quake-family ``.map`` files: import into and export from the scene.

:mod:`plugins.quake_map.syntax` reads and writes the text format itself (entities, brushes and
faces exactly as written, standard and Valve 220 texture forms, TrenchBroom headers, layers and
groups kept as ordinary entities) and knows nothing of the scene model.
"""


def register(registry) -> None:
    """Built-in plugin entry point: the ``quake-map`` importer and exporter."""
    from .convert import load_map, save_map_scene

    registry.add_importer("quake-map", ("*.map",), load_map,
                          "Quake .map (standard and Valve 220, TrenchBroom layers and groups)")
    registry.add_exporter("quake-map", ("*.map",), save_map_scene, kind="scene",
                          description="Quake .map in the scene's own face format",
                          stores_settings=True)
