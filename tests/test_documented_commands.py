"""Every command line the README and docs/ show in a code block runs, on a plain install.

A plain install (`pip install -e .`) has the base dependencies only, so each command runs in a
subprocess in which the test and bench extras (scipy, hypothesis, pytest, rtree...) cannot be
imported. Placeholders (`LEVEL.map`, `mesh.obj`, `freedoom1.wad`) become real levels; optional
parts in brackets are left out. Commands run in the order a page shows them, in one folder per
page, so a page's `params.json` or `run.npz` is there for the command that reads it. Editor
commands (no subcommand: they open a window) are left to the GUI tests.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
DOOM = Path("/usr/share/games/doom")
SUBCOMMANDS = ("stats", "convert", "simulate", "tune", "plugins")
#: modules of the test and bench extras: a plain install has none of them
EXTRAS = ("scipy", "hypothesis", "pytest", "pytestqt", "pytest_xvfb", "mypy", "importlinter", "ruff",
          "rtree", "fcl", "boostree", "open3d", "threadpoolctl")

#: placeholder -> the real file it stands for (None: not on this machine)
_E1M1 = SHARED_DATA / "quake" / "quake_id1_e1m1.map"
PLACES = {
    "../shared/data/meshes/oa_dm5_world.obj": SHARED_DATA / "meshes" / "oa_dm5_world.obj",
    "/usr/share/games/doom/freedoom1.wad": DOOM / "freedoom1.wad",
    "~/doom/mylevel.wad": DOOM / "freedoom2.wad",
    "freedoom1.wad": DOOM / "freedoom1.wad",
    "freedoom2.wad": DOOM / "freedoom2.wad",
    "../shared/data/quake/quake_id1_e1m1.map": _E1M1,
    "LEVEL.map": _E1M1,
    "level.map": _E1M1,
    "mesh.obj": SHARED_DATA / "meshes" / "oa_dm5_world.obj",
    "world.obj": SHARED_DATA / "meshes" / "oa_dm5_world.obj",
}
#: a game's own stream (docs/frame-format.md) and a live session's recording (docs/live-link.md):
#: written by a running game, not by any documented command
NEEDS_A_GAME = ("game.jsonl", "s.jsonl")
#: shell syntax after which a line's arguments end (what the shell does with the output)
SHELL_ENDS = (">", ">>", "2>", "|", "&", "&&", ";")

_RUN_PLAIN = textwrap.dedent("""
    import runpy, sys

    EXTRAS = set(sys.argv[1].split(","))

    class PlainInstall:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in EXTRAS:
                raise ImportError(f"No module named {name!r} (not in a plain install)")
            return None

    sys.meta_path.insert(0, PlainInstall())
    sys.path.insert(0, sys.argv[2])
    sys.argv = [sys.argv[2] + "/app.py", *sys.argv[3:]]
    runpy.run_path(sys.argv[0], run_name="__main__")
""")


def documented_commands(page: Path) -> list[str]:
    """The ``python app.py SUBCOMMAND ...`` lines of the page's code blocks, comments and
    bracketed options left out."""
    found = []
    in_block = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            in_block = not in_block
            continue
        line = re.sub(r"\s*\[[^\]]*\]", "", re.sub(r"\s+#.*$", "", line).strip())
        if in_block and line.startswith("python app.py ") and line.split()[2] in SUBCOMMANDS:
            words = line.split()
            ends = [k for k, word in enumerate(words) if word in SHELL_ENDS]
            found.append(" ".join(words[:ends[0]] if ends else words))
    return found


def _placed(command: str) -> tuple[list[str], str | None]:
    """The command's arguments with placeholders replaced, and why it cannot run here."""
    args = command.split()[2:]
    for k, arg in enumerate(args):
        for name, real in PLACES.items():
            if arg == name or arg.startswith(name + ":"):
                if not real.exists():
                    return args, f"{real} is absent"
                args[k] = str(real) + arg[len(name):]
                break
        if any(stream in arg for stream in NEEDS_A_GAME):
            return args, "reads a game's own frame stream"
    return args, None


def test_the_pages_show_commands_and_every_placeholder_is_known():
    commands = [c for page in PAGES for c in documented_commands(page)]
    assert len(commands) >= 15
    for command in commands:
        for arg in command.split()[3:]:
            if re.fullmatch(r"[\w~./-]+\.(map|wad|obj|ply|gltf)(:\w+)?", arg):
                assert any(arg == n or arg.startswith(n + ":") for n in PLACES), \
                    f"{command}: no real file stands for {arg}"


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if documented_commands(p)], ids=lambda p: p.name)
def test_documented_commands_run_on_a_plain_install(page, tmp_path):
    ran = 0
    reasons = set()
    for command in documented_commands(page):
        args, why_not = _placed(command)
        if why_not is not None:
            reasons.add(why_not)
            continue
        done = subprocess.run([sys.executable, "-c", _RUN_PLAIN, ",".join(EXTRAS), str(REPO), *args],
                              capture_output=True, text=True, cwd=tmp_path, timeout=900,
                              env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
        ran += 1
    if not ran:
        pytest.skip(f"none of {page.name}'s commands can run here: {'; '.join(sorted(reasons))}")
