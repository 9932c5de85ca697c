"""The product runs on a plain install (no scipy): no compiled kernel may call BLAS.

numba implements ``@``, ``np.dot``, ``np.linalg.*`` and friends inside compiled code with the
BLAS/LAPACK table it takes from scipy; without scipy such a kernel fails when first compiled
("scipy 0.16+ is required for linear algebra"). scipy is a test and bench extra only.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PRODUCT = ("spatial", "editor", "plugins")
#: numpy functions numba lowers to BLAS or LAPACK
BLAS_FUNCTIONS = {"dot", "vdot", "matmul", "inner", "tensordot", "einsum", "kron"}


def _compiled_functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(
                "njit" in ast.unparse(d) or "numba.jit" in ast.unparse(d) for d in node.decorator_list):
            yield node


def _blas_uses(fn: ast.FunctionDef) -> list[str]:
    found = []
    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            found.append(f"{node.lineno}: '@'")
        elif isinstance(node, ast.Attribute):
            owner = ast.unparse(node.value)
            if (owner in ("np", "numpy") and node.attr in BLAS_FUNCTIONS) \
                    or owner in ("np.linalg", "numpy.linalg"):
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_compiled_kernel_calls_blas():
    offenders = []
    for package in PRODUCT:
        for path in sorted((REPO / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for fn in _compiled_functions(tree):
                offenders += [f"{path.relative_to(REPO)}:{use} in {fn.name}" for use in _blas_uses(fn)]
    assert not offenders, "compiled kernels calling BLAS (needs scipy):\n" + "\n".join(offenders)


def test_the_scan_sees_a_matrix_product():
    """The scan above must be able to fail."""
    source = textwrap.dedent("""
        @numba.njit(cache=True)
        def f(a, b):
            return a @ b + np.dot(a, b) + np.linalg.norm(a)
    """)
    fn = next(_compiled_functions(ast.parse(source)))
    assert len(_blas_uses(fn)) == 3


#: run app.py with every import of scipy refused, as on a machine that never installed it
_NO_SCIPY = textwrap.dedent("""
    import runpy, sys

    class RefuseScipy:
        def find_spec(self, name, path=None, target=None):
            if name == "scipy" or name.startswith("scipy."):
                raise ImportError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, RefuseScipy())
    sys.path.insert(0, sys.argv[1])
    sys.argv = ["app.py"] + sys.argv[2:]
    runpy.run_path(sys.path[0] + "/app.py", run_name="__main__")
""")


@pytest.mark.slow
def test_triangle_octree_stats_run_without_scipy(tmp_path):
    """docs/levels.md's mesh command, on a small mesh, compiled from an empty kernel cache."""
    mesh = tmp_path / "grid.obj"
    rows = [f"v {x * 16} {y * 16} {(x * y) % 5 * 8}" for y in range(12) for x in range(12)]
    for y in range(11):
        for x in range(11):
            a = y * 12 + x + 1
            rows.append(f"f {a} {a + 1} {a + 13} {a + 12}")
    mesh.write_text("\n".join(rows) + "\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    done = subprocess.run(
        [sys.executable, "-c", _NO_SCIPY, str(REPO), "stats", str(mesh), "--backend", "triangle_octree",
         "--probe-radius", "32", "--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr
    assert '"probe"' in done.stdout and '"triangle_octree"' in done.stdout
