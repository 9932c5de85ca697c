"""The document model is Qt-free: no PySide6, pyqtgraph or OpenGL import, direct or indirect."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

MODEL = Path(__file__).resolve().parents[2] / "editor" / "model"
FORBIDDEN = ("PySide6", "pyqtgraph", "OpenGL", "PyQt5", "PyQt6", "shiboken6")


def test_model_sources_import_no_gui_toolkit():
    offenders = []
    for path in sorted(MODEL.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in FORBIDDEN or name.startswith("editor.qt"):
                    offenders.append(f"{path.name}:{node.lineno}: {name}")
    assert offenders == []
    assert len(list(MODEL.glob("*.py"))) >= 8  # the scan really looked at the package


def test_importing_the_model_loads_no_gui_toolkit():
    code = ("import sys, editor.model, editor.model.native, editor.model.demo, editor.model.index_sync;"
            "from editor.model.demo import build_demo_scene; from editor.model import IndexSync;"
            "IndexSync(build_demo_scene());"
            f"bad = [m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=MODEL.parents[1])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
