"""One side of a comparison: a backend with its parameters, and its index of the document.

The index is built through the document's one path to an index,
:meth:`~editor.model.index_input.IndexInput.build` (split planes, wall segments, triangles and
the source offered, then the boxes), exactly as ``stats``, the editor and the tuner build it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from spatial.backend_lookup import backend_class
from spatial.contract import SpatialIndex
from spatial.params import parse_params

from ..index_input import IndexInput


@dataclass(frozen=True)
class SideSpec:
    """A backend name and the parameter values set on top of its defaults (or the document's
    own values when the document uses that backend)."""

    backend: str
    params: dict[str, Any] = field(default_factory=dict)

    def label(self) -> str:
        """``octree`` or ``octree max_depth=8`` (for titles and tables)."""
        extra = " ".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return f"{self.backend} {extra}".strip()


def side_params(record: IndexInput, spec: SideSpec) -> Any:
    """The validated ``Params`` of ``spec``: the document's values for its own backend, then
    the spec's (a bad name or value raises :class:`~spatial.errors.ParamError` naming it)."""
    cls = backend_class(spec.backend)
    values: dict[str, Any] = {}
    if record.params and record.backend == spec.backend:
        values.update(record.params)
    values.update(spec.params)
    return parse_params(cls.Params, values)


def new_index(record: IndexInput, spec: SideSpec) -> SpatialIndex:
    """An unbuilt index of ``spec`` with its validated parameters."""
    return backend_class(spec.backend)(side_params(record, spec))


def build_side(record: IndexInput, spec: SideSpec) -> SpatialIndex:
    """The index of ``spec`` built over ``record`` through the one document-to-index path."""
    index = new_index(record, spec)
    record.build(index)
    return index
