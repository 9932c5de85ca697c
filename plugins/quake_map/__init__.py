"""Quake-family ``.map`` files: import into and export from the scene.

:mod:`plugins.quake_map.syntax` reads and writes the text format itself (entities, brushes and
faces exactly as written, standard and Valve 220 texture forms, TrenchBroom headers, layers and
groups kept as ordinary entities) and knows nothing of the scene model.
"""
