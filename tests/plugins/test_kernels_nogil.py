"""Compiled kernels let go of the interpreter lock while they run.

The editor reads levels and builds their indexes on a loading thread: a kernel that kept the
lock froze the window for as long as it ran (the octree's build of a 2,000,000-triangle mesh:
1.1 s). Every kernel the backends call from Python touches no Python object, so each is
compiled with ``nogil=True``; these tests check the flag on every entry point and that another
thread really runs while such a kernel does.
"""
from __future__ import annotations

import importlib
import sys
import threading

import numba
import numpy as np
import pytest

#: modules whose kernels run on the loading thread (index builds, node tables, pair counts)
KERNEL_MODULES = (
    "spatial.kernels",
    "plugins.octree.build_kernels",
    "plugins.octree.packed_kernels",
    "plugins.octree.pair_kernels",
    "plugins.octree.query_kernels",
    "plugins.octree.tree_kernels",
    "plugins.quadtree.kernels",
    "plugins.bvh.pair_kernels",
    "plugins.bvh.tree_kernels",
    "plugins.kdtree.kernels",
)


def _entry_points(module_name: str):
    """The module's own compiled functions that Python can call (inlined helpers exist only
    inside other kernels, where the flag means nothing)."""
    module = importlib.import_module(module_name)
    for name, value in vars(module).items():
        if isinstance(value, numba.core.registry.CPUDispatcher) and \
                value.py_func.__module__ == module_name and \
                value.targetoptions.get("inline", "never") == "never":
            yield name, value


@pytest.mark.parametrize("module_name", KERNEL_MODULES)
def test_every_kernel_entry_point_is_compiled_without_the_lock(module_name):
    kernels = dict(_entry_points(module_name))
    assert kernels, f"no kernels found in {module_name}"
    holding = sorted(name for name, kernel in kernels.items() if not kernel.targetoptions.get("nogil"))
    assert not holding, f"{module_name}: compiled holding the interpreter lock: {holding}"


def _binary_tree(levels: int):
    n = 2 ** levels - 1
    nodes = np.arange(n, dtype=np.int64)
    left = np.where(2 * nodes + 1 < n, 2 * nodes + 1, -1)
    right = np.where(2 * nodes + 2 < n, 2 * nodes + 2, -1)
    return left, right


def _octree_order_args():
    from spatial.registry import default_registry
    rng = np.random.default_rng(3)
    lo = rng.uniform(0, 1000, size=(400_000, 3))
    hi = lo + rng.uniform(1, 10, size=lo.shape)
    index = default_registry().backend("octree")()
    ids = np.arange(200, dtype=np.int64)
    index.build(ids, lo[:200], hi[:200])
    slots = np.arange(len(lo), dtype=np.int64)
    return index._cf, lo, hi, slots


def _kernel_calls():
    from plugins.kdtree import kernels as kd
    from plugins.octree import tree_kernels
    from spatial import kernels
    left, right = _binary_tree(21)
    parents = (np.arange(4_000_000, dtype=np.int64) - 1) // 2
    values = np.ones(4_000_000, dtype=np.int64)
    return {
        "spatial preorder": (kernels.preorder, (0, left, right)),
        "kdtree subtree sums": (kd.subtree_sums, (parents, values)),
        "octree Morton codes": (tree_kernels.morton_codes, _octree_order_args()),
    }


@pytest.mark.parametrize("name", ["spatial preorder", "kdtree subtree sums", "octree Morton codes"])
def test_another_thread_runs_while_a_kernel_runs(name):
    """With the interpreter's switch interval made huge, a thread holding the lock keeps it
    until it blocks or lets go itself: the main thread, woken just before the worker calls the
    kernel, gets to run before the kernel returns only if the kernel let go of the lock."""
    kernel, args = _kernel_calls()[name]
    kernel(*args)  # loaded (or compiled) now, not inside the measured call
    entered, done = threading.Event(), []

    def work():
        entered.set()
        kernel(*args)
        done.append(True)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        worker = threading.Thread(target=work)
        worker.start()
        entered.wait()
        ran_during_kernel = not done  # this line runs as soon as this thread has the lock
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert done
    assert ran_during_kernel, f"{name}: the main thread waited for the whole kernel"
