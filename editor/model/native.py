"""The native scene file: versioned JSON, readable in a diff, saved atomically.

Layout (keys always in this order; one entity property and one brush face per line)::

    {
      "format": "partition-studio-scene",
      "version": 1,
      "next_id": 42,
      "settings": {"backend": "brute", "params": {}, "metadata": {}},
      "entities": [
        {"id": 0, "kind": "brush", "properties": [
          ["classname", "worldspawn"]
        ]},
        ...
      ],
      "brushes": [
        {"id": 1, "entity": 0, "faces": [
          {"points": [[0, 0, 0], [0, 1, 0], [0, 0, 1]], "texture": "rock",
           "offset": [0, 0], "rotation": 0, "scale": [1, 1]},
          ...
        ]},
        ...
      ]
    }

Faces may add ``"u_axis"``/``"v_axis"`` (Valve 220) and ``"extra"`` (trailing tokens). Ids are
saved, so a reloaded scene has the same ids, and numbers are written in their shortest exact
form, so a save/load round trip is exact. Loading validates everything before building the
scene and reports the JSON field of the first problem, e.g.
``scene.json: brushes[3].faces[2].points[1]: expected 3 numbers``; a file from a newer format
version is refused with a message saying so.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from spatial.atomic import atomic_write_text
from spatial.bounded_json import loads_bounded
from spatial.errors import GeometryError, ParseError, PartitionStudioError, UnsupportedContentError
from spatial.objects import MAX_ID

from .brushes import Brush, build_solids
from .entities import KINDS, Entity, parse_vector
from .faces import Face
from .level_geometry import refuse_level_geometry
from .scene import Edit, Scene, Settings

FORMAT_NAME = "partition-studio-scene"
FORMAT_VERSION = 1

_FACE_KEYS = ("points", "texture", "offset", "rotation", "scale", "u_axis", "v_axis", "extra")
_TOP_KEYS = ("format", "version", "next_id", "settings", "entities", "brushes")


class NativeFormatError(PartitionStudioError, ValueError):
    """A native scene file is malformed; ``field`` is the JSON path of the problem."""

    def __init__(self, source: str, field: str, message: str):
        self.source, self.field, self.detail = source, field, message
        where = f"{source}: {field}: " if field else f"{source}: "
        super().__init__(where + message)


# --------------------------------------------------------------------------- writing
def _num(value: float) -> str:
    value = float(value)
    if value.is_integer() and abs(value) < 1e15 and not (value == 0 and math.copysign(1.0, value) < 0):
        return str(int(value))
    return repr(value)  # shortest text that reads back to the same double (and keeps -0.0)


def _str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _vec(values) -> str:
    return "[" + ", ".join(_num(v) for v in values) + "]"


def _face_line(face: Face) -> str:
    parts = [f'"points": [{", ".join(_vec(p) for p in face.points)}]',
             f'"texture": {_str(face.texture)}',
             f'"offset": {_vec(face.offset)}',
             f'"rotation": {_num(face.rotation)}',
             f'"scale": {_vec(face.scale)}']
    if face.u_axis is not None:
        parts.append(f'"u_axis": {_vec(face.u_axis)}')
    if face.v_axis is not None:
        parts.append(f'"v_axis": {_vec(face.v_axis)}')
    if face.extra:
        parts.append(f'"extra": [{", ".join(_str(t) for t in face.extra)}]')
    return "{" + ", ".join(parts) + "}"


def _json_value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)


def dumps_scene(scene: Scene) -> str:
    """The scene as native JSON text (deterministic: same scene, same bytes).

    Raises :class:`~spatial.errors.UnsupportedContentError` (a ``ValueError``) if the scene
    holds objects this format version cannot store, rather than writing a file that silently
    lacks them.
    """
    refuse_level_geometry(scene, f"the native format (version {FORMAT_VERSION})")
    entity_ids, brush_ids = scene.entity_ids(), scene.brush_ids()
    if len(entity_ids) + len(brush_ids) != len(scene):
        other = next(o for o in scene.objects.values() if not isinstance(o, (Entity, Brush)))
        raise UnsupportedContentError(f"format version {FORMAT_VERSION} stores brushes and "
                                      f"entities only; the scene also holds "
                                      f"{type(other).__name__} objects")
    settings = scene.settings
    lines = ["{",
             f'  "format": {_str(FORMAT_NAME)},',
             f'  "version": {FORMAT_VERSION},',
             f'  "next_id": {scene.next_id},',
             f'  "settings": {{"backend": {_str(settings.backend)}, '
             f'"params": {_json_value(settings.params)}, "metadata": {_json_value(settings.metadata)}}},']
    lines.append('  "entities": [' if entity_ids else '  "entities": [],')
    for n, oid in enumerate(entity_ids):
        entity = scene.entity(oid)
        head = f'    {{"id": {oid}, "kind": {_str(entity.kind)}, "properties": ['
        props = [f"      [{_str(k)}, {_str(v)}]" for k, v in entity.properties]
        tail = "]}" + ("," if n + 1 < len(entity_ids) else "")
        if props:
            lines.append(head)
            lines.append(",\n".join(props))
            lines.append("    " + tail)
        else:
            lines.append(head + tail)
    if entity_ids:
        lines.append("  ],")
    lines.append('  "brushes": [' if brush_ids else '  "brushes": []')
    for n, oid in enumerate(brush_ids):
        brush = scene.brush(oid)
        lines.append(f'    {{"id": {oid}, "entity": {brush.entity}, "faces": [')
        lines.append(",\n".join("      " + _face_line(f) for f in brush.faces))
        lines.append("    ]}" + ("," if n + 1 < len(brush_ids) else ""))
    if brush_ids:
        lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def save_scene(scene: Scene, path: str | os.PathLike) -> None:
    """Save atomically: on any failure the previous file is left as it was."""
    atomic_write_text(path, dumps_scene(scene))


# --------------------------------------------------------------------------- reading
class _NonFinite:
    def __init__(self, text: str):
        self.text = text


class _Reader:
    """Validates decoded JSON, raising :class:`NativeFormatError` with the field path."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, field: str, message: str):
        raise NativeFormatError(self.source, field, message)

    def obj(self, value, field: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
        if not isinstance(value, dict):
            self.fail(field, f"expected an object, got {_describe(value)}")
        for key in required:
            if key not in value:
                self.fail(_join(field, key), "missing field")
        for key in value:
            if key not in required and key not in optional:
                self.fail(_join(field, key), "unknown field")
        return value

    def list(self, value, field: str) -> list:
        if not isinstance(value, list):
            self.fail(field, f"expected a list, got {_describe(value)}")
        return value

    def string(self, value, field: str) -> str:
        if not isinstance(value, str):
            self.fail(field, f"expected a string, got {_describe(value)}")
        return value

    def integer(self, value, field: str, lo: int = 0) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(field, f"expected a whole number, got {_describe(value)}")
        if value < lo:
            self.fail(field, f"expected a whole number >= {lo}, got {value}")
        return value

    def number(self, value, field: str) -> float:
        if isinstance(value, _NonFinite):
            self.fail(field, f"expected a finite number, got {value.text}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(field, f"expected a number, got {_describe(value)}")
        value = float(value)
        if not math.isfinite(value):
            self.fail(field, f"expected a finite number, got {value}")
        return value

    def numbers(self, value, field: str, count: int) -> tuple[float, ...]:
        if not isinstance(value, list) or len(value) != count:
            self.fail(field, f"expected {count} numbers, got {_describe(value)}")
        return tuple(self.number(v, f"{field}[{i}]") for i, v in enumerate(value))

    def json_data(self, value, field: str):
        """Any JSON value without NaN/Infinity (settings params, metadata)."""
        if isinstance(value, _NonFinite):
            self.fail(field, f"expected a finite number, got {value.text}")
        if isinstance(value, dict):
            for k, v in value.items():
                self.json_data(v, _join(field, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                self.json_data(v, f"{field}[{i}]")
        return value


def _join(field: str, key: str) -> str:
    return f"{field}.{key}" if field else key


def _describe(value) -> str:
    if isinstance(value, _NonFinite):
        return value.text
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        kind = "an object" if isinstance(value, dict) else f"a list of {len(value)}"
        return kind
    return f"{type(value).__name__} {json.dumps(value)}"


def loads_scene(text: str | bytes, source: str = "<scene>", registry=None) -> Scene:
    """Build a scene from native JSON text (bytes: UTF-8); raises :class:`NativeFormatError`
    (nothing built). Nesting and number length are bounded (:mod:`spatial.bounded_json`).

    The scene's backend must be one ``registry`` (default: the plugin registry) provides, and
    its parameters valid for it; an unknown backend is refused naming ``settings.backend``.
    """
    try:
        doc = loads_bounded(text, source, parse_constant=_NonFinite)
    except ParseError as exc:
        raise NativeFormatError(f"{source}:{exc.line}:{exc.column}", "", exc.detail) from None
    r = _Reader(source)
    next_id = _read_header(r, doc)
    settings = _read_settings(r, doc["settings"], registry)
    objects: dict[int, Any] = {}
    where: dict[int, str] = {}
    _read_entities(r, doc["entities"], objects, where)
    brush_fields = _read_brushes(r, doc["brushes"], objects, where)
    if objects and next_id <= max(objects):
        r.fail("next_id", f"must be greater than every id (largest is {max(objects)}), got {next_id}")
    _check_geometry(r, brush_fields)

    scene = Scene()
    scene.reserve_ids_below(next_id)
    scene.apply(Edit(objects, settings=settings))
    return scene


def _read_header(r: _Reader, doc) -> int:
    """Check the format, version and top-level keys; return ``next_id``."""
    if not isinstance(doc, dict):
        r.fail("", f"expected a JSON object at the top, got {_describe(doc)}")
    if doc.get("format") != FORMAT_NAME:
        found = _describe(doc.get("format")) if "format" in doc else "nothing"
        r.fail("format", f"expected {FORMAT_NAME!r}, got {found}"
               " (is this a Partition Studio scene?)")
    version = r.integer(doc.get("version"), "version", lo=1) if "version" in doc else r.fail("version", "missing field")
    if version > FORMAT_VERSION:
        r.fail("version", f"format version {version} is newer than this Partition Studio reads "
                          f"(up to {FORMAT_VERSION}); open it with a newer version")
    r.obj(doc, "", _TOP_KEYS)
    next_id = r.integer(doc["next_id"], "next_id")
    if next_id > MAX_ID:
        r.fail("next_id", f"{next_id} is too large (ids must stay below {MAX_ID})")
    return next_id


def _read_entities(r: _Reader, raw_list, objects: dict, where: dict) -> None:
    """Read ``entities`` into ``objects`` (id -> Entity) and ``where`` (id -> field)."""
    for i, raw in enumerate(r.list(raw_list, "entities")):
        field = f"entities[{i}]"
        raw = r.obj(raw, field, ("id", "kind", "properties"))
        oid = _read_id(r, raw["id"], f"{field}.id", where)
        kind = r.string(raw["kind"], f"{field}.kind")
        if kind not in KINDS:
            r.fail(f"{field}.kind", f"expected one of {', '.join(map(repr, KINDS))}, got {kind!r}")
        props = [_read_property(r, pair, f"{field}.properties[{j}]", kind)
                 for j, pair in enumerate(r.list(raw["properties"], f"{field}.properties"))]
        objects[oid] = Entity(kind, tuple(props))
        where[oid] = field


def _read_property(r: _Reader, pair, pfield: str, kind: str) -> tuple[str, str]:
    if not isinstance(pair, list) or len(pair) != 2:
        r.fail(pfield, f"expected a [key, value] pair, got {_describe(pair)}")
    key = r.string(pair[0], f"{pfield}[0]")
    value = r.string(pair[1], f"{pfield}[1]")
    if key == "origin" and kind == "point":
        try:
            parse_vector(value)
        except GeometryError as exc:
            r.fail(f"{pfield}[1]", str(exc))
    return key, value


def _read_brushes(r: _Reader, raw_list, objects: dict, where: dict) -> list[tuple[Brush, str]]:
    """Read ``brushes`` into ``objects``; return each brush with its field for the geometry
    check."""
    brush_fields: list[tuple[Brush, str]] = []
    for i, raw in enumerate(r.list(raw_list, "brushes")):
        field = f"brushes[{i}]"
        raw = r.obj(raw, field, ("id", "entity", "faces"))
        oid = _read_id(r, raw["id"], f"{field}.id", where)
        owner = r.integer(raw["entity"], f"{field}.entity")
        if not isinstance(objects.get(owner), Entity):
            r.fail(f"{field}.entity", f"no entity with id {owner}")
        if objects[owner].kind != "brush":
            r.fail(f"{field}.entity", f"entity {owner} is a point entity and cannot own brushes")
        faces_raw = r.list(raw["faces"], f"{field}.faces")
        if len(faces_raw) < 4:
            r.fail(f"{field}.faces", f"a brush needs at least 4 faces, got {len(faces_raw)}")
        faces = tuple(_read_face(r, f, f"{field}.faces[{j}]") for j, f in enumerate(faces_raw))
        brush = Brush(owner, faces)
        objects[oid] = brush
        where[oid] = field
        brush_fields.append((brush, field))
    return brush_fields


def _read_id(r: _Reader, value, field: str, seen: dict) -> int:
    oid = r.integer(value, field)
    if oid >= MAX_ID:  # the spatial index maps ids through a dense table
        r.fail(field, f"id {oid} is too large (ids must stay below {MAX_ID})")
    if oid in seen:
        r.fail(field, f"id {oid} is already used by {seen[oid]}")
    return oid


def _read_settings(r: _Reader, raw, registry) -> Settings:
    raw = r.obj(raw, "settings", ("backend", "params", "metadata"))
    backend = r.string(raw["backend"], "settings.backend")
    params = r.obj(raw["params"], "settings.params", (),
                   tuple(raw["params"]) if isinstance(raw["params"], dict) else ())
    r.json_data(params, "settings.params")
    metadata = r.obj(raw["metadata"], "settings.metadata", (),
                     tuple(raw["metadata"]) if isinstance(raw["metadata"], dict) else ())
    r.json_data(metadata, "settings.metadata")
    settings = Settings(backend, params, metadata)
    _check_params(r, settings, registry)
    return settings


def _check_params(r: _Reader, settings: Settings, registry) -> None:
    """Parameters of a backend this installation knows must be valid for it (parsed here,
    once: the settings keep the parsed value)."""
    from spatial.errors import ParamError
    from spatial.registry import default_registry

    backend = settings.backend

    if registry is None:
        registry = default_registry()
    cls = registry.backends.get(backend)
    if cls is None:
        # Refused rather than opened with another backend: a scene is tuned for its backend,
        # and a silent substitute would change every figure computed from it.
        known = ", ".join(sorted(registry.backends))
        r.fail("settings.backend", f"unknown backend '{backend}' (known: {known}); install the "
                                   "plugin that provides it or change the backend in the file")
    try:
        settings.parsed(cls)
    except ParamError as exc:
        r.fail(f"settings.params.{exc.field}", str(exc))


def _read_face(r: _Reader, raw, field: str) -> Face:
    raw = r.obj(raw, field, ("points", "texture", "offset", "rotation", "scale"),
                ("u_axis", "v_axis", "extra"))
    points_raw = raw["points"]
    if not isinstance(points_raw, list) or len(points_raw) != 3:
        r.fail(f"{field}.points", f"expected 3 points, got {_describe(points_raw)}")
    points = tuple(r.numbers(p, f"{field}.points[{k}]", 3) for k, p in enumerate(points_raw))
    texture = r.string(raw["texture"], f"{field}.texture")
    offset = r.numbers(raw["offset"], f"{field}.offset", 2)
    rotation = r.number(raw["rotation"], f"{field}.rotation")
    scale = r.numbers(raw["scale"], f"{field}.scale", 2)
    if ("u_axis" in raw) != ("v_axis" in raw):
        missing = "v_axis" if "u_axis" in raw else "u_axis"
        r.fail(_join(field, missing), "missing field (u_axis and v_axis come together)")
    axes: list[tuple[float, ...] | None] = [None, None]
    for k, name in enumerate(("u_axis", "v_axis")):
        if name in raw:
            axes[k] = r.numbers(raw[name], f"{field}.{name}", 3)
    extra: tuple[str, ...] = ()
    if "extra" in raw:
        extra = tuple(r.string(t, f"{field}.extra[{k}]") for k, t in enumerate(r.list(raw["extra"], f"{field}.extra")))
    return Face.trusted(points, texture, offset, rotation, scale, axes[0], axes[1], extra)  # checked above


def _check_geometry(r: _Reader, brush_fields: list[tuple[Brush, str]]) -> None:
    """Every brush must bound a closed convex solid; report the first that does not."""
    try:
        build_solids([b for b, _ in brush_fields], what="brush")
        return
    except GeometryError:
        pass
    for brush, field in brush_fields:  # slow path only to name the culprit
        try:
            brush.check()
        except GeometryError as exc:
            message = str(exc)
            if message.startswith("brush: "):
                message = message[len("brush: "):]
            r.fail(field, message)


def load_scene(path: str | os.PathLike, registry=None) -> Scene:
    """Read a native scene file (errors name the file and the JSON field)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise NativeFormatError(str(path), "", f"cannot read: {exc.strerror or exc}") from None
    return loads_scene(data, str(path), registry)
