"""The binary map lumps of Doom and Hexen as numpy record arrays, with every index checked.

Record layouts (little-endian; ``0xFFFF`` is "none" for a sidedef index):

=========  =====  ===========================================================================
lump       bytes  fields
=========  =====  ===========================================================================
THINGS     10     x, y, angle, type, flags (Doom) -- Hexen (20): tid, x, y, z, angle, type,
                  flags, special, args[5]
LINEDEFS   14     v1, v2, flags, special, tag, right, left (Doom) -- Hexen (16): v1, v2, flags,
                  special (byte), args[5], right, left
SIDEDEFS   30     x offset, y offset, upper, lower, middle texture (8 bytes each), sector
VERTEXES   4      x, y
SECTORS    26     floor, ceiling, floor texture, ceiling texture, light, special, tag
SEGS       12     v1, v2, angle, linedef, direction (0 along the linedef, 1 against), offset
SSECTORS   4      seg count, first seg
NODES      28     x, y, dx, dy, right box (top, bottom, left, right), left box, right child,
                  left child (bit 15 set: a subsector)
=========  =====  ===========================================================================

A map is Hexen format when a ``BEHAVIOR`` lump follows its marker. A lump whose size is not a
whole number of records, or a record pointing at a vertex, sidedef or sector that does not
exist, raises :class:`~.wad.WadError` naming the map, the lump and the record: a damaged map
is refused whole, never half read. The nodes must form a tree under the root (the last NODES
record): a node reached twice (a cycle or a shared child) is refused, so no walk of the
map's nodes can loop, and a subsector must hold at least one seg.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .wad import Lump, WadError, WadFile

NO_SIDE = 0xFFFF

_NAME8 = "S8"
THING_DOOM = np.dtype([("x", "<i2"), ("y", "<i2"), ("angle", "<i2"), ("type", "<u2"),
                       ("flags", "<u2")])
THING_HEXEN = np.dtype([("tid", "<i2"), ("x", "<i2"), ("y", "<i2"), ("z", "<i2"),
                        ("angle", "<i2"), ("type", "<u2"), ("flags", "<u2"),
                        ("special", "u1"), ("args", "u1", (5,))])
LINEDEF_DOOM = np.dtype([("v1", "<u2"), ("v2", "<u2"), ("flags", "<u2"), ("special", "<u2"),
                         ("tag", "<u2"), ("right", "<u2"), ("left", "<u2")])
LINEDEF_HEXEN = np.dtype([("v1", "<u2"), ("v2", "<u2"), ("flags", "<u2"), ("special", "u1"),
                          ("args", "u1", (5,)), ("right", "<u2"), ("left", "<u2")])
SIDEDEF = np.dtype([("x_offset", "<i2"), ("y_offset", "<i2"), ("upper", _NAME8),
                    ("lower", _NAME8), ("middle", _NAME8), ("sector", "<u2")])
VERTEX = np.dtype([("x", "<i2"), ("y", "<i2")])
SECTOR = np.dtype([("floor", "<i2"), ("ceiling", "<i2"), ("floor_texture", _NAME8),
                   ("ceiling_texture", _NAME8), ("light", "<i2"), ("special", "<u2"),
                   ("tag", "<u2")])
SEG = np.dtype([("v1", "<u2"), ("v2", "<u2"), ("angle", "<i2"), ("linedef", "<u2"),
                ("direction", "<i2"), ("offset", "<i2")])
SUBSECTOR = np.dtype([("count", "<u2"), ("first", "<u2")])
NODE = np.dtype([("x", "<i2"), ("y", "<i2"), ("dx", "<i2"), ("dy", "<i2"),
                 ("right_box", "<i2", (4,)), ("left_box", "<i2", (4,)),
                 ("right", "<u2"), ("left", "<u2")])

#: Bit 15 of a node child marks a subsector.
SUBSECTOR_BIT = 0x8000


@dataclass
class MapData:
    """One map's records. ``segs``, ``subsectors`` and ``nodes`` are None without a node build."""

    path: str
    name: str
    format: str  # "doom" or "hexen"
    things: np.ndarray
    linedefs: np.ndarray
    sidedefs: np.ndarray
    vertexes: np.ndarray
    sectors: np.ndarray
    segs: np.ndarray | None = None
    subsectors: np.ndarray | None = None
    nodes: np.ndarray | None = None

    def where(self, lump: str) -> str:
        return f"{self.name}/{lump}"


def _records(wad: WadFile, lumps: dict[str, Lump], map_name: str, lump: str,
             dtype: np.dtype) -> np.ndarray:
    entry = lumps[lump]
    if entry.size % dtype.itemsize:
        raise WadError(wad.path, f"size {entry.size} is not a multiple of the {dtype.itemsize}-byte "
                                 f"record (truncated or damaged)", f"{map_name}/{lump}")
    return np.frombuffer(wad.data, dtype=dtype, count=entry.size // dtype.itemsize,
                         offset=entry.offset).copy()


def _check_refs(wad: WadFile, where: str, values: np.ndarray, limit: int, what: str,
                field: str, allow_none: bool = False) -> None:
    values = np.asarray(values).astype(np.int64)
    bad = values >= limit
    if allow_none:
        bad &= values != NO_SIDE
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise WadError(wad.path, f"record {row}: {field} {int(values[row])} does not exist "
                                 f"(the map has {limit} {what})", where)


def read_map(wad: WadFile, name: str) -> MapData:
    """Read and check the binary lumps of map ``name`` (see the module docstring)."""
    lumps = wad.map_lumps(name)
    map_name = name.upper()
    hexen = "BEHAVIOR" in lumps
    data = MapData(
        wad.path, map_name, "hexen" if hexen else "doom",
        things=_records(wad, lumps, map_name, "THINGS", THING_HEXEN if hexen else THING_DOOM),
        linedefs=_records(wad, lumps, map_name, "LINEDEFS", LINEDEF_HEXEN if hexen else LINEDEF_DOOM),
        sidedefs=_records(wad, lumps, map_name, "SIDEDEFS", SIDEDEF),
        vertexes=_records(wad, lumps, map_name, "VERTEXES", VERTEX),
        sectors=_records(wad, lumps, map_name, "SECTORS", SECTOR))
    where = data.where
    lines = data.linedefs
    _check_refs(wad, where("LINEDEFS"), lines["v1"], len(data.vertexes), "vertexes", "v1")
    _check_refs(wad, where("LINEDEFS"), lines["v2"], len(data.vertexes), "vertexes", "v2")
    _check_refs(wad, where("LINEDEFS"), lines["right"], len(data.sidedefs), "sidedefs",
                "right sidedef")
    _check_refs(wad, where("LINEDEFS"), lines["left"], len(data.sidedefs), "sidedefs",
                "left sidedef", allow_none=True)
    no_front = lines["right"] == NO_SIDE
    if no_front.any():
        raise WadError(wad.path, f"record {int(np.flatnonzero(no_front)[0])}: a linedef needs a "
                                 f"right (front) sidedef", where("LINEDEFS"))
    _check_refs(wad, where("SIDEDEFS"), data.sidedefs["sector"], len(data.sectors), "sectors",
                "sector")
    if all(k in lumps for k in ("SEGS", "SSECTORS", "NODES")):
        _read_nodes(wad, lumps, data)
    return data


def _read_nodes(wad: WadFile, lumps: dict[str, Lump], data: MapData) -> None:
    """The node builder's output; extended (ZDoom) nodes are left out, not misread."""
    raw = wad.read(lumps["NODES"])[:4]
    if raw in (b"xNd4", b"XNOD", b"ZNOD", b"XGLN", b"ZGLN"):
        return
    name, where = data.name, data.where
    data.segs = _records(wad, lumps, name, "SEGS", SEG)
    data.subsectors = _records(wad, lumps, name, "SSECTORS", SUBSECTOR)
    data.nodes = _records(wad, lumps, name, "NODES", NODE)
    segs = data.segs
    _check_refs(wad, where("SEGS"), segs["v1"], len(data.vertexes), "vertexes", "v1")
    _check_refs(wad, where("SEGS"), segs["v2"], len(data.vertexes), "vertexes", "v2")
    _check_refs(wad, where("SEGS"), segs["linedef"], len(data.linedefs), "linedefs", "linedef")
    bad_dir = (segs["direction"] != 0) & (segs["direction"] != 1)
    if bad_dir.any():
        raise WadError(wad.path, f"record {int(np.flatnonzero(bad_dir)[0])}: direction must be "
                                 f"0 or 1", where("SEGS"))
    ss = data.subsectors
    empty = ss["count"] == 0
    if empty.any():
        raise WadError(wad.path, f"record {int(np.flatnonzero(empty)[0])}: a subsector needs at "
                                 "least one seg", where("SSECTORS"))
    end = ss["first"].astype(np.int64) + ss["count"].astype(np.int64)
    _check_refs(wad, where("SSECTORS"), end - 1, len(segs), "segs", "last seg")
    for side in ("right", "left"):
        child = data.nodes[side].astype(np.int64)
        is_sub = (child & SUBSECTOR_BIT) != 0
        _check_refs(wad, where("NODES"), np.where(is_sub, child & ~SUBSECTOR_BIT, 0),
                    len(ss), "subsectors", f"{side} subsector")
        _check_refs(wad, where("NODES"), np.where(is_sub, 0, child), len(data.nodes), "nodes",
                    f"{side} child")
    _check_tree(wad, data)


def _check_tree(wad: WadFile, data: MapData) -> None:
    """Refuse NODES that are not a tree under the root (the last record): a node reached twice
    is a cycle or a shared child, and a walk of the map's nodes would never end on a cycle.

    The walk keeps a visited flag per node, so it ends after at most one visit per record.
    """
    nodes = data.nodes
    if not len(nodes):
        return
    children = np.stack([nodes["right"], nodes["left"]], axis=1).astype(np.int64).tolist()
    visited = bytearray(len(nodes))
    stack = [len(nodes) - 1]
    visited[-1] = 1
    while stack:
        node = stack.pop()
        for child in children[node]:
            if child & SUBSECTOR_BIT:
                continue
            if visited[child]:
                kind = "a cycle" if child == len(nodes) - 1 else "a cycle or a shared child"
                raise WadError(wad.path, f"record {node}: child node {child} is reached twice "
                                         f"({kind}; the nodes must form a tree)", data.where("NODES"))
            visited[child] = 1
            stack.append(child)


def open_map(path, name: str | None = None) -> MapData:
    """Read map ``name`` (the first map when None) from the WAD at ``path``."""
    wad = WadFile(path)
    if name is None:
        maps = wad.map_names()
        if not maps:
            raise WadError(wad.path, "holds no map")
        name = maps[0]
    return read_map(wad, name)
