"""Give numba scipy's BLAS function table without importing all of ``scipy.linalg``.

Loading any kernel from numba's disk cache first initialises numba's CPU target, which imports
``numba.np.arraymath``; that module checks at import whether BLAS is available by importing
``scipy.linalg.cython_blas`` when scipy is installed. Python imports a submodule's package
first, and ``scipy.linalg``'s ``__init__`` imports most of ``scipy.linalg`` (and with it
``scipy.sparse``): about 0.27 s of a 1.5 s start-up for a table numba reads function pointers
from. :func:`preload_blas_table` loads the ``cython_blas`` extension module by itself and
registers it under its full name, so the check (and every later use by kernels that call BLAS:
numba looks the table up by that module name) finds it without running the package's
``__init__``. ``import scipy.linalg`` later works as usual and reuses the same module.

Without scipy nothing happens (numba then runs without BLAS, as it would anyway). If scipy's
layout differs from what this expects, nothing happens either and the ordinary import runs.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

from spatial.registry import import_from_spec

#: the module numba imports to find BLAS
BLAS_MODULE = "scipy.linalg.cython_blas"


def preload_blas_table() -> bool:
    """Register scipy's ``cython_blas`` extension module without importing ``scipy.linalg``;
    returns whether it is registered now (False without scipy, or if it could not be loaded
    by itself: the ordinary import then runs when numba asks)."""
    if BLAS_MODULE in sys.modules:
        return True
    try:
        scipy_spec = importlib.util.find_spec("scipy")
        if scipy_spec is None or not scipy_spec.submodule_search_locations:
            return False
        folder = os.path.join(list(scipy_spec.submodule_search_locations)[0], "linalg")
        finder = importlib.machinery.FileFinder(
            folder, (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES))
        spec = finder.find_spec(BLAS_MODULE)
        if spec is None:
            return False
        import_from_spec(spec)
    except Exception:  # another scipy layout: leave it to the ordinary import
        return False
    return True
