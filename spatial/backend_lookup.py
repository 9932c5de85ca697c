"""Backend classes by name, checked to be what they are declared as: :class:`~spatial.contract.SpatialIndex`
subclasses.

``Registry.backends`` is a plain dictionary a plugin can write into; code that reads ``Params``,
``name`` or ``check_memory_budget`` from a backend class looks it up here, so a wrong entry is a
clear :class:`~spatial.errors.PluginError` instead of an ``AttributeError`` later.
"""
from __future__ import annotations

from .contract import SpatialIndex
from .errors import PluginError
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
    cls = (default_registry() if registry is None else registry).backend(name)
    if not (isinstance(cls, type) and issubclass(cls, SpatialIndex)):
        raise PluginError(f"backend '{name}' is registered as {cls!r}, not a SpatialIndex subclass")
    return cls
