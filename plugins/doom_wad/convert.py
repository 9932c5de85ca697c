"""A Doom or Hexen map to a scene: linedefs become wall segments, things become entities.

Ids are handed out in file order: a ``worldspawn`` entity carrying the map's facts (format,
counts, sectors are not objects of their own), then one :class:`~editor.model.level_geometry.Segment`
per linedef (linedef ``k`` is the ``k``-th segment), then one point entity per thing.

A segment runs from the linedef's first vertex to its second, so its front (right) sidedef is
on its right, as in Doom. It is extruded from the lowest floor to the highest ceiling of the
sectors on its sides (the wall as seen in 3D, including the steps and lintels of two-sided
lines). A thing stands on the floor of the sector under it, found by walking the map's own
nodes as the game does (height 0 without nodes; Hexen things add their own ``z``).
The scene's settings choose a 2D BSP on the map plane, the structure the game itself uses.
"""
from __future__ import annotations

from editor.model.entities import brush_entity, point_entity
from editor.model.level_geometry import Segment
from editor.model.scene import Edit, Scene, Settings

from .mapdata import NO_SIDE, SUBSECTOR_BIT, MapData, open_map
from .things import flag_names, thing_class
from .wad import WadError


def _name(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode("ascii", "replace")


def sector_heights(data: MapData, side: int) -> tuple[float, float]:
    """``(floor, ceiling)`` of the sector behind sidedef ``side``."""
    sector = data.sectors[int(data.sidedefs[side]["sector"])]
    return float(sector["floor"]), float(sector["ceiling"])


def point_sector(data: MapData, x: float, y: float) -> int:
    """The sector containing ``(x, y)``, by walking the map's nodes; -1 without nodes."""
    if data.nodes is None or not len(data.nodes) or not len(data.segs):
        return -1
    child = len(data.nodes) - 1  # the root is the last node
    # read_map checked that the nodes form a tree, so a walk visits each node at most once;
    # the bound keeps even a hand-built MapData from looping.
    for _ in range(len(data.nodes)):
        node = data.nodes[child]
        # Doom's R_PointOnSide: the right child only when strictly on the right.
        cross = (float(node["dy"]) * (x - float(node["x"]))
                 - float(node["dx"]) * (y - float(node["y"])))
        nxt = int(node["left"] if cross <= 0 else node["right"])
        if nxt & SUBSECTOR_BIT:
            sub = data.subsectors[nxt & ~SUBSECTOR_BIT]
            seg = data.segs[int(sub["first"])]
            line = data.linedefs[int(seg["linedef"])]
            side = int(line["left"] if seg["direction"] else line["right"])
            if side == NO_SIDE:
                return -1
            return int(data.sidedefs[side]["sector"])
        child = nxt
    raise WadError(data.path, f"the walk from the root passes more than {len(data.nodes)} nodes "
                              "(the nodes do not form a tree)", data.where("NODES"))


def linedef_segments(data: MapData) -> list[Segment]:
    """One segment per linedef, in linedef order."""
    verts = data.vertexes
    out = []
    for k, line in enumerate(data.linedefs):
        front, back = int(line["right"]), int(line["left"])
        heights = [sector_heights(data, front)]
        back_sector = -1
        if back != NO_SIDE:
            heights.append(sector_heights(data, back))
            back_sector = int(data.sidedefs[back]["sector"])
        v1, v2 = verts[int(line["v1"])], verts[int(line["v2"])]
        props = [("flags", str(int(line["flags"]))), ("special", str(int(line["special"])))]
        if data.format == "hexen":
            props.append(("args", " ".join(str(int(a)) for a in line["args"])))
        else:
            props.append(("tag", str(int(line["tag"]))))
        side = data.sidedefs[front]
        props += [("front_upper", _name(side["upper"])), ("front_middle", _name(side["middle"])),
                  ("front_lower", _name(side["lower"]))]
        out.append(Segment(
            (float(v1["x"]), float(v1["y"])), (float(v2["x"]), float(v2["y"])),
            min(h[0] for h in heights), max(h[1] for h in heights), linedef=k,
            front_side=front, back_side=-1 if back == NO_SIDE else back,
            front_sector=int(side["sector"]), back_sector=back_sector, properties=props))
    return out


def thing_entities(data: MapData) -> list:
    """One point entity per thing: class name, editor number, angle, flags, origin."""
    out = []
    for k, thing in enumerate(data.things):
        x, y = float(thing["x"]), float(thing["y"])
        sector = point_sector(data, x, y)
        z = float(data.sectors[sector]["floor"]) if sector >= 0 else 0.0
        props = [("doomednum", str(int(thing["type"]))), ("angle", str(int(thing["angle"]))),
                 ("flags", str(int(thing["flags"]))),
                 ("flag_names", " ".join(flag_names(int(thing["flags"])))),
                 ("thing", str(k)), ("sector", str(sector))]
        if data.format == "hexen":
            z += float(thing["z"])
            props += [("tid", str(int(thing["tid"]))), ("special", str(int(thing["special"]))),
                      ("args", " ".join(str(int(a)) for a in thing["args"]))]
        out.append(point_entity(thing_class(int(thing["type"])), (x, y, z), props))
    return out


def map_to_scene(data: MapData) -> Scene:
    """Build the scene of a read map (see the module docstring)."""
    scene = Scene()
    segments = linedef_segments(data)
    things = thing_entities(data)
    world = brush_entity("worldspawn", [
        ("map", data.name), ("map_format", data.format),
        ("sectors", str(len(data.sectors))), ("sidedefs", str(len(data.sidedefs))),
        ("vertexes", str(len(data.vertexes)))])
    objects: dict[int, object] = {}
    ids = scene.allocate_ids(1 + len(segments) + len(things))
    objects[ids[0]] = world
    for oid, obj in zip(ids[1:], segments + things):
        objects[oid] = obj
    # the document's default tree like every other level (a WAD cannot store a choice); the
    # Doom-style tree is one switch away: bsp with space=2d
    settings = Settings(metadata={"source_format": f"{data.format}-wad", "wad": data.path,
                                  "map": data.name})
    scene.apply(Edit(objects=objects, settings=settings))
    return scene


def load_wad(path, member: str | None = None) -> Scene:
    """Importer entry point: map ``member`` of the WAD (the first map when None)."""
    return map_to_scene(open_map(path, member))
