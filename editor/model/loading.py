"""The one path from a level file to a document, and from a document back to a file.

:func:`open_level` is used by every caller that opens a level — the command line, the editor's
File → Open, recent files, watch mode, drag-and-drop and its command line: native ``.json``
scenes are read by :mod:`.native`; every other file goes to the importer the plugin registry
matches by file name (``*.map`` -> ``quake-map``, ``*.wad`` -> ``doom-wad`` ...).
``FILE:PART`` (``doom.wad:E1M1``) opens one level of a file holding several. Every failure
raises a :class:`~spatial.errors.PartitionStudioError` whose one-line message names the file
(and line:column or field when known); a damaged brush is left out with a warning in the
result instead of refusing the whole level, as level editors do.
"""
from __future__ import annotations

import inspect
import os
import warnings as warnings_module
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spatial.errors import PartitionStudioError, PartitionStudioWarning, PluginError

from .index_input import index_input
from .invalid_brushes import refuse_invalid_brushes
from .scene import Scene

#: how many individual warnings a result keeps before summing the rest up in one line
MAX_WARNINGS = 20

NATIVE_PATTERNS = ("*.json",)
NATIVE_DESCRIPTION = "Partition Studio level"


class LoadCancelled(PartitionStudioError):
    """Opening was cancelled by the caller (see ``cancel`` of :func:`open_level`)."""


@dataclass
class LoadResult:
    """A document read from disk and what the reader had to say about it.

    Attributes
    ----------
    document : Scene
        The level.
    path : str or None
        The name it was opened under (``FILE.wad:MAP`` included); None for the demo level.
    warnings : list of str
        One line each (``file:line:column: ...``): what was left out or repaired.
    """

    document: Scene
    path: str | None
    warnings: list[str] = field(default_factory=list)

    @property
    def scene(self) -> Scene:
        return self.document


def demo_document() -> Scene:
    """The demo level, built in code (equal to ``resources/demo_level.json``)."""
    from .demo import build_demo_scene
    return build_demo_scene()


def _registry(registry):
    if registry is None:
        from spatial.registry import default_registry
        registry = default_registry()
    return registry


def open_level(path: str | os.PathLike | None, *, progress: Callable | None = None,
               cancel: Callable[[], bool] | None = None, registry=None) -> LoadResult:
    """Read ``path`` (``None``: the demo level) into a document.

    Parameters
    ----------
    path : path-like or None
        The file, or ``FILE:PART`` for one level of a file holding several.
    progress : callable, optional
        ``progress(fraction, text)``; may be called from a worker thread. Importers that take
        a ``progress`` argument report their stages within the reading.
    cancel : callable, optional
        Returns True to give up; checked between stages (raises :class:`LoadCancelled`).
    registry : Registry, optional
        Where importers are looked up (default registry).

    Raises
    ------
    PartitionStudioError
        With one line naming the file, for every failure (missing, unknown kind, I/O,
        syntax, geometry).
    """
    report = progress or (lambda fraction, text: None)

    def check_cancel() -> None:
        if cancel is not None and cancel():
            raise LoadCancelled(f"{path}: opening cancelled")

    if path is None:
        report(0.1, "Building the demo level")
        return LoadResult(demo_document(), None)
    name = os.fspath(path)
    file, member = split_member(name)
    report(0.05, f"Reading {os.path.basename(name)}")
    check_cancel()
    caught: list[str] = []
    try:
        # the importer's own stages fill the range up to "Assembling the document"
        document = _read(file, member, _registry(registry), caught,
                         lambda fraction, text: report(0.05 + 0.8 * fraction, text))
    except PartitionStudioError:
        raise
    except (ValueError, OSError, UnicodeError) as exc:
        message = str(exc) or type(exc).__name__
        if file not in message:
            message = f"{file}: {message}"
        raise PartitionStudioError(message.splitlines()[0]) from exc
    check_cancel()
    report(0.9, "Assembling the document")
    if len(caught) > MAX_WARNINGS:
        caught = caught[:MAX_WARNINGS] + [f"{file}: {len(caught) - MAX_WARNINGS} more warnings"]
    return LoadResult(document, name, caught)


def _read(file: str, member: str | None, registry, caught: list[str], report) -> Scene:
    if Path(file).suffix.lower() == ".json":
        if not os.path.exists(file):
            raise PartitionStudioError(f"{file}: no such file")
        _check_readable(Path(file))
        from .native import load_scene
        return load_scene(file, registry)
    if not os.path.exists(file):
        raise PartitionStudioError(_missing(file))
    importer = registry.importer_for(file)
    if importer is None:
        known = ", ".join(sorted({p for i in registry.importers.values() for p in i.patterns}
                                 | set(NATIVE_PATTERNS)))
        raise PluginError(f"{file}: no importer reads this kind of file (known: {known})")
    if not os.path.exists(file):
        raise PartitionStudioError(f"{file}: no such file")
    _check_readable(Path(file))
    accepts = inspect.signature(importer.load).parameters
    options: dict[str, Any] = {}
    if member is not None:
        if "member" not in accepts:
            raise PluginError(f"{file}:{member}: importer '{importer.name}' reads whole files only")
        options["member"] = member
    if "progress" in accepts:  # long reads (a big mesh) report their stages
        options["progress"] = report
    if "on_bad_brush" in accepts:
        options["on_bad_brush"] = "skip"  # a damaged brush is a warning, not a refused level
    try:
        if "warn" in accepts:  # warnings straight to the result: safe on a worker thread
            options["warn"] = caught.append
            document = importer.load(file, **options)
        else:
            document = _load_catching_warnings(importer, file, options, caught)
    except OSError as exc:  # read between the check above and now, or by the importer itself
        raise PartitionStudioError(f"{file}: cannot read: {exc.strerror or exc}") from None
    except (PartitionStudioError, ValueError, UnicodeError, KeyboardInterrupt):
        raise  # located input errors: the caller names the file
    except BaseException as exc:  # noqa: B036 - plugin code, sys.exit() included
        raise ImporterFailure(file, importer.name, exc, registry) from exc
    if not isinstance(document, Scene):
        raise PluginError(f"{file}: importer '{importer.name}' returned "
                          f"{type(document).__name__}, not a scene")
    return document


class ImporterFailure(PluginError):
    """An importer's own code failed (not the file): names the level, the importer, its plugin
    and the error; the command line exits with its plugin-failure status."""

    plugin_failure = True

    def __init__(self, file: str, importer: str, exc: BaseException, registry=None) -> None:
        from spatial.plugin_guard import blame

        super().__init__(f"{file}: importer '{importer}' failed{blame(exc, registry)}")


def _missing(name: str) -> str:
    """One line naming a file that is not there: ``FILE.wad:MAP`` names ``FILE.wad``."""
    path = Path(name)
    head, sep, member = path.name.rpartition(":")
    if sep and head and member and not (path.parent / head).exists():
        return f"{path.parent / head}: no such file (asked for its level {member})"
    return f"{name}: no such file"


def _check_readable(path: Path) -> None:
    """Refuse a folder, a device or pipe (reading one may never end) and an unreadable file."""
    if path.is_dir():
        raise PartitionStudioError(f"{path}: is a folder, not a level file")
    if not path.is_file():
        raise PartitionStudioError(f"{path}: is not a regular file (a device or pipe cannot be "
                                   "read as a level)")
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise PartitionStudioError(f"{path}: cannot read: {exc.strerror or exc}") from None



def _load_catching_warnings(importer, file: str, options: dict, caught: list[str]):
    """``importer.load`` with the product's warnings it emits collected into ``caught``.

    The :mod:`warnings` filters are process-wide: importers that take a ``warn`` callback are
    preferred (see :func:`_read`); this is for those that do not.
    """
    with warnings_module.catch_warnings(record=True) as seen:
        warnings_module.simplefilter("always", PartitionStudioWarning)
        document = importer.load(file, **options)
    caught += [str(w.message) for w in seen if issubclass(w.category, PartitionStudioWarning)]
    for w in seen:  # anything else goes on as it came
        if not issubclass(w.category, PartitionStudioWarning):
            warnings_module.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return document


def load_document(path: str | os.PathLike, registry=None) -> Scene:
    """The document of :func:`open_level` alone (its warnings dropped)."""
    return open_level(path, registry=registry).document


def split_member(name: str) -> tuple[str, str | None]:
    """``dir/levels.wad:MAP01`` -> ``("dir/levels.wad", "MAP01")`` when only the former exists."""
    path = Path(name)
    head, sep, member = path.name.rpartition(":")
    if sep and head and member and not path.exists() and (path.parent / head).exists():
        return str(path.parent / head), member
    return name, None


def level_parts(path: str | os.PathLike, registry=None) -> list[dict] | None:
    """The levels of a file holding several (a WAD's maps, with their counts), else None.

    A ``FILE:PART`` name or a file whose importer lists no parts gives None.
    """
    name = os.fspath(path)
    file, member = split_member(name)
    if member is not None or not os.path.exists(file):
        return None
    importer = _registry(registry).importer_for(file)
    if importer is None or importer.parts is None:
        return None
    try:
        return list(importer.parts(file))
    except (ValueError, OSError) as exc:
        message = str(exc)
        raise PartitionStudioError(message if file in message else f"{file}: {message}") from exc


def save_level(document: Scene, path: str | os.PathLike, registry=None) -> None:
    """Write ``document`` to ``path``: native JSON, or the registered exporter of its pattern."""
    name = os.fspath(path)
    if name.lower().endswith(".json"):
        from .native import save_scene
        save_scene(document, name)
        return
    exporter = _registry(registry).exporter_for(name)
    if exporter is None:
        raise PluginError(f"{name}: no exporter writes this kind of file (save as .json)")
    if not getattr(exporter.save, "holds_invalid_brushes", False):
        refuse_invalid_brushes(document, f"exporter '{exporter.name}'")
    exporter.save(document, name)


def stores_settings(path: str | os.PathLike | None, registry=None) -> bool:
    """True when saving to ``path`` keeps the document's backend and parameters.

    A document without a file is saved as native JSON, which keeps them; so do exporters
    registered with ``stores_settings`` (a ``.map`` keeps them as worldspawn keys).
    """
    if path is None:
        return True
    name = os.fspath(path)
    if name.lower().endswith(".json"):
        return True
    file, member = split_member(name)
    if member is not None:
        return False
    exporter = _registry(registry).exporter_for(file)
    return exporter is not None and exporter.stores_settings


def level_file_types(registry=None, *, saving: bool = False) -> list[tuple[str, tuple[str, ...]]]:
    """File types for Open (every importer) or Save (every scene exporter) dialogs.

    Returns ``(description, patterns)`` pairs, "All levels" first, then the native format,
    then each registered importer or exporter in registration order.
    """
    registry = _registry(registry)
    items = registry.exporters_of_kind("scene").values() if saving else registry.importers.values()
    types = [(NATIVE_DESCRIPTION, NATIVE_PATTERNS)]
    types += [(item.description or item.name, tuple(item.patterns)) for item in items]
    every: list[str] = []
    for _, patterns in types:
        every += [p for p in patterns if p not in every]
    return [("All levels", tuple(every))] + types


def document_source(scene: Scene, source: str):
    """What the ``stats``/``simulate`` commands need of a scene: its
    :class:`~.index_input.IndexInput` with the scene counts of a report."""
    return index_input(scene, source, counts=True)


def give_backend_choice(scene: Scene, choice: tuple[str, dict] | None, registry=None) -> None:
    """Give a level that brings no backend choice of its own (the default tree with default
    parameters: a WAD, a mesh, a ``.map`` without ``_ps_`` keys) the user's ``choice``
    ``(backend, params)`` — the one it had before a reload, or the user's last. Not an edit:
    nothing to save. A choice this installation cannot take (a plugin gone, a parameter
    changed since) leaves the default."""
    from .scene import DEFAULT_BACKEND, Edit, Settings

    current = scene.settings
    if current.backend != DEFAULT_BACKEND or current.params:
        return
    if not choice or (choice[0] == DEFAULT_BACKEND and not choice[1]):
        return
    if registry is None:
        from spatial.registry import default_registry
        registry = default_registry()
    cls = registry.backends.get(choice[0])
    if cls is None:
        return
    settings = Settings(choice[0], dict(choice[1]), current.metadata)
    try:
        settings.parsed(cls)  # parsed once, here: the index reads the cached value
    except Exception:
        return
    scene.apply(Edit(settings=settings))
