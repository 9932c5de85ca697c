"""The WAD container: header, lump directory, map markers.

Reader choice
-------------
This is a small ``struct``/numpy reader of our own rather than omgifol (the maintained Python
WAD library on PyPI). The format is a 12-byte header, a directory of 16-byte entries and
fixed-size records, so a whole lump becomes one numpy structured array in a single call, which
is what the index needs; omgifol builds one Python object per record and reports damaged files
with generic ``struct`` errors, while every check here names the lump (and the map) at fault.
The tests cross-check the counts against the lump sizes read independently.

Layout (all little-endian): ``"IWAD"`` or ``"PWAD"``, lump count (int32), directory offset
(int32); each directory entry is ``offset (int32), size (int32), name (8 bytes, NUL padded)``.
A map is a marker lump (``E1M1``, ``MAP01`` or any name) followed by its data lumps.
"""
from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from spatial.errors import PartitionStudioError

HEADER = struct.Struct("<4sii")
ENTRY_DTYPE = np.dtype([("offset", "<i4"), ("size", "<i4"), ("name", "S8")])

#: Lumps that follow a map marker in the binary formats (Hexen adds BEHAVIOR, ZDoom SCRIPTS).
MAP_LUMPS = ("THINGS", "LINEDEFS", "SIDEDEFS", "VERTEXES", "SEGS", "SSECTORS", "NODES",
             "SECTORS", "REJECT", "BLOCKMAP", "BEHAVIOR", "SCRIPTS")

#: The most lumps a directory may list. Doom II has 2,919 and the largest megawads some tens of
#: thousands; the bound keeps a damaged count from costing one Python object per 16 bytes.
MAX_LUMPS = 1_000_000

#: The lumps a map cannot do without.
REQUIRED_LUMPS = ("THINGS", "LINEDEFS", "SIDEDEFS", "VERTEXES", "SECTORS")


class WadError(PartitionStudioError, ValueError):
    """A WAD file is damaged or not a WAD; the message names the file and the lump."""

    def __init__(self, path: str, message: str, lump: str | None = None):
        self.path, self.lump = str(path), lump
        where = f"{path}: lump {lump}: " if lump else f"{path}: "
        super().__init__(where + message)


@dataclass(frozen=True)
class Lump:
    """One directory entry: ``index`` in the directory, ``name``, byte ``offset`` and ``size``."""

    index: int
    name: str
    offset: int
    size: int


class WadFile:
    """A WAD read into memory with a checked directory.

    Parameters
    ----------
    path : str or path-like
        The file. Raises :class:`WadError` when it is not a WAD or its directory points
        outside the file.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = str(path)
        try:
            self.data = Path(path).read_bytes()
        except OSError as exc:
            raise WadError(self.path, f"cannot read: {exc.strerror or exc}") from None
        if len(self.data) < HEADER.size:
            raise WadError(self.path, f"too short for a WAD header ({len(self.data)} bytes)")
        magic, count, dir_offset = HEADER.unpack_from(self.data, 0)
        if magic not in (b"IWAD", b"PWAD"):
            raise WadError(self.path, f"not a WAD (starts with {magic!r}, expected IWAD or PWAD)")
        self.kind = magic.decode("ascii")
        # The declared count and every entry are checked against the file size before anything
        # per lump is built.
        end = dir_offset + count * ENTRY_DTYPE.itemsize
        if count < 0 or dir_offset < HEADER.size or end > len(self.data):
            raise WadError(self.path, f"directory of {count} lumps at offset {dir_offset} lies "
                                      f"outside the file ({len(self.data)} bytes)")
        if count > MAX_LUMPS:
            raise WadError(self.path, f"directory of {count:,} lumps is more than the limit of "
                                      f"{MAX_LUMPS:,}")
        entries = np.frombuffer(self.data, dtype=ENTRY_DTYPE, count=count, offset=dir_offset)
        offsets = entries["offset"].astype(np.int64)
        sizes = entries["size"].astype(np.int64)
        outside = (sizes < 0) | (offsets < 0) | (offsets + sizes > len(self.data))
        names = [raw.split(b"\0", 1)[0].decode("ascii", "replace").upper()
                 for raw in entries["name"].tolist()]
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise WadError(self.path, f"directory entry {i} says {int(sizes[i])} bytes at offset "
                                      f"{int(offsets[i])}, beyond the end of the file "
                                      f"({len(self.data)} bytes)", names[i])
        self.lumps: list[Lump] = list(map(Lump, range(count), names, offsets.tolist(),
                                          sizes.tolist()))

    def read(self, lump: Lump) -> bytes:
        """The bytes of one lump."""
        return self.data[lump.offset: lump.offset + lump.size]

    def map_names(self) -> list[str]:
        """Names of the maps in directory order (a marker followed by THINGS and LINEDEFS)."""
        names = []
        for i, lump in enumerate(self.lumps):
            following = [entry.name for entry in self.lumps[i + 1: i + 3]]
            if following == ["THINGS", "LINEDEFS"] or following[:1] == ["TEXTMAP"]:
                names.append(lump.name)
        return names

    def map_lumps(self, name: str) -> dict[str, Lump]:
        """The data lumps of map ``name`` by lump name.

        Raises :class:`WadError` listing the maps present when there is no such map, and
        naming the lump when a required one is missing. UDMF (``TEXTMAP``) maps are refused
        with a clear message: only the binary Doom and Hexen formats are read.
        """
        wanted = name.upper()
        markers = [i for i, lump in enumerate(self.lumps) if lump.name == wanted]
        maps = self.map_names()
        if not markers or wanted not in maps:
            raise WadError(self.path, f"no map {name!r} (maps: {', '.join(maps) or 'none'})")
        start = markers[0]
        found: dict[str, Lump] = {}
        for lump in self.lumps[start + 1:]:
            if lump.name == "TEXTMAP":
                raise WadError(self.path, "UDMF text maps are not supported (only the binary "
                                          "Doom and Hexen formats)", f"{wanted}/TEXTMAP")
            if lump.name not in MAP_LUMPS or lump.name in found:
                break
            found[lump.name] = lump
        for required in REQUIRED_LUMPS:
            if required not in found:
                raise WadError(self.path, "missing from the map", f"{wanted}/{required}")
        return found


_MAP_SUFFIX = re.compile(r"^(?P<file>.+\.wad):(?P<map>[^:/\\]+)$", re.IGNORECASE)


def split_map_suffix(path: str | os.PathLike) -> tuple[str, str | None]:
    """Split ``"levels/doom.wad:E1M1"`` into ``("levels/doom.wad", "E1M1")``; no suffix: None."""
    text = os.fspath(path)
    match = _MAP_SUFFIX.match(text)
    if match and not os.path.exists(text):
        return match.group("file"), match.group("map")
    return text, None


def list_maps(path: str | os.PathLike) -> list[str]:
    """Names of the maps in a WAD, in directory order (for a map chooser).

    Raises
    ------
    WadError
        When the file is not a readable WAD.
    """
    return WadFile(path).map_names()


#: bytes of one THINGS / LINEDEFS record in the Doom and the Hexen formats
_RECORD_BYTES = {"THINGS": (10, 20), "LINEDEFS": (14, 16)}


def map_summaries(path: str | os.PathLike) -> list[dict]:
    """Each map of a WAD with its linedef and thing counts, for a map picker.

    Returns
    -------
    list of dict
        ``{"name", "linedefs", "things"}`` in directory order (counts from the lump sizes; a
        Hexen map is recognised by its BEHAVIOR lump).
    """
    wad = WadFile(path)
    out = []
    for name in wad.map_names():
        try:
            lumps = wad.map_lumps(name)
        except WadError:
            out.append({"name": name, "linedefs": None, "things": None})
            continue
        hexen = "BEHAVIOR" in lumps
        counts = {kind.lower(): lumps[kind].size // sizes[hexen] if kind in lumps else 0
                  for kind, sizes in _RECORD_BYTES.items()}
        out.append({"name": name, **counts})
    return out
