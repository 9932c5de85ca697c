"""Exporters of tuned tree parameters: a versioned JSON document and engine-ready snippets.

Every exporter here is registered with ``kind="params"`` and has the signature
``save(document, path)``, where ``document`` is the JSON document built by
:func:`spatial.tuned_params.tuned_params_document` (the same dict the JSON exporter writes). Files are written
atomically (a temporary file renamed over the target).

* ``json`` (``*.json``) — the document itself::

      {"format": "partition-studio-params", "version": 1,
       "tool": {"name", "version"}, "date": ISO-8601 UTC,
       "backend": NAME, "params": {name: value}, "units": {name: unit},
       "defaults": {name: value},
       "scene": {"source", "hash": "sha256:...", "objects"},
       "cost_model": {"objective", "weights", "seed", "workload"},
       "cost": {"tuned", "defaults", "improvement", "tuned_report", "defaults_report"},
       "search": {"trials", "budget_s", "elapsed_s", "stop_reason", "space", "warmup_s",
                  "history": [{"index", "phase", "status", "cost", "seconds", "params",
                               "message"}, ...]},
       "comparison": optional ranking of backends}

  ``python app.py stats FILE --params PARAMS.json`` reads its ``backend`` and ``params``;
  :func:`spatial.tuned_params.load_params_document` reads it back, naming the offending field on error.
* ``c-header`` (``*.h``, ``*.hpp``) — ``#define`` constants, one per parameter, with unit and
  help in comments.
* ``unreal-ini`` (``*.ini``) — a ``[ConsoleVariables]`` block for ``DefaultEngine.ini`` with the
  Chaos AABB-tree console variables our parameters correspond to (see :data:`UNREAL_MAP`),
  a comment for every parameter that has no counterpart, and every tuned value in a
  ``[PartitionStudio.<backend>]`` section game code reads.
* ``godot`` (``*.godot``, ``*.cfg``) — a ``[physics]`` block of Godot 3.5 project settings for
  the parameters that have a counterpart (see :func:`godot_settings`), and every tuned value as
  a custom project setting ``partition_studio/<backend>/<name>``.
"""
from __future__ import annotations

import json
import math
import re
from typing import Any

from spatial.atomic import atomic_write_text
from spatial.params import param_specs
from spatial.tuned_params import TOOL_NAME


def _write(path, text: str) -> None:
    atomic_write_text(path, text)


def save_json(document: dict, path) -> None:
    """Write the document as JSON (atomic)."""
    _write(path, json.dumps(document, indent=2, allow_nan=False) + "\n")


# --------------------------------------------------------------------------- C header
def _c_name(text: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", text.upper()).strip("_")


def _c_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(float(value))
        return text if ("." in text or "e" in text) else text + ".0"
    return json.dumps(str(value))  # a C string literal (JSON escapes are valid C escapes)


def c_header_text(document: dict) -> str:
    """``#define`` constants for every parameter of the document."""
    backend = document["backend"]
    prefix = f"PS_{_c_name(backend)}"
    guard = f"{prefix}_TUNED_PARAMS_H"
    units = document.get("units", {})
    cost = document.get("cost", {})
    helps = _helps(backend)
    lines = [
        f"/* Tuned {backend} parameters, written by {TOOL_NAME} "
        f"{document.get('tool', {}).get('version', '')} on {document.get('date', '')}.",
        f" * Scene: {document.get('scene', {}).get('source', '')} "
        f"({document.get('scene', {}).get('hash', '')})",
        f" * Per-frame cost: {cost.get('tuned')} (defaults: {cost.get('defaults')}). */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
    ]
    for name, value in document["params"].items():
        note = " ".join(part for part in (units.get(name, ""), helps.get(name, "")) if part)
        lines.append(f"/* {note.replace('*/', '* /')} */" if note else "")
        lines.append(f"#define {prefix}_{_c_name(name)} {_c_literal(value)}")
    lines += ["", f"#endif /* {guard} */", ""]
    return "\n".join(line for line in lines if line is not None)


def _helps(backend: str) -> dict:
    from spatial.registry import default_registry

    cls = default_registry().backends.get(backend)
    return {s.name: s.help for s in param_specs(cls.Params)} if cls else {}


def save_c_header(document: dict, path) -> None:
    _write(path, c_header_text(document))


# --------------------------------------------------------------------------- Unreal
#: Chaos (Unreal Engine) console variables our parameters correspond to, by backend.
#: Chaos's acceleration structure is a bounding-volume tree with leaf buckets; a leaf
#: capacity and a depth limit mean the same thing there, every other parameter does not exist.
UNREAL_MAP: dict[str, dict[str, tuple[str, str]]] = {
    "quadtree": {"max_objects": ("p.AABBMaxChildrenInLeaf", "leaf bucket capacity"),
                 "max_depth": ("p.AABBMaxTreeDepth", "depth limit")},
    "kdtree": {"leaf_size": ("p.AABBMaxChildrenInLeaf", "leaf bucket capacity"),
               "max_depth": ("p.AABBMaxTreeDepth", "depth limit")},
    "bsp": {"min_objects": ("p.AABBMaxChildrenInLeaf", "a node this full is not split"),
            "max_depth": ("p.AABBMaxTreeDepth", "depth limit")},
    "triangle_octree": {"max_triangles": ("p.AABBMaxChildrenInLeaf", "leaf bucket capacity"),
                        "max_depth": ("p.AABBMaxTreeDepth", "depth limit")},
    "octree": {"max_depth": ("p.AABBMaxTreeDepth", "depth limit")},
    "grid": {"cell_size": ("p.aabbtree.DirtyElementGridCellSize",
                           "approximate: Chaos keeps moving objects in a grid of this cell size")},
}


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def unreal_ini_text(document: dict) -> str:
    """``DefaultEngine.ini`` sections: Chaos console variables and every tuned value.

    The parameters Chaos has a console variable for go to ``[ConsoleVariables]``. Every tuned
    value is also written to the section ``[PartitionStudio.<backend>]``, which game code reads
    with ``GConfig`` (engine ini files accept any section), so nothing tuned is lost; each
    value without a Chaos counterpart carries a comment saying so.
    """
    backend, params = document["backend"], document["params"]
    mapping = UNREAL_MAP.get(backend, {})
    lines = [f"; Tuned {backend} parameters from {TOOL_NAME} ({document.get('date', '')}),",
             f"; scene {document.get('scene', {}).get('source', '')}. Paste into Config/DefaultEngine.ini.",
             "; Lengths are in the level's own units: convert them to centimetres for Unreal.",
             "[ConsoleVariables]"]
    unmapped = []
    for name, value in params.items():
        if name in mapping:
            cvar, meaning = mapping[name]
            if cvar.endswith("ChildrenInLeaf") or cvar.endswith("TreeDepth"):
                value = max(1, int(round(float(value))))
            lines.append(f"; {backend}.{name} ({meaning})")
            lines.append(f"{cvar}={_value_text(value)}")
        else:
            unmapped.append(f"{name}={_value_text(value)}")
    if unmapped:
        lines.append(f"; no Unreal counterpart: {', '.join(unmapped)}")
    lines += ["", f"; every tuned value, for game code: GConfig->GetString(TEXT(\"{unreal_section(backend)}\"), "
                  "TEXT(\"<name>\"), Value, GEngineIni)",
              f"[{unreal_section(backend)}]"]
    for name, value in params.items():
        if name not in mapping:
            lines.append(f"; {name}: no Chaos console variable")
        lines.append(f"{name}={_value_text(value)}")
    return "\n".join(lines) + "\n"


def unreal_section(backend: str) -> str:
    """The ini section holding every tuned value of ``backend``."""
    return f"PartitionStudio.{backend}"


def save_unreal_ini(document: dict, path) -> None:
    _write(path, unreal_ini_text(document))


# --------------------------------------------------------------------------- Godot
def godot_settings(backend: str, params: dict) -> tuple[dict, list[str]]:
    """``({setting: value}, [unmapped names])`` in Godot 3.5 project settings.

    Godot's broad phase is a BVH whose only exposed knob is the pairing margin (absolute world
    units), plus the 2D hash grid's cell size when the 2D BVH is turned off. Leaf sizes and depth
    limits have no setting.
    """
    settings: dict[str, Any] = {}
    if backend == "bvh" and params.get("margin_mode") == "absolute":
        settings["3d/godot_physics/bvh_collision_margin"] = float(params["margin"])
        settings["2d/bvh_collision_margin"] = float(params["margin"])
        mapped = {"margin", "margin_mode"}
    elif backend == "grid" and float(params.get("cell_size", 0)) > 0:
        settings["2d/use_bvh"] = False
        settings["2d/cell_size"] = max(1, int(round(float(params["cell_size"]))))
        mapped = {"cell_size"}
    else:
        mapped = set()
    return settings, [n for n in params if n not in mapped]


def _godot_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "0.0"
    if isinstance(value, int):
        return str(value)
    return json.dumps(str(value))


def godot_text(document: dict) -> str:
    """``project.godot`` sections: Godot physics settings and every tuned value.

    The parameters Godot has a setting for go to ``[physics]`` (see :func:`godot_settings`).
    Every tuned value is also written as a custom project setting under
    ``[partition_studio]`` as ``<backend>/<name>``, read in GDScript with
    ``ProjectSettings.get_setting("partition_studio/<backend>/<name>")``; each value without a
    Godot counterpart carries a comment saying so.
    """
    backend, params = document["backend"], document["params"]
    settings, unmapped = godot_settings(backend, params)
    lines = [f"; Tuned {backend} parameters from {TOOL_NAME} ({document.get('date', '')}).",
             "; Merge into project.godot (Godot 3.5). Lengths are in the level's own units.",
             "[physics]"]
    lines += [f"{key}={_godot_value(value)}" for key, value in settings.items()]
    if unmapped:
        lines.append("; no Godot counterpart: "
                     + ", ".join(f"{n}={_value_text(params[n])}" for n in unmapped))
    lines += ["", "; every tuned value, for game code: "
                  f"ProjectSettings.get_setting(\"{GODOT_SECTION}/{backend}/<name>\")",
              f"[{GODOT_SECTION}]"]
    for name, value in params.items():
        if name in unmapped:
            lines.append(f"; {name}: no Godot physics setting")
        lines.append(f"{backend}/{name}={_godot_value(value)}")
    return "\n".join(lines) + "\n"


#: the project-settings section holding every tuned value
GODOT_SECTION = "partition_studio"


def save_godot(document: dict, path) -> None:
    _write(path, godot_text(document))


#: format name (``--format``) -> exporter name
def register(registry) -> None:
    """Built-in plugin entry point: the tuned-parameter exporters."""
    registry.add_exporter("json", ("*.json",), save_json, kind="params",
                          description="Tuned parameters, cost and scene hash (versioned JSON)")
    registry.add_exporter("c-header", ("*.h", "*.hpp"), save_c_header, kind="params",
                          description="C/C++ header of #define constants")
    registry.add_exporter("unreal-ini", ("*.ini",), save_unreal_ini, kind="params",
                          description="Unreal DefaultEngine.ini console variables (Chaos AABB tree)")
    registry.add_exporter("godot", ("*.godot", "*.cfg"), save_godot, kind="params",
                          description="Godot 3.5 project settings (physics)")
