"""Doom and Hexen WAD maps: import a map as a 2D level of wall segments and things.

* :mod:`.wad` — the container (directory, map markers), :func:`list_maps` for a map chooser,
  :func:`split_map_suffix` for ``FILE.wad:MAP01`` names.
* :mod:`.mapdata` — the binary lumps as checked numpy record arrays (Doom and Hexen formats).
* :mod:`.convert` — a map to a scene (segments, things as entities, sector heights).
* :mod:`.things` — readable class names of Doom, Doom II and Freedoom thing types.
* :mod:`.shipped_bsp` — the map's own BSP (NODES/SSECTORS/SEGS) as a read-only structure with
  a :class:`~spatial.contract.NodeTable`, to compare with the trees built here.
* :mod:`.shipped_index` — that tree as the read-only ``shipped_bsp`` backend.

Open a map with ``load_document("doom.wad:E1M1")`` (``FILE.wad`` alone opens the first map).
"""
from .wad import WadError, list_maps, split_map_suffix

__all__ = ["WadError", "list_maps", "split_map_suffix", "register"]


def load_wad(path, member: str | None = None):
    """Importer entry point: map ``member`` of the WAD (the first map when None); see
    :func:`.convert.load_wad`. The converter is imported here, on first use, not when the
    editor starts."""
    from .convert import load_wad as load

    return load(path, member)


def register(registry) -> None:
    """Built-in plugin entry point: the ``doom-wad`` importer (``FILE.wad`` or ``FILE.wad:MAP``)."""
    from .wad import map_summaries

    registry.add_importer("doom-wad", ("*.wad",), load_wad,
                          "Doom/Hexen WAD map (FILE.wad:MAP01 picks a map; binary formats)",
                          parts=map_summaries)
    from .shipped_index import ShippedBSPIndex

    registry.add_backend(ShippedBSPIndex)
