"""The project's own rules, checked on every run: lint, architecture contracts, declared imports.

* ``ruff check`` is clean (rules in ``pyproject.toml``);
* the import-linter contracts in ``pyproject.toml`` hold (layers with the benchmarks on top, Qt
  only in the GUI, the editor reaching plugin code only through the registry, nothing importing
  ``app.py``), imports inside functions included;
* every third-party package the product or the tests import is declared: the product's in the
  base dependencies, the tests' in the base dependencies or the ``test`` extra. A package that is
  only present on a developer's machine would otherwise pass here and fail for a new user. This
  also keeps any other Qt binding (PyQt5, PySide2...) out: only PySide6 is declared.
"""
from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OWN_PACKAGES = {"spatial", "editor", "plugins", "app", "tests", "benchmarks"}
PRODUCT_SOURCES = ("spatial", "editor", "plugins", "app.py")

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(cwd))  # check this tree's modules, not an installed copy
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False)


# --------------------------------------------------------------------------- lint
def test_ruff_finds_nothing():
    result = _run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."], ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


# --------------------------------------------------------------------------- architecture
def _lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    script = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return _run([sys.executable, "-c", script, "pyproject.toml", "--no-cache"], cwd)


def test_import_contracts_hold():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "broken" not in result.stdout.lower().replace("0 broken", "")


def test_a_broken_contract_is_reported(tmp_path):
    """The contracts check fails on a real violation (a check that cannot fail is a defect)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    for package in config["root_packages"]:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "editor" / "model").mkdir()
    (tmp_path / "editor" / "model" / "__init__.py").write_text("")
    (tmp_path / "editor" / "qt").mkdir()
    (tmp_path / "editor" / "qt" / "__init__.py").write_text("")
    (tmp_path / "editor" / "cli").mkdir()
    (tmp_path / "editor" / "cli" / "__init__.py").write_text("")
    (tmp_path / "editor" / "warmup.py").write_text("")
    (tmp_path / "spatial" / "geometry.py").write_text(textwrap.dedent("""
        def late():
            from editor.model import scene  # a lazy import is still an import
    """))
    (tmp_path / "editor" / "model" / "scene.py").write_text("import app  # the entry point\n")
    (tmp_path / "plugins" / "timing.py").write_text("import benchmarks  # the layer on top\n")
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    result = _lint_imports(tmp_path)
    assert result.returncode != 0
    assert "spatial.geometry -> editor.model" in result.stdout
    assert "editor.model.scene -> app" in result.stdout
    assert "plugins.timing -> benchmarks" in result.stdout


# --------------------------------------------------------------------------- declared imports
def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared(*extras: str) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    return {_normalise(re.match(r"[A-Za-z0-9._-]+", r).group(0)) for r in requirements}


def _guarded_by_import_error(node: ast.Try) -> bool:
    names = {"ImportError", "ModuleNotFoundError"}
    for handler in node.handlers:
        caught = handler.type
        kinds = caught.elts if isinstance(caught, ast.Tuple) else [caught]
        if any(isinstance(k, ast.Name) and k.id in names for k in kinds):
            return True
    return False


def third_party_imports(path: Path) -> dict[str, int]:
    """Top-level third-party packages ``path`` imports, with the first line of each.

    Imports inside ``try: ... except ImportError`` are optional by construction and not listed.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    optional: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and _guarded_by_import_error(node):
            optional |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if id(node) in optional:
            continue
        if isinstance(node, ast.Import):
            tops = [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            tops = [node.module.split(".")[0]]
        else:
            continue
        for top in tops:
            if top not in sys.stdlib_module_names and top not in OWN_PACKAGES:
                found.setdefault(top, node.lineno)
    return found


def undeclared(files: list[Path], declared: set[str]) -> list[str]:
    providers = importlib.metadata.packages_distributions()
    problems = []
    for path in files:
        for top, line in sorted(third_party_imports(path).items()):
            dists = {_normalise(d) for d in providers.get(top, [])} or {_normalise(top)}
            if not dists & declared:
                shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                where = f"{shown}:{line}"
                problems.append(f"{where} imports {top} (from {', '.join(sorted(dists))}), not declared")
    return problems


def _python_files(*roots: str) -> list[Path]:
    files: list[Path] = []
    for root in roots:
        target = ROOT / root
        files += [target] if target.is_file() else sorted(target.rglob("*.py"))
    return files


def test_the_product_imports_only_its_declared_dependencies():
    assert undeclared(_python_files(*PRODUCT_SOURCES), _declared()) == []


def test_the_tests_import_only_declared_test_dependencies():
    assert undeclared(_python_files("tests"), _declared("test")) == []


def test_an_undeclared_import_is_reported(tmp_path):
    """The declaration check fails on a real omission, in a function and behind a from-import."""
    sample = tmp_path / "sample.py"
    sample.write_text("import json\nimport numpy\n\ndef f():\n    from scipy.spatial import cKDTree\n"
                      "try:\n    import rtree\nexcept ImportError:\n    rtree = None\n")
    problems = undeclared([sample], _declared())
    assert len(problems) == 1 and "imports scipy" in problems[0] and ":5 " in problems[0]
