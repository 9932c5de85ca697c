"""Where the benchmarks find real levels: one place, set by environment variables.

* ``PARTITION_STUDIO_DATA``: the folder of real levels (``quake/*.map``, ``meshes/*.obj``);
  by default ``../shared/data`` beside the repository.
* ``PARTITION_STUDIO_DOOM``: the folder of the Freedoom IWADs; by default
  ``/usr/share/games/doom``, where Debian's ``freedoom`` package puts them.

Both are read when a path is asked for, so a script (or a test) can set them first. A
benchmark whose level is absent says so in its output and measures the rest.
"""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: the data folder when ``PARTITION_STUDIO_DATA`` is not set: ``shared/data`` next to the repository
DEFAULT_DATA = REPO.parent / "shared" / "data"
#: the WAD folder when ``PARTITION_STUDIO_DOOM`` is not set: Debian's ``freedoom`` package
DEFAULT_DOOM = Path("/usr/share/games/doom")


def data_dir() -> Path:
    """The folder of real levels (``$PARTITION_STUDIO_DATA``, default ``../shared/data``)."""
    return Path(os.environ.get("PARTITION_STUDIO_DATA") or DEFAULT_DATA)


def doom_dir() -> Path:
    """The folder of the Freedoom WADs (``$PARTITION_STUDIO_DOOM``, default /usr/share/games/doom)."""
    return Path(os.environ.get("PARTITION_STUDIO_DOOM") or DEFAULT_DOOM)


def data_file(*parts: str) -> Path:
    """A file under :func:`data_dir`, e.g. ``data_file("quake", "quake_id1_e1m1.map")``."""
    return data_dir().joinpath(*parts)


def doom_wad(name: str) -> Path:
    """A WAD under :func:`doom_dir`, e.g. ``doom_wad("freedoom2.wad")``."""
    return doom_dir() / name


#: the big Quake level most benchmarks open (4,035 boxes)
E3M4 = ("quake", "librequake_e3m4_valve220.map")
#: id's first Quake level
E1M1 = ("quake", "quake_id1_e1m1.map")
#: the OpenArena arena as one triangle mesh
OA_DM5 = ("meshes", "oa_dm5_world.obj")
