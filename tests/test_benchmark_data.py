"""The benchmarks find real levels through ``benchmarks/data.py`` only: environment variables
with a repository-relative default, and no machine's absolute path in any benchmark."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from benchmarks import data

ROOT = Path(__file__).resolve().parents[1]
#: an absolute path of one machine: a user's home, a work or mount folder, a system data folder
MACHINE_PATH = re.compile(r"(?<![\w$.])/(?:work|home|root|mnt|media|tmp|usr|opt|srv)/")


def machine_paths(path: Path) -> list[str]:
    """``file:line text`` for every string literal in ``path`` that names an absolute path."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [f"{path.name}:{node.lineno} {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and MACHINE_PATH.search(node.value)]


def test_no_benchmark_names_a_machine_path():
    found = [hit for path in sorted((ROOT / "benchmarks").glob("*.py")) if path.name != "data.py"
             for hit in machine_paths(path)]
    assert found == [], "read real levels through benchmarks/data.py:\n" + "\n".join(found)


def test_the_scan_catches_a_machine_path(tmp_path):
    sample = tmp_path / "bench.py"
    sample.write_text('LEVEL = "/work/shared/data/quake/e1m1.map"\nHELP = "see $HOME/x and a/b"\n')
    assert machine_paths(sample) == ["bench.py:1 '/work/shared/data/quake/e1m1.map'"]


def test_the_folders_come_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PARTITION_STUDIO_DATA", str(tmp_path / "levels"))
    monkeypatch.setenv("PARTITION_STUDIO_DOOM", str(tmp_path / "wads"))
    assert data.data_file(*data.E1M1) == tmp_path / "levels" / "quake" / "quake_id1_e1m1.map"
    assert data.doom_wad("freedoom2.wad") == tmp_path / "wads" / "freedoom2.wad"


def test_the_defaults_are_beside_the_repository_and_debians_package(monkeypatch):
    monkeypatch.delenv("PARTITION_STUDIO_DATA", raising=False)
    monkeypatch.delenv("PARTITION_STUDIO_DOOM", raising=False)
    assert data.data_dir() == ROOT.parent / "shared" / "data"
    assert data.doom_dir() == Path("/usr/share/games/doom")
