"""numba gets scipy's BLAS table without ``scipy.linalg`` being imported (``editor.blas_table``),
and kernels that call BLAS still work."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from editor.blas_table import preload_blas_table
registered = preload_blas_table()
import numba.np.arraymath as arraymath  # what numba's first kernel load imports
package_imported = "scipy.linalg._basic" in sys.modules
import numba
import numpy as np

@numba.njit
def dot(a, b):
    return a @ b  # 1-D matmul: a BLAS call

print(registered, package_imported, arraymath._HAVE_BLAS, dot(np.arange(3.0), np.arange(3.0)))
"""


def test_numba_finds_blas_without_importing_scipy_linalg():
    pytest.importorskip("scipy")
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    registered, package_imported, have_blas, dot = out.stdout.split()
    assert registered == "True"
    assert package_imported == "False", "scipy.linalg's package was imported after all"
    assert have_blas == "True", "numba must still see BLAS"
    assert float(dot) == 5.0


def test_without_the_extension_module_nothing_is_registered(monkeypatch):
    import importlib.util

    from editor import blas_table
    monkeypatch.delitem(sys.modules, blas_table.BLAS_MODULE, raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert blas_table.preload_blas_table() is False
    assert blas_table.BLAS_MODULE not in sys.modules
