"""The scale and up axis a level's file format implies, for converting to engine units."""
from __future__ import annotations

from pathlib import PurePath

#: Quake and Doom maps: 32 units to the metre (a 56-unit Doom player is about 1.75 m)
MAP_UNITS_PER_METRE = 32.0
#: formats whose coordinates are map units, z up
MAP_SUFFIXES = (".map", ".wad")
#: mesh formats: metres, y up (glTF's convention, and OBJ's in practice)
MESH_SUFFIXES = (".obj", ".gltf", ".glb", ".ply", ".stl", ".off", ".dae", ".fbx")


def level_scale(path: str | None) -> tuple[float, int]:
    """``(units_per_metre, up_axis)`` for the level file at ``path`` (``FILE.wad:MAP`` too).

    32 and z for Quake and Doom maps, 1 and y for meshes, 1 and z for anything else (native
    documents and the demo level, whose coordinates are z-up)."""
    if not path:
        return 1.0, 2
    suffix = PurePath(str(path).split(":", 1)[0] if ".wad:" in str(path).lower() else str(path)).suffix.lower()
    if suffix in MAP_SUFFIXES:
        return MAP_UNITS_PER_METRE, 2
    if suffix in MESH_SUFFIXES:
        return 1.0, 1
    return 1.0, 2
