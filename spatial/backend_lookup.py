"""Backend classes by name from the default registry (or a given one).

A shorthand for ``(registry or default_registry()).backend(name)``: :meth:`Registry.backend
<spatial.registry.Registry.backend>` returns the class typed ``type[SpatialIndex]`` and refuses
an entry that is not one with a clear :class:`~spatial.errors.PluginError`.
"""
from __future__ import annotations

from .contract import SpatialIndex
from .registry import Registry, default_registry


def backend_class(name: str, registry: Registry | None = None) -> type[SpatialIndex]:
    """The :class:`~spatial.contract.SpatialIndex` subclass registered as ``name``.

    Parameters
    ----------
    name : str
        The backend's registered name (``"octree"``...).
    registry : Registry, optional
        Where to look (default: :func:`spatial.registry.default_registry`).

    Raises
    ------
    PluginError
        No backend has that name (the message lists the known ones), or the registry's table
        holds something else than a backend class under it (``Registry.add_backend`` checks
        what it adds, but ``Registry.backends`` is a plain dictionary).
    """
    return (default_registry() if registry is None else registry).backend(name)
