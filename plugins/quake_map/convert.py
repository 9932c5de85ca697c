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
from itertools import chain
from operator import attrgetter, itemgetter

import numpy as np

from editor.model.brushes import Brush, build_solids
from editor.model.entities import BRUSH, POINT, TB_TYPE, Entity, parse_vector
from editor.model.faces import Face
from editor.model.invalid_brushes import METADATA_KEY as INVALID_BRUSHES
from editor.model.invalid_brushes import by_owner
from editor.model.level_geometry import refuse_level_geometry
from editor.model.scene import Edit, Scene, Settings
from spatial.collector import collector_paused
from spatial.errors import (
    GeometryError,
    ParseError,
    PartitionStudioWarning,
    UnsupportedContentError,
)

from .syntax import (
    FORMATS,
    STANDARD,
    VALVE220,
    DecodedFaces,
    MapBrush,
    MapEntity,
    MapFace,
    MapFile,
    brush_text,
    read_map,
    save_map,
)

ON_BAD_BRUSH = ("raise", "skip")

#: worldspawn key holding the document's backend (map compilers ignore keys they do not know)
BACKEND_KEY = "_ps_backend"
#: prefix of the worldspawn keys holding the backend's parameters, one key each
PARAM_KEY_PREFIX = "_ps_param_"


def _is_settings_key(key: str) -> bool:
    return key == BACKEND_KEY or key.startswith(PARAM_KEY_PREFIX)


def _settings_of(entity: MapEntity, path: str) -> tuple[str | None, dict, tuple | None]:
    """The backend and parameters a worldspawn's ``_ps_`` keys hold (strings checked and typed
    when the backend is registered; an error names the entity's line)."""
    backend = entity.get(BACKEND_KEY)
    raw = {k[len(PARAM_KEY_PREFIX):]: v for k, v in entity.properties if k.startswith(PARAM_KEY_PREFIX)}
    if backend is None:
        if raw:
            raise ParseError(path, entity.line, entity.column,
                             f"worldspawn: {PARAM_KEY_PREFIX}* keys without a {BACKEND_KEY} key")
        return None, {}, None
    from spatial.errors import PartitionStudioError
    from spatial.params import parse_params
    from spatial.registry import default_registry

    cls = default_registry().backends.get(backend)
    if cls is None:  # a backend this installation lacks: kept as written (the index falls back)
        return backend, raw, None
    try:
        parsed = parse_params(cls.Params, raw)
    except PartitionStudioError as exc:
        raise ParseError(path, entity.line, entity.column, f"worldspawn: {exc}") from None
    return backend, {name: getattr(parsed, name) for name in raw}, (cls, parsed)


def _settings_keys(settings: Settings) -> list[tuple[str, str]]:
    """The worldspawn keys that keep ``settings``' backend and parameters in a ``.map`` (none
    for the default backend with its defaults: an untouched map is written back unchanged)."""
    from editor.model.scene import DEFAULT_BACKEND

    if settings.backend == DEFAULT_BACKEND and not settings.params:
        return []
    keys = [(BACKEND_KEY, settings.backend)]
    for name, value in settings.params.items():
        text = ("1" if value else "0") if isinstance(value, bool) else str(value)
        keys.append((f"{PARAM_KEY_PREFIX}{name}", text))
    return keys


def _is_brush_entity(entity: MapEntity) -> bool:
    return bool(entity.brushes) or entity.classname == "worldspawn" or entity.get(TB_TYPE) is not None


def mapfile_to_scene(mapfile: MapFile, path: str = "<map>", on_bad_brush: str = "raise",
                     warn=None) -> Scene:
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
    warn : callable, optional
        ``warn(message)`` receives each one-line warning instead of :mod:`warnings` (thread-safe:
        the editor opens files on a worker thread).
    """
    if on_bad_brush not in ON_BAD_BRUSH:
        raise ValueError(f"on_bad_brush must be one of {ON_BAD_BRUSH}, got {on_bad_brush!r}")
    # Tens of thousands of faces and tuples, none in a reference cycle: the cyclic collector
    # would otherwise walk the growing heap again and again (most of the import time).
    with collector_paused():
        return _mapfile_to_scene(mapfile, path, on_bad_brush, warn)


def _mapfile_to_scene(mapfile: MapFile, path: str, on_bad_brush: str, warn=None) -> Scene:
    scene = Scene()
    objects: dict[int, object] = {}
    kept: list[tuple[int, int, MapBrush]] = []  # brush id, owner id, map brush
    positions: list[int] = []  # each kept brush's place among its entity's brushes
    invalid: list[dict] = []  # brushes bounding no solid, kept verbatim (invalid_brushes.py)
    # file order: each entity, then its brushes (one id each, kept even by a skipped brush)
    ids = iter(scene.allocate_ids(sum(1 + len(e.brushes) for e in mapfile.entities)))
    backend, params, parsed = None, {}, None
    for entity in mapfile.entities:
        kind = BRUSH if _is_brush_entity(entity) else POINT
        eid = next(ids)
        if entity.classname == "worldspawn" and backend is None:
            backend, params, parsed = _settings_of(entity, path)
            if backend is not None:  # the keys become the document's settings
                entity = MapEntity([(k, v) for k, v in entity.properties if not _is_settings_key(k)],
                                   entity.brushes, entity.line, entity.column)
        if kind == POINT and entity.get("origin") is not None:
            try:
                parse_vector(entity.get("origin"))
            except GeometryError as exc:
                raise ParseError(path, entity.line, entity.column, str(exc)) from None
        objects[eid] = Entity(kind, tuple(entity.properties))
        for position, map_brush in enumerate(entity.brushes):
            bid = next(ids)
            if len(map_brush.faces) < 4:
                invalid.append(_bad(path, map_brush, f"a brush needs at least 4 faces, got "
                                    f"{len(map_brush.faces)}", on_bad_brush, warn))
                invalid[-1].update(id=bid, entity=eid, position=position)
                continue
            kept.append((bid, eid, map_brush))
            positions.append(position)
    map_faces = [face for _, _, map_brush in kept for face in map_brush.faces]
    faces, plane_points = _faces_from_map(map_faces, path, mapfile.decoded_faces)
    brushes = []
    end = 0
    for bid, eid, map_brush in kept:
        start, end = end, end + len(map_brush.faces)
        brush = Brush.trusted(eid, tuple(faces[start:end]))
        brushes.append(brush)
        objects[bid] = brush
    failed = build_solids(brushes, what=path, on_error="none", plane_points=plane_points)
    for k in failed:
        bid, _, map_brush = kept[k]
        try:
            brushes[k].check()
            continue
        except GeometryError as exc:
            reason = str(exc).split(": ", 1)[-1]
        invalid.append(_bad(path, map_brush, reason, on_bad_brush, warn))
        invalid[-1].update(id=bid, entity=kept[k][1], position=positions[k])
        del objects[bid]
    chosen = {} if backend is None else {"backend": backend, "params": params}
    metadata = {"map_format": mapfile.format, "map_header": list(mapfile.header)}
    if invalid:
        invalid.sort(key=itemgetter("id"))
        for record in invalid:
            brush = record.pop("brush")
            text = mapfile.source[slice(*brush.span)] if mapfile.source else \
                brush_text(brush, mapfile.format)
            record.update(format=mapfile.format, text=text)
        metadata[INVALID_BRUSHES] = invalid
    settings = Settings(**chosen, metadata=metadata)
    if parsed is not None:  # checked while reading the keys: not parsed a second time
        settings.adopt_parsed(*parsed)
    scene.apply(Edit(objects, settings=settings))
    return scene


def _bad(path: str, brush: MapBrush, reason: str, policy: str, warn=None) -> dict:
    """Raise for a brush bounding no solid, or warn and return the start of its record."""
    if policy == "raise":
        raise ParseError(path, brush.line, brush.column, f"brush: {reason}")
    message = (f"{path}:{brush.line}:{brush.column}: brush kept as written, not indexed: "
               f"{reason}")
    if warn is not None:
        warn(message)
    else:
        warnings.warn(message, PartitionStudioWarning, stacklevel=4)
    return {"source": path, "line": brush.line, "column": brush.column, "reason": reason,
            "brush": brush}


def _faces_from_map(map_faces: list[MapFace], path: str,
                    decoded: DecodedFaces | None) -> tuple[list[Face], np.ndarray]:
    """Document faces for many map faces, and their plane points as one ``(F, 3, 3)`` array.

    Faces exactly as the parser decoded them share its attribute columns (already tuples of
    floats and strings). Otherwise each attribute is converted for all faces at once (a level
    holds tens of thousands): the numbers become Python floats in tuples, texture names and
    extra tokens ``str``. A map file built or changed in code is held to the same shapes and
    finite numbers as a parsed one; an error names the face's line and column.
    """
    columns = None if decoded is None else decoded.columns_for(map_faces)
    if columns is not None:
        return list(map(Face.trusted, *columns)), decoded.plane_points
    count = len(map_faces)
    point_triples = list(map(_points_of, map_faces))
    _check_lengths(point_triples, 3, "3 plane points", map_faces, path)
    plane_points = _float_rows(list(chain.from_iterable(point_triples)), 3, "a plane point",
                               np.repeat(np.arange(count), 3), map_faces, path)
    plane_points = plane_points.reshape(count, 9)
    c = plane_points.T.tolist()
    points = list(zip(zip(c[0], c[1], c[2]), zip(c[3], c[4], c[5]), zip(c[6], c[7], c[8])))
    every = np.arange(count)
    c = _float_rows(list(map(_offset_of, map_faces)), 2, "a texture offset", every, map_faces,
                    path).T.tolist()
    offsets = list(zip(c[0], c[1]))
    c = _float_rows(list(map(_scale_of, map_faces)), 2, "a texture scale", every, map_faces,
                    path).T.tolist()
    scales = list(zip(c[0], c[1]))
    rotations = _float_rows([(r,) for r in map(_rotation_of, map_faces)], 1,
                            "a texture rotation", every, map_faces, path)[:, 0].tolist()
    u_axes = _optional_axes(list(map(_u_axis_of, map_faces)), "U", map_faces, path)
    v_axes = _optional_axes(list(map(_v_axis_of, map_faces)), "V", map_faces, path)
    textures = list(map(str, map(_texture_of, map_faces)))
    extras = [tuple(map(str, extra)) if extra else () for extra in map(_extra_of, map_faces)]
    faces = list(map(Face.trusted, points, textures, offsets, rotations, scales, u_axes, v_axes,
                     extras))
    return faces, plane_points.reshape(count, 3, 3)


_points_of = attrgetter("points")
_offset_of = attrgetter("offset")
_scale_of = attrgetter("scale")
_rotation_of = attrgetter("rotation")
_u_axis_of = attrgetter("u_axis")
_v_axis_of = attrgetter("v_axis")
_texture_of = attrgetter("texture")
_extra_of = attrgetter("extra")


def _check_lengths(rows: list, width: int, what: str, faces: list[MapFace], path: str,
                   owners=None) -> None:
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    bad = np.flatnonzero(lengths != width)
    if bad.size:
        face = faces[int(bad[0]) if owners is None else int(owners[bad[0]])]
        raise ParseError(path, face.line, face.column,
                         f"face: expected {what}, got {len(rows[int(bad[0])])} values")


def _float_rows(rows: list, width: int, what: str, owners: np.ndarray, faces: list[MapFace],
                path: str) -> np.ndarray:
    """``rows`` (sequences of ``width`` numbers) as a finite ``(len(rows), width)`` array."""
    _check_lengths(rows, width, f"{what} of {width} numbers", faces, path, owners)
    values = np.fromiter(chain.from_iterable(rows), dtype=np.float64,
                         count=width * len(rows)).reshape(len(rows), width)
    finite = np.isfinite(values).all(axis=1)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        face = faces[int(owners[row])]
        raise ParseError(path, face.line, face.column,
                         f"face: {what} must be finite numbers, got {values[row].tolist()}")
    return values


def _optional_axes(axes: list, name: str, faces: list[MapFace], path: str) -> list:
    """Texture axes as float 3-tuples, None kept where a face has none (standard form)."""
    present = [k for k, axis in enumerate(axes) if axis is not None]
    if not present:
        return axes
    c = _float_rows([axes[k] for k in present], 3, f"a texture {name} axis", np.array(present),
                    faces, path).T.tolist()
    converted = list(zip(c[0], c[1], c[2]))
    if len(present) == len(axes):
        return converted
    out = list(axes)
    for k, axis in zip(present, converted):
        out[k] = axis
    return out


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
    settings_written = False
    kept_as_written = _invalid_by_owner(scene, fmt)
    for eid in scene.entity_ids():
        entity = scene[eid]
        map_brushes = [MapBrush([_face_to_map(f, fmt) for f in scene[b].faces])
                       for b in scene.brushes_of(eid)]
        for record in kept_as_written.pop(eid, []):
            map_brushes.insert(min(record["position"], len(map_brushes)),
                               MapBrush([], verbatim=record["text"]))
        properties = list(entity.properties)
        if entity.classname == "worldspawn" and not settings_written:
            # the document's backend and parameters ride along as worldspawn keys
            properties = [kv for kv in properties if not _is_settings_key(kv[0])]
            properties += _settings_keys(scene.settings)
            settings_written = True
        entities.append(MapEntity(properties, map_brushes))
    if kept_as_written and entities:  # their entity was deleted: the first one keeps them
        entities[0].brushes += [MapBrush([], verbatim=r["text"])
                                for group in kept_as_written.values() for r in group]
    return MapFile(entities, fmt, [str(h) for h in header] if isinstance(header, list) else [])


def _invalid_by_owner(scene: Scene, fmt: str) -> dict[int, list[dict]]:
    """The scene's brushes kept as written, by owner; refused when written in another format
    (their faces would contradict the file's)."""
    groups = by_owner(scene)
    for group in groups.values():
        for record in group:
            if record.get("format", fmt) != fmt:
                raise UnsupportedContentError(
                    f"a {fmt} .map cannot hold the brush kept as written from "
                    f"{record.get('source')}:{record.get('line')}:{record.get('column')} "
                    f"(its faces are {record.get('format')}); nothing was written")
    return groups


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
def load_map(path: str | os.PathLike, on_bad_brush: str = "raise", warn=None) -> Scene:
    """Read a ``.map`` file into a scene (errors name the file, line and column)."""
    return mapfile_to_scene(read_map(path), os.fspath(path), on_bad_brush, warn)


def save_map_scene(scene: Scene, path: str | os.PathLike, map_format: str | None = None) -> None:
    """Write the scene as a ``.map`` file, atomically; refuse walls and triangles it cannot hold."""
    refuse_level_geometry(scene, "a Quake .map")
    save_map(scene_to_mapfile(scene, map_format), path)
