"""The plugin registry: backends, importers, exporters and motion behaviours.

A plugin is a module with a ``register(registry)`` function. Plugins come from three sources,
discovered by *name* first and imported only when the registry is first used:

1. the built-in ``plugins`` package (every module or sub-package in it that defines ``register``),
2. user plugin folders (``--plugin-dir`` and ``$PARTITION_STUDIO_PLUGIN_PATH`` and the per-user
   default ``~/.config/partition-studio/plugins``): every ``*.py`` file or package in them,
3. the entry-point group ``partition_studio.plugins`` of installed distributions.

A plugin that fails to import or to register is recorded in :attr:`Registry.failures` with its
error and the others carry on (pytest's pluggy and napari's manifests work the same way). What a
failing plugin registered before it raised is rolled back, so no half-registered plugin remains.
Plugin code runs contained (:mod:`.plugin_guard`): ``sys.exit()``, ``KeyboardInterrupt`` and
any exception become a reported failure, ``print()`` goes to stderr, and the import and
registration of a plugin from a folder or an entry point must finish within
:func:`plugin_time_limit` seconds (``$PARTITION_STUDIO_PLUGIN_TIMEOUT``, default
:data:`DEFAULT_PLUGIN_TIME_LIMIT_S`). Built-in plugins are part of the product and have no time
limit (their first import may compile kernels on a loaded machine).

:meth:`Registry.plugin_in_traceback` names the plugin whose code raised an exception, so a
command can report "plugin X failed in Y" rather than a traceback.

This module is Qt-free and does not import ``plugins``: the built-in package is found by name.
"""
from __future__ import annotations

import fnmatch
import importlib
import importlib.util
import os
import pkgutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import PluginError
from .plugin_guard import contained

if TYPE_CHECKING:  # the contract imports numba: the registry is read before any kernel loads
    from .contract import SpatialIndex

ENTRY_POINT_GROUP = "partition_studio.plugins"
BUILTIN_PACKAGE = "plugins"
PLUGIN_PATH_ENV = "PARTITION_STUDIO_PLUGIN_PATH"
PLUGIN_TIMEOUT_ENV = "PARTITION_STUDIO_PLUGIN_TIMEOUT"
#: seconds a third-party plugin may take to import and register
DEFAULT_PLUGIN_TIME_LIMIT_S = 10.0


def plugin_time_limit() -> float:
    """Seconds a folder or entry-point plugin may take to import and register.

    ``$PARTITION_STUDIO_PLUGIN_TIMEOUT`` overrides :data:`DEFAULT_PLUGIN_TIME_LIMIT_S`; a value
    that is not a positive number is ignored.
    """
    try:
        value = float(os.environ.get(PLUGIN_TIMEOUT_ENV, ""))
    except ValueError:
        return DEFAULT_PLUGIN_TIME_LIMIT_S
    return value if 0 < value < 1e6 else DEFAULT_PLUGIN_TIME_LIMIT_S


def default_user_plugin_dir() -> Path:
    """The per-user plugin folder (``$XDG_CONFIG_HOME/partition-studio/plugins``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "partition-studio" / "plugins"


@dataclass
class Importer:
    """Reads a file into a scene. ``load(path)`` returns the document object of the caller's layer."""

    name: str
    patterns: tuple[str, ...]
    load: Callable[..., Any]
    description: str = ""
    plugin: str = ""
    #: ``parts(path)`` lists the levels of a file holding several (a WAD's maps) as dicts with
    #: at least a ``name`` (opened as ``FILE:name``); None for one level a file
    parts: Callable[..., Any] | None = None


@dataclass
class Exporter:
    """Writes something (a scene, tuned parameters) to a file."""

    name: str
    patterns: tuple[str, ...]
    save: Callable[..., Any]
    kind: str = "scene"  # "scene" or "params"
    description: str = ""
    plugin: str = ""
    #: the format keeps the document's settings (backend and parameters) through a round trip
    stores_settings: bool = False


@dataclass
class MotionBehaviour:
    """A factory of motion for moving entities (see the simulation model)."""

    name: str
    factory: Callable[..., Any]
    description: str = ""
    plugin: str = ""


@dataclass
class PluginInfo:
    """What the registry knows about one plugin, loaded or failed."""

    name: str
    source: str  # "builtin", "folder:<path>" or "entry-point:<dist>"
    loaded: bool = False
    error: str | None = None
    provides: list[str] = field(default_factory=list)


def import_from_spec(spec) -> Any:
    """Create, register in ``sys.modules`` under ``spec.name`` and run the module ``spec``
    describes; if running it fails, it is unregistered again and the error propagates."""
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(spec.name, None)
        raise
    return module


class Registry:
    """Holds everything the plugins registered. Use :func:`default_registry` in applications."""

    def __init__(self) -> None:
        self.backends: dict[str, type[SpatialIndex]] = {}
        self.importers: dict[str, Importer] = {}
        self.exporters: dict[str, Exporter] = {}
        self.motions: dict[str, MotionBehaviour] = {}
        self.plugins: dict[str, PluginInfo] = {}
        self._current: str = ""
        self._modules: dict[str, str] = {}  # module name -> plugin name, for error reports

    # ------------------------------------------------------------------ registration API
    def add_backend(self, cls: type) -> None:
        """Register a :class:`~spatial.contract.SpatialIndex` subclass under ``cls.name``."""
        from .contract import SpatialIndex  # local: keeps import order simple
        if not (isinstance(cls, type) and issubclass(cls, SpatialIndex)):
            raise PluginError(f"{cls!r} is not a SpatialIndex subclass")
        if not cls.name:
            raise PluginError(f"backend class {cls.__name__} has no name")
        if cls.name in self.backends and self.backends[cls.name] is not cls:
            raise PluginError(f"backend '{cls.name}' is already registered")
        cls.param_specs()  # fails early on an undeclared parameter
        self.backends[cls.name] = cls
        self._provided(f"backend:{cls.name}")

    def add_importer(self, name: str, patterns: Iterable[str], load: Callable[..., Any],
                     description: str = "", parts: Callable[..., Any] | None = None) -> None:
        """Register a file importer for glob ``patterns`` such as ``("*.map",)``.

        ``load(path)`` returns the document; it may also take ``member`` (one level of a file
        holding several, listed by ``parts(path)``) and ``on_bad_brush`` (``"skip"``: leave a
        broken brush out with a warning instead of refusing the file).
        """
        self._unique(self.importers, name, "importer")
        self.importers[name] = Importer(name, tuple(patterns), load, description, self._current,
                                        parts)
        self._provided(f"importer:{name}")

    def add_exporter(self, name: str, patterns: Iterable[str], save: Callable[..., Any],
                     kind: str = "scene", description: str = "",
                     stores_settings: bool = False) -> None:
        """Register an exporter (``kind`` is ``"scene"`` or ``"params"``); ``stores_settings``
        says the format keeps the document's backend and parameters."""
        self._unique(self.exporters, name, "exporter")
        self.exporters[name] = Exporter(name, tuple(patterns), save, kind, description, self._current,
                                        stores_settings)
        self._provided(f"exporter:{name}")

    def add_motion(self, name: str, factory: Callable[..., Any], description: str = "") -> None:
        """Register a motion behaviour factory."""
        self._unique(self.motions, name, "motion behaviour")
        self.motions[name] = MotionBehaviour(name, factory, description, self._current)
        self._provided(f"motion:{name}")

    def exporters_of_kind(self, kind: str) -> dict[str, Exporter]:
        """The exporters of one kind (``"scene"`` or ``"params"``) by name, in registration order."""
        return {name: e for name, e in self.exporters.items() if e.kind == kind}

    def _unique(self, table: dict, name: str, what: str) -> None:
        if name in table:
            raise PluginError(f"{what} '{name}' is already registered")

    def _provided(self, item: str) -> None:
        if self._current in self.plugins:
            self.plugins[self._current].provides.append(item)

    # ------------------------------------------------------------------ look-ups
    def backend(self, name: str) -> type[SpatialIndex]:
        """The backend class called ``name``; the error lists the known names, or names an
        entry that is not a backend class (``backends`` is a plain dictionary a plugin can
        write into past :meth:`add_backend`'s check)."""
        from .contract import SpatialIndex  # local: the contract imports numba
        try:
            cls = self.backends[name]
        except KeyError:
            known = ", ".join(sorted(self.backends)) or "none"
            raise PluginError(f"unknown backend '{name}' (known: {known})") from None
        if not (isinstance(cls, type) and issubclass(cls, SpatialIndex)):
            raise PluginError(f"backend '{name}' is registered as {cls!r}, not a SpatialIndex subclass")
        return cls

    def importer_for(self, path: str | os.PathLike) -> Importer | None:
        """The first importer whose pattern matches the file name (case-insensitive)."""
        return self._match(self.importers.values(), path)

    def exporter_for(self, path: str | os.PathLike, kind: str = "scene") -> Exporter | None:
        return self._match([e for e in self.exporters.values() if e.kind == kind], path)

    @staticmethod
    def _match(items, path):
        name = os.path.basename(os.fspath(path)).lower()
        for item in items:
            if any(fnmatch.fnmatch(name, pat.lower()) for pat in item.patterns):
                return item
        return None

    @property
    def failures(self) -> list[PluginInfo]:
        return [p for p in self.plugins.values() if p.error]

    # ------------------------------------------------------------------ loading
    def load_module(self, module: Any, name: str, source: str,
                    time_limit: float | None = None) -> bool:
        """Call ``module.register(self)`` contained; on failure record it and roll back what it added.

        Parameters
        ----------
        module : module
            The imported plugin.
        name, source : str
            How the plugin is listed (see :class:`PluginInfo`).
        time_limit : float, optional
            Seconds ``register()`` may take (None: no limit).
        """
        info = self.plugins.setdefault(name, PluginInfo(name, source))
        register = getattr(module, "register", None)
        if not callable(register):
            info.error = "has no register(registry) function"
            return False
        self._remember_module(getattr(module, "__name__", ""), name)
        snapshot = (dict(self.backends), dict(self.importers), dict(self.exporters), dict(self.motions))
        self._current = name
        try:
            outcome = contained(lambda: register(self), time_limit)
        finally:
            self._current = ""
        if not outcome.ok:  # a broken plugin must not take the application down
            self.backends, self.importers, self.exporters, self.motions = snapshot
            info.provides.clear()
            info.error = f"register() failed: {outcome.error}"
            return False
        info.loaded = True
        return True

    def _import_and_load(self, name: str, source: str, importer: Callable[[], Any],
                         module_name: str = "") -> None:
        if name in self.plugins and (self.plugins[name].loaded or self.plugins[name].error):
            return
        info = self.plugins.setdefault(name, PluginInfo(name, source))
        time_limit = None if source == "builtin" else plugin_time_limit()
        self._remember_module(module_name, name)
        outcome = contained(importer, time_limit)
        if not outcome.ok:
            info.error = f"import failed: {outcome.error}"
            return
        self.load_module(outcome.value, name, source, time_limit)

    def _remember_module(self, module_name: str, plugin: str) -> None:
        if module_name:
            self._modules.setdefault(module_name, plugin)

    def plugin_of_module(self, module_name: str) -> str | None:
        """The plugin a module belongs to (its own module or one below it), or None."""
        while module_name:
            if module_name in self._modules:
                return self._modules[module_name]
            module_name = module_name.rpartition(".")[0]
        return None

    def plugin_in_traceback(self, exc: BaseException) -> tuple[str, str] | None:
        """``(plugin, function)`` for the outermost plugin frame in ``exc``'s traceback.

        The function is what the product asked the plugin to do (``OctreeIndex.build``,
        ``load_obj``): the first frame, walking from the caller inwards, whose module belongs
        to a registered plugin. None when no plugin code is on the traceback.
        """
        tb = exc.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            plugin = self.plugin_of_module(frame.f_globals.get("__name__", ""))
            if plugin is not None:
                code = frame.f_code
                return plugin, getattr(code, "co_qualname", code.co_name)
            tb = tb.tb_next
        return None

    def load_builtins(self) -> None:
        """Load every module of the built-in ``plugins`` package that defines ``register``."""
        try:
            package = importlib.import_module(BUILTIN_PACKAGE)
        except ImportError as exc:
            self.plugins["plugins"] = PluginInfo("plugins", "builtin", error=f"import failed: {exc}")
            return
        for mod in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
            if mod.name.startswith("_"):
                continue
            full = f"{BUILTIN_PACKAGE}.{mod.name}"
            self._import_and_load(full, "builtin", partial(importlib.import_module, full), full)

    def load_folder(self, folder: str | os.PathLike) -> None:
        """Load every ``*.py`` file and package in a user plugin folder."""
        folder = Path(folder)
        if not folder.is_dir():
            return
        for entry in sorted(folder.iterdir()):
            if entry.name.startswith(("_", ".")):
                continue
            if entry.suffix == ".py":
                init = entry
            elif entry.is_dir() and (entry / "__init__.py").exists():
                init = entry / "__init__.py"
            else:
                continue
            mod_name = f"partition_studio_user_plugins.{entry.stem}"
            name = f"{folder}/{entry.name}"

            def do_import(init=init, mod_name=mod_name):
                package_dirs = [str(init.parent)] if init.name == "__init__.py" else None
                spec = importlib.util.spec_from_file_location(mod_name, init, submodule_search_locations=package_dirs)
                return import_from_spec(spec)

            self._import_and_load(name, f"folder:{folder}", do_import, mod_name)

    def load_entry_points(self) -> None:
        """Load plugins advertised by installed distributions in ``partition_studio.plugins``."""
        from importlib.metadata import entry_points
        try:
            eps = entry_points(group=ENTRY_POINT_GROUP)
        except Exception as exc:  # a broken distribution's metadata must not stop the app
            self.plugins["entry-points"] = PluginInfo("entry-points", "entry-point", error=str(exc))
            return
        for ep in eps:
            dist = getattr(getattr(ep, "dist", None), "name", "?")
            self._import_and_load(f"{ep.name}", f"entry-point:{dist}", ep.load,
                                  getattr(ep, "module", ""))

    def describe(self) -> dict:
        """JSON-ready description of everything registered and every failure."""
        from .params import param_specs
        backends = {}
        for name, cls in sorted(self.backends.items()):
            backends[name] = {
                "dims": cls.dims,
                "description": cls.description,
                "params": [
                    {"name": s.name, "type": s.kind.__name__, "default": s.default, "min": s.lo,
                     "max": s.hi, "unit": s.unit, "choices": list(s.choices) if s.choices else None,
                     "help": s.help}
                    for s in param_specs(cls.Params)
                ],
            }
        return {
            "backends": backends,
            "importers": {n: {"patterns": list(i.patterns), "plugin": i.plugin}
                          for n, i in sorted(self.importers.items())},
            "exporters": {n: {"patterns": list(e.patterns), "kind": e.kind, "plugin": e.plugin}
                          for n, e in sorted(self.exporters.items())},
            "motions": sorted(self.motions),
            "plugins": [{"name": p.name, "source": p.source, "loaded": p.loaded, "error": p.error,
                         "provides": p.provides} for p in self.plugins.values()],
        }


_DEFAULT: Registry | None = None
_EXTRA_DIRS: list[str] = []


def add_plugin_dir(path: str | os.PathLike) -> None:
    """Add a user plugin folder; takes effect for a registry created afterwards (or reloaded)."""
    global _DEFAULT
    _EXTRA_DIRS.append(os.fspath(path))
    if _DEFAULT is not None:
        _DEFAULT.load_folder(path)


def plugin_dirs() -> list[str]:
    """The plugin folders added with :func:`add_plugin_dir` (``--plugin-dir``), in order; a
    helper process started by the editor is given the same."""
    return list(_EXTRA_DIRS)


def default_registry() -> Registry:
    """The process-wide registry, loading every plugin source on first use."""
    global _DEFAULT
    if _DEFAULT is None:
        reg = Registry()
        reg.load_builtins()
        for folder in _EXTRA_DIRS:
            reg.load_folder(folder)
        for folder in filter(None, os.environ.get(PLUGIN_PATH_ENV, "").split(os.pathsep)):
            reg.load_folder(folder)
        reg.load_folder(default_user_plugin_dir())
        reg.load_entry_points()
        _DEFAULT = reg
    return _DEFAULT


def reset_default_registry() -> None:
    """Forget the process-wide registry (tests use this to load from a fresh folder)."""
    global _DEFAULT
    _DEFAULT = None
    _EXTRA_DIRS.clear()
