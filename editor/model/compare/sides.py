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

from ..index_input import IndexInput, index_input


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


def default_sides(record: IndexInput | Any, a: str | None = None,
                  b: str | None = None) -> tuple[str, str]:
    """The backends of A and B when the user leaves them out.

    With neither given, a Doom map compares our BSP with the map's shipped one
    (``shipped_bsp``); otherwise A is the document's own backend and B the BSP (the octree
    when A is the BSP). ``record`` is an :class:`IndexInput` or a scene's
    :class:`~editor.model.scene.Settings` (what is read: ``backend`` and ``metadata``).
    """
    from spatial.registry import default_registry

    backends = default_registry().backends
    shipped = backends.get("shipped_bsp")
    if b is None and a in (None, "bsp") and shipped is not None \
            and shipped.suits_source(record.metadata):
        return "bsp", "shipped_bsp"  # ours against the node builder's
    a = a or record.backend or ("octree" if "octree" in backends else "brute")
    return a, b or ("octree" if a == "bsp" else "bsp")


def scene_side_params(scene, spec: SideSpec) -> dict[str, Any]:
    """The parameter values of ``spec`` for an index following ``scene``: the document's own
    values when it uses that backend, then the spec's."""
    settings = scene.settings
    values = dict(settings.params) if settings.backend == spec.backend else {}
    values.update(spec.params)
    return values


def check_side(scene, spec: SideSpec, record: IndexInput | None = None) -> None:
    """Raise :class:`~spatial.errors.PartitionStudioError` (one line) when ``spec`` names an
    unknown backend or a parameter it does not take, or a bad value, for ``scene``; with
    ``record`` (the scene's snapshot) also when its tree could exceed the memory budget, so a
    build handed to a worker is refused before it starts."""
    cls = backend_class(spec.backend)
    params = parse_params(cls.Params, scene_side_params(scene, spec))
    if record is not None:
        cls.check_memory_budget(params, record.lo, record.hi)


def document_record(scene, source: str = "") -> IndexInput:
    """The snapshot of ``scene`` that both sides build from and are measured on (taken on the
    thread that owns the document; a worker measures it while editing goes on)."""
    return index_input(scene, source)
