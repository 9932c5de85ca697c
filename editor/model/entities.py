"""Entities of the document: ordered key/values, as in a ``.map`` file.

Two kinds exist. A *point* entity (player start, monster, light...) sits at its ``origin`` and
is one object of the spatial index, with the hull of its class (:mod:`.entity_classes`). A
*brush* entity (worldspawn, func_door, func_group, TrenchBroom groups and layers) owns brushes
and is not indexed itself: its brushes are. The kind is fixed when the entity is created.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from spatial.errors import GeometryError

from .entity_classes import class_box
from .transforms import checked_translation

POINT = "point"
BRUSH = "brush"
KINDS = (POINT, BRUSH)

#: TrenchBroom keeps groups and layers as func_group entities tagged with these keys
TB_TYPE, TB_ID, TB_NAME, TB_LAYER, TB_GROUP = "_tb_type", "_tb_id", "_tb_name", "_tb_layer", "_tb_group"


def parse_vector(text: str, what: str = "origin") -> tuple[float, float, float]:
    """Parse ``"x y z"``; raises ``GeometryError`` naming ``what`` on anything else."""
    parts = str(text).split()
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 3 or not all(math.isfinite(v) for v in values):
        raise GeometryError(f"{what}: expected 3 finite numbers, got {text!r}")
    return values


def format_number(value: float) -> str:
    """Shortest text that reads back as ``value``; whole numbers without a decimal point."""
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value)) if value != 0 or math.copysign(1, value) > 0 else "0"
    return repr(value)


def format_vector(values) -> str:
    return " ".join(format_number(v) for v in values)


@dataclass(frozen=True)
class Entity:
    """An entity: its kind and key/value pairs in file order (immutable).

    Attributes
    ----------
    kind : {"point", "brush"}
        Point entities are indexed objects; brush entities own brushes.
    properties : tuple of (key, value)
        Key/value pairs in file order, ``classname`` included. A repeated key (rare in old
        maps) is kept verbatim for export; :meth:`get` reads the last one, like the game.
    """

    kind: str
    properties: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"entity kind must be 'point' or 'brush', got {self.kind!r}")
        props = tuple((str(k), str(v)) for k, v in self.properties)
        object.__setattr__(self, "properties", props)

    # ------------------------------------------------------------------ key/values
    def get(self, key: str, default: str | None = None) -> str | None:
        """The value of ``key``; the last one wins if a file repeats a key (as in the game)."""
        for k, v in reversed(self.properties):
            if k == key:
                return v
        return default

    def __contains__(self, key: str) -> bool:
        return any(k == key for k, _ in self.properties)

    @property
    def classname(self) -> str:
        return self.get("classname", "") or ""

    @property
    def is_point(self) -> bool:
        return self.kind == POINT

    def with_properties(self, changes: dict[str, str | None]) -> Entity:
        """Set (value) or delete (``None``) keys; existing keys keep their place, new ones go last."""
        props = []
        for k, v in self.properties:
            if k in changes:
                if changes[k] is not None:
                    props.append((k, str(changes[k])))
            else:
                props.append((k, v))
        existing = {k for k, _ in self.properties}
        props.extend((k, str(v)) for k, v in changes.items() if v is not None and k not in existing)
        return Entity(self.kind, tuple(props))

    # ------------------------------------------------------------------ placement
    @property
    def origin(self) -> np.ndarray:
        """The ``origin`` key as 3 floats (the world origin when absent)."""
        text = self.get("origin")
        if text is None:
            return np.zeros(3)
        return np.array(parse_vector(text), dtype=np.float64)

    @property
    def lo(self) -> np.ndarray:
        return self.origin + np.asarray(class_box(self.classname)[0], dtype=np.float64)

    @property
    def hi(self) -> np.ndarray:
        return self.origin + np.asarray(class_box(self.classname)[1], dtype=np.float64)

    def translated(self, delta) -> Entity:
        """The entity with its origin moved by ``delta`` (the origin key rewritten)."""
        delta = checked_translation(delta)
        if not delta.any():
            return self
        return self.with_properties({"origin": format_vector(self.origin + delta)})

    # ------------------------------------------------------------------ TrenchBroom groups
    @property
    def tb_type(self) -> str | None:
        """``"_tb_layer"`` or ``"_tb_group"`` for a TrenchBroom container, else ``None``."""
        return self.get(TB_TYPE)


def point_entity(classname: str, origin, properties: Iterable[tuple[str, str]] = ()) -> Entity:
    """A point entity with ``classname``, ``origin`` and further key/values, in that order."""
    props = [("classname", classname), ("origin", format_vector(origin))]
    props.extend((str(k), str(v)) for k, v in properties)
    return Entity(POINT, tuple(props))


def brush_entity(classname: str, properties: Iterable[tuple[str, str]] = ()) -> Entity:
    """A brush entity (worldspawn, func_door...) with ``classname`` first."""
    return Entity(BRUSH, (("classname", classname),) + tuple((str(k), str(v)) for k, v in properties))
