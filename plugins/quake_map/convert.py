"""Quake ``.map`` files to scenes and back.

Import keeps everything the syntax layer read: entity key/values in file order (duplicates
included), every face attribute, the face format and the header comments (in the scene's
``settings.metadata`` as ``map_format`` and ``map_header``). Ids are handed out in file order,
each entity followed by its brushes, so ``.map -> scene -> .map -> scene`` gives the same scene.

An entity that owns brushes, ``worldspawn`` and TrenchBroom containers (``_tb_type``) are brush
entities; every other entity is a point entity, indexed with its class hull at its origin.
"""
from __future__ import annotations

import math
import os
import warnings

import numpy as np

from editor.model.brushes import Brush, build_solids
from editor.model.entities import BRUSH, POINT, TB_TYPE, Entity, parse_vector
from editor.model.faces import Face
from editor.model.scene import Edit, Scene, Settings
from spatial.errors import GeometryError, ParseError, PartitionStudioWarning

from .syntax import (FORMATS, STANDARD, VALVE220, MapBrush, MapEntity, MapFace, MapFile,
                     _collector_paused, read_map, save_map)

ON_BAD_BRUSH = ("raise", "skip")


def _is_brush_entity(entity: MapEntity) -> bool:
    return bool(entity.brushes) or entity.classname == "worldspawn" or entity.get(TB_TYPE) is not None


def mapfile_to_scene(mapfile: MapFile, path: str = "<map>", on_bad_brush: str = "raise") -> Scene:
    """Build a scene from a parsed map.

    Parameters
    ----------
    mapfile : MapFile
        What :func:`~plugins.quake_map.syntax.parse_map` returned.
    path : str
        File name for messages.
    on_bad_brush : {"raise", "skip"}
        A brush whose planes do not bound a closed solid raises ``ParseError`` at its line
        (``"raise"``), or is left out with a :class:`PartitionStudioWarning` (``"skip"``, what
        level editors do to open a damaged map).
    """
    if on_bad_brush not in ON_BAD_BRUSH:
        raise ValueError(f"on_bad_brush must be one of {ON_BAD_BRUSH}, got {on_bad_brush!r}")
    # Tens of thousands of faces and tuples, none in a reference cycle: the cyclic collector
    # would otherwise walk the growing heap again and again (most of the import time).
    with _collector_paused():
        return _mapfile_to_scene(mapfile, path, on_bad_brush)


def _mapfile_to_scene(mapfile: MapFile, path: str, on_bad_brush: str) -> Scene:
    scene = Scene()
    objects: dict[int, object] = {}
    brushes: list[tuple[int, Brush, MapBrush]] = []
    # file order: each entity, then its brushes (one id each, kept even by a skipped brush)
    ids = iter(scene.allocate_ids(sum(1 + len(e.brushes) for e in mapfile.entities)))
    for entity in mapfile.entities:
        kind = BRUSH if _is_brush_entity(entity) else POINT
        eid = next(ids)
        if kind == POINT and entity.get("origin") is not None:
            try:
                parse_vector(entity.get("origin"))
            except GeometryError as exc:
                raise ParseError(path, entity.line, entity.column, str(exc)) from None
        objects[eid] = Entity(kind, tuple(entity.properties))
        for map_brush in entity.brushes:
            bid = next(ids)
            faces = tuple(map(_face_from_map, map_brush.faces))
            if len(faces) < 4:
                _bad(path, map_brush, f"a brush needs at least 4 faces, got {len(faces)}", on_bad_brush)
                continue
            brush = Brush(eid, faces)
            brushes.append((bid, brush, map_brush))
            objects[bid] = brush
    failed = build_solids([b for _, b, _ in brushes], what=path, on_error="none")
    for k in failed:
        bid, brush, map_brush = brushes[k]
        try:
            brush.check()
            continue
        except GeometryError as exc:
            reason = str(exc).split(": ", 1)[-1]
        _bad(path, map_brush, reason, on_bad_brush)
        del objects[bid]
    scene.apply(Edit(objects, settings=Settings(metadata={
        "map_format": mapfile.format, "map_header": list(mapfile.header)})))
    return scene


def _bad(path: str, brush: MapBrush, reason: str, policy: str) -> None:
    if policy == "raise":
        raise ParseError(path, brush.line, brush.column, f"brush: {reason}")
    warnings.warn(f"{path}:{brush.line}:{brush.column}: brush skipped: {reason}",
                  PartitionStudioWarning, stacklevel=4)


_trusted_face = Face.trusted


def _face_from_map(face: MapFace) -> Face:
    # The syntax layer already rejected NaN, infinities and malformed parts; only the container
    # types are normalised here (a map file of 20,000 faces would otherwise check each number
    # twice).
    points = face.points
    if len(points) == 3:  # unpacked rather than a generator: this runs once per face
        p0, p1, p2 = points
        points = (tuple(map(float, p0)), tuple(map(float, p1)), tuple(map(float, p2)))
    else:
        points = tuple(tuple(map(float, p)) for p in points)
    u_axis, v_axis, extra = face.u_axis, face.v_axis, face.extra
    return _trusted_face(points, str(face.texture), tuple(map(float, face.offset)),
                         float(face.rotation), tuple(map(float, face.scale)),
                         None if u_axis is None else tuple(map(float, u_axis)),
                         None if v_axis is None else tuple(map(float, v_axis)),
                         tuple(map(str, extra)) if extra else ())


# --------------------------------------------------------------------------- export
def scene_to_mapfile(scene: Scene, map_format: str | None = None) -> MapFile:
    """The scene as a map file: entities in id order, each with its brushes in id order.

    The format is ``map_format``, else the one recorded at import, else Valve 220 when any
    face carries texture axes. Standard faces written to a Valve 220 map get the axes Quake
    would have used for them (the default projection, rotated); Valve faces written to a
    standard map lose their axes (that form cannot express them).
    """
    metadata = scene.settings.metadata
    fmt = map_format or metadata.get("map_format")
    if fmt is None:
        has_axes = any(f.u_axis is not None for b in scene.brush_ids() for f in scene[b].faces)
        fmt = VALVE220 if has_axes else STANDARD
    if fmt not in FORMATS:
        raise ValueError(f"unknown map format {fmt!r}; expected one of {FORMATS}")
    header = metadata.get("map_header", [])
    entities = []
    for eid in scene.entity_ids():
        entity = scene[eid]
        map_brushes = [MapBrush([_face_to_map(f, fmt) for f in scene[b].faces])
                       for b in scene.brushes_of(eid)]
        entities.append(MapEntity(list(entity.properties), map_brushes))
    return MapFile(entities, fmt, [str(h) for h in header] if isinstance(header, list) else [])


def _face_to_map(face: Face, fmt: str) -> MapFace:
    u, v = face.u_axis, face.v_axis
    if fmt == VALVE220 and u is None:
        u, v = quake_texture_axes(face.points, face.rotation)
    elif fmt == STANDARD:
        u = v = None
    return MapFace(tuple(tuple(p) for p in face.points), face.texture, tuple(face.offset),
                   face.rotation, tuple(face.scale),
                   None if u is None else tuple(u), None if v is None else tuple(v), tuple(face.extra))


#: Quake's texture projection: (normal, u axis, v axis) for floor, ceiling and the four walls
_BASE_AXES = np.array([
    [[0, 0, 1], [1, 0, 0], [0, -1, 0]],
    [[0, 0, -1], [1, 0, 0], [0, -1, 0]],
    [[1, 0, 0], [0, 1, 0], [0, 0, -1]],
    [[-1, 0, 0], [0, 1, 0], [0, 0, -1]],
    [[0, 1, 0], [1, 0, 0], [0, 0, -1]],
    [[0, -1, 0], [1, 0, 0], [0, 0, -1]],
], dtype=np.float64)


def quake_texture_axes(points, rotation: float) -> tuple[tuple, tuple]:
    """The u and v axes a standard-format face projects its texture with (as qbsp does)."""
    from spatial.brush import plane_from_points

    normal, _ = plane_from_points(*points)
    best = int(np.argmax(_BASE_AXES[:, 0] @ normal))  # first of equals, like qbsp's strict >
    u, v = _BASE_AXES[best, 1].copy(), _BASE_AXES[best, 2].copy()
    angle = math.radians(rotation)
    sin_a, cos_a = math.sin(angle), math.cos(angle)
    if rotation == 90:
        sin_a, cos_a = 1.0, 0.0
    elif rotation == 180:
        sin_a, cos_a = 0.0, -1.0
    elif rotation == 270:
        sin_a, cos_a = -1.0, 0.0
    s_axis = int(np.flatnonzero(u)[0])
    t_axis = int(np.flatnonzero(v)[0])
    out = []
    for vec in (u, v):
        s, t = vec[s_axis], vec[t_axis]
        vec[s_axis] = cos_a * s - sin_a * t
        vec[t_axis] = sin_a * s + cos_a * t
        out.append(tuple(float(c) + 0.0 for c in vec))
    return out[0], out[1]


# --------------------------------------------------------------------------- files
def load_map(path: str | os.PathLike, on_bad_brush: str = "raise") -> Scene:
    """Read a ``.map`` file into a scene (errors name the file, line and column)."""
    return mapfile_to_scene(read_map(path), os.fspath(path), on_bad_brush)


def save_map_scene(scene: Scene, path: str | os.PathLike, map_format: str | None = None) -> None:
    """Write the scene as a ``.map`` file, atomically."""
    save_map(scene_to_mapfile(scene, map_format), path)
