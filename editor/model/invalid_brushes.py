"""Brushes that do not bound a solid, kept in the document exactly as they were read.

A level editor opens a map with a flat, open or otherwise degenerate brush and keeps it; so do
we. Such a brush is not an object of the scene (it has no solid, so no bounds to index or draw
as a solid): it is held verbatim in ``settings.metadata["invalid_brushes"]``, one record each::

    {"id": 17, "entity": 0, "position": 3, "source": "e1m1.map", "line": 120, "column": 1,
     "reason": "the face planes do not bound a closed solid", "format": "standard",
     "text": "{\\n( 0 0 0 ) ( ... ) ... \\n}"}

``entity`` is the owning entity's id, ``position`` the brush's place among that entity's brushes
in the file, ``text`` the brush from its ``{`` to its ``}`` as written. A writer that can hold
them (the ``.map`` writer, the native format through its metadata) writes them back unchanged;
every other writer refuses the document with :func:`refuse_invalid_brushes`, as it refuses any
other content it would lose.
"""
from __future__ import annotations

import re

import numpy as np

from spatial.errors import UnsupportedContentError

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_POINT_RE = re.compile(rf"\(\s*({_NUMBER})\s+({_NUMBER})\s+({_NUMBER})\s*\)")

#: the metadata key holding the records
METADATA_KEY = "invalid_brushes"


def invalid_brushes(scene) -> list[dict]:
    """The records of ``scene``'s invalid brushes, in file order (empty when none)."""
    records = scene.settings.metadata.get(METADATA_KEY)
    return [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []


def describe(record: dict) -> str:
    """One line for a record: ``file:line:column: brush N of entity E: reason``."""
    where = f"{record.get('source', '?')}:{record.get('line', '?')}:{record.get('column', '?')}"
    return (f"{where}: brush {record.get('position', '?')} of entity {record.get('entity', '?')} "
            f"kept as written, not indexed: {record.get('reason', 'not a solid')}")


def refuse_invalid_brushes(scene, format_label: str) -> None:
    """Raise if ``scene`` holds invalid brushes, for writers that cannot keep them.

    Raises
    ------
    UnsupportedContentError
        One line counting them and naming the first one's line.
    """
    records = invalid_brushes(scene)
    if not records:
        return
    first = records[0]
    raise UnsupportedContentError(
        f"{format_label} cannot hold the {len(records)} brush(es) kept as written because they "
        f"bound no solid (first at {first.get('source', '?')}:{first.get('line', '?')}:"
        f"{first.get('column', '?')}), which would be lost (nothing was written); save as "
        ".map or .json")


def by_owner(scene) -> dict[int, list[dict]]:
    """Copies of the records grouped by owning entity id, each group in file order (a
    ``position`` that is not a number reads as 0)."""
    groups: dict[int, list[dict]] = {}
    for record in invalid_brushes(scene):
        owner = record.get("entity")
        if isinstance(owner, int) and isinstance(record.get("text"), str):
            position = record.get("position")
            copy = dict(record, position=position if isinstance(position, int) else 0)
            groups.setdefault(owner, []).append(copy)
    for group in groups.values():
        group.sort(key=lambda r: r["position"])
    return groups


def marker_boxes(scene) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` ``(K, 3)``: the box around each invalid brush's plane points, for views
    that mark where it is (it has no solid to draw); brushes without readable points, or
    with points beyond the coordinate range, are left out."""
    from spatial.geometry import MAX_COORDINATE

    lo, hi = [], []
    for record in invalid_brushes(scene):
        text = record.get("text")
        points = np.array(_POINT_RE.findall(text) if isinstance(text, str) else [],
                          dtype=np.float64).reshape(-1, 3)
        if len(points) and np.isfinite(points).all() and \
                (np.abs(points) <= MAX_COORDINATE).all():
            lo.append(points.min(axis=0))
            hi.append(points.max(axis=0))
    if not lo:
        return np.empty((0, 3)), np.empty((0, 3))
    return np.array(lo), np.array(hi)
