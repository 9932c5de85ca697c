"""``convert IN OUT``: convert a level between formats by file extension.

``.json`` is the native format; any other output extension goes through a registered scene
exporter (``.map`` for Quake maps). The input is read like ``stats`` reads it (native, or any
registered importer, including ``FILE.wad:MAP``). The output is written atomically: a failed
conversion never leaves a half-written or truncated file, and an existing file is kept unless
``--force`` is given. A target format that cannot hold the level (a ``.map`` or native ``.json``
for a Doom map's wall segments or a mesh's triangles) is refused before anything is written,
rather than writing a file that silently lacks them.
"""
from __future__ import annotations

import os
from pathlib import Path

from spatial.atomic import check_output_path
from spatial.errors import PluginError, UnsupportedContentError

from . import CliError, open_document, subcommand


def _configure(p) -> None:
    p.add_argument("input", help="level to read (.json, .map, .wad:MAP, mesh...)")
    p.add_argument("output", help="file to write; its extension picks the format (.json, .map)")
    p.add_argument("--force", action="store_true", help="overwrite OUTPUT if it exists")


def _show(report: dict) -> None:
    print(f"wrote {report['output']} ({report['format']}): {report['brushes']} brushes, "
          f"{report['entities']} entities")


@subcommand("convert", "convert a level between formats by file extension", _configure, _show)
def cmd_convert(args) -> dict:
    """Read ``args.input`` and write it to ``args.output`` in the format of its extension."""
    from editor.model.loading import save_level, split_member
    from editor.model.stats import scene_counts
    from spatial.registry import default_registry

    out = Path(args.output)
    source_file = split_member(args.input)[0]  # FILE.wad:MAP reads FILE.wad
    if os.path.abspath(source_file) == os.path.abspath(out):
        raise CliError(f"{out}: output must differ from the input")
    check_output_path(out, args.force)
    if out.suffix.lower() == ".json":
        fmt = "native"
    else:
        exporter = default_registry().exporter_for(out, kind="scene")
        if exporter is None:
            known = sorted({p for e in default_registry().exporters.values() if e.kind == "scene"
                            for p in e.patterns} | {"*.json"})
            raise PluginError(f"{out}: no exporter writes this kind of file (known: {', '.join(known)})")
        fmt = exporter.name
    scene = open_document(args.input)
    try:
        save_level(scene, out)
    except UnsupportedContentError as exc:
        raise CliError(f"{out}: {exc}") from None
    counts = scene_counts(scene)
    return {"input": str(args.input), "output": str(out), "format": fmt,
            "brushes": counts["brushes"], "entities": counts["entities"], "faces": counts["faces"]}
