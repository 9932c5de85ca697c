"""Compile the spatial kernels in a second process while the editor starts for the first time.

The editor's hot loops are numba kernels cached on disk. On a machine whose cache is empty (the
first start after installing, or after an upgrade changed the kernels) every kernel the first
frame needs is compiled before that frame: the brush solids for the level, then the spatial
index's build and node-table kernels — and right after the frame the pair finding of the
statistics panel. Compiling holds the interpreter, so one process does these one after another.

:class:`KernelWarmup` starts ``python -m editor.warmup BACKEND`` beside the editor when the
cache is cold. That process exercises the backend on a small generated scene — build and node
table first (then it prints ``ready``), then queries, edits and pair finding — so numba compiles
those kernels and writes them to the shared on-disk cache, on the second core, while the editor
compiles the brush kernels for its level. The editor waits for ``ready`` before it builds its
own index (which then loads the kernels from the cache) and holds pair finding until the
warm-up has finished. With a warm cache nothing is started: :func:`cache_is_cold` is a few small
file reads.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

#: the line the warm-up process prints once the kernels of the first frame are in the cache
READY = "ready"
#: the repository root, from which ``-m editor.warmup`` is importable
ROOT = Path(__file__).resolve().parents[1]


def _is_cached_kernel(value) -> bool:
    return getattr(value, "_cache", None) is not None and hasattr(value, "py_func")


def _backend_kernels(backend: str) -> list:
    """The numba dispatchers with a disk cache that ``backend``'s modules define or import
    (its own module, its package's modules, and kernel modules they import)."""
    from spatial.registry import default_registry
    cls = default_registry().backend(backend)
    package = cls.__module__.rsplit(".", 1)[0] if cls.__module__.count(".") > 1 else cls.__module__
    modules = [m for n, m in list(sys.modules.items())
               if m is not None and (n == package or n.startswith(package + "."))]
    kernels = {}
    for module in modules:
        for value in list(vars(module).values()):
            inner = [value] if _is_cached_kernel(value) else (
                list(vars(value).values()) if type(value) is type(sys)
                and value.__name__.startswith(("plugins.", "spatial.kernels")) else [])
            for item in inner:
                if _is_cached_kernel(item):
                    kernels[id(item)] = item
    return list(kernels.values())


def _has_valid_index(dispatcher) -> bool:
    """numba's disk-cache index of the function exists and matches its source file."""
    return bool(dispatcher._cache._cache_file._load_index())


def cache_is_cold(backend: str) -> bool:
    """Whether the editor would compile ``backend`` from scratch: none of the kernels of its
    own package has a valid disk-cache index (checked against the source file's stamp, as
    numba itself does; the shared ``spatial.kernels`` may be cached by another backend
    already), or the brush kernel has none.

    A partly stale cache (a few kernels changed) counts as warm: the editor compiles those few
    itself. If numba's cache internals cannot be read the cache counts as warm too, and the
    editor starts as it would without warm-up.
    """
    try:
        from spatial import brush
        if not _has_valid_index(brush._build_brushes):
            return True
        kernels = _backend_kernels(backend)
        # the shared kernels (spatial.kernels) may be cached by another backend already:
        # what tells is the backend's own package
        own = [k for k in kernels if not k.py_func.__module__.startswith("spatial.")] or kernels
        return bool(own) and not any(_has_valid_index(k) for k in own)
    except Exception:  # numba internals differ: behave as without warm-up
        return False


#: backends this process need not warm up: found cached on disk, or warmed here already
_READY_HERE: set[str] = set()


def needs_warm_up(backend: str) -> bool:
    """Whether using ``backend`` in this process would compile its kernels from scratch (its
    disk cache is cold and this process has not warmed it yet): the editor then compiles them
    on a worker thread with :func:`warm_in_process` before it builds the real index."""
    if backend in _READY_HERE:
        return False
    if cache_is_cold(backend):
        return True
    _READY_HERE.add(backend)
    return False


def warm_in_process(backend: str, first_frame_only: bool = False) -> None:
    """Compile (or load from the disk cache) the kernels of ``backend`` in this process, on a
    small scene, so the index built next measures its build alone, never the compiler. With
    ``first_frame_only`` just the build, node table, statistics and pair finding (what a new
    tree on screen and the Statistics panel need); else every kernel path. Safe on a worker
    thread: it touches no document and no Qt object."""
    if first_frame_only:
        index = warm_first_frame(backend)[0]
        index.count_pairs("all")  # what the Statistics panel runs
    else:
        warm(backend, announce=lambda line: None)
    _READY_HERE.add(backend)


class KernelWarmup:
    """A running warm-up process (see the module docstring)."""

    def __init__(self, backend: str):
        self.backend = backend
        self.ready = False
        self.process = subprocess.Popen(
            [sys.executable, "-m", "editor.warmup", backend], cwd=str(ROOT),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    @classmethod
    def start_if_cold(cls, backend: str) -> KernelWarmup | None:
        """Start a warm-up for ``backend`` when its kernels are not cached, else ``None``."""
        return cls(backend) if cache_is_cold(backend) else None

    def wait_ready(self, timeout: float = 600.0) -> bool:
        """Block until the first frame's kernels are cached (or the process ended or timed
        out); returns whether they are. Later calls return at once."""
        if self.ready or self.process.stdout is None:
            return self.ready
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:  # the process ended without saying ready: compile in place
                break
            if line.strip() == READY:
                self.ready = True
                break
        return self.ready

    def finished(self) -> bool:
        """Whether the process has exited (every kernel it warms is cached)."""
        return self.process.poll() is not None

    def stop(self) -> None:
        """End the process if it still runs (closing the editor early)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def warm_first_frame(backend: str):
    """Build ``backend`` on a small generated scene and fetch its node table and statistics:
    the kernels of a first frame, compiled or loaded from the disk cache into this process.
    Returns ``(index, ids, lo, hi)`` for more warm-up on the same scene."""
    import numpy as np

    from spatial.registry import default_registry
    from spatial.scenegen import random_boxes

    ids, lo, hi = random_boxes(64, seed=1, world=100.0)
    index = default_registry().backend(backend)()
    index.build(ids, lo, hi, dynamic=np.arange(64) % 2 == 0)
    index.nodes()
    index.stats()
    return index, ids, lo, hi


def warm(backend: str, announce=print) -> None:
    """Run every kernel path of ``backend`` the editor uses, on a small scene; ``announce``
    gets :data:`READY` once the first frame's kernels (build, node table, stats) are compiled."""
    import numpy as np

    index, ids, lo, hi = warm_first_frame(backend)
    announce(READY)
    centre = (lo[0] + hi[0]) / 2
    index.query_box(lo[0], hi[0])
    index.query_point(centre)
    index.query_sphere(centre, 5.0)
    index.query_ray(lo[0] - 10.0, np.array([1.0, 0.5, 0.25]))
    index.query_boxes(lo[:8], hi[:8])
    index.query_rays(lo[:8] - 10.0, np.tile([1.0, 0.5, 0.25], (8, 1)))
    from spatial.geometry import frustum_planes_from_camera
    index.query_frustum(frustum_planes_from_camera((50.0, 50.0, -50.0), (0.0, 0.0, 1.0),
                                                   (0.0, 1.0, 0.0), 60.0, 1.5, 1.0, 500.0))
    index.pairs("all")
    index.count_pairs("all")
    index.pairs("active")
    index.update(ids[:8], lo[:8] + 1.0, hi[:8] + 1.0)
    index.step(1)
    index.remove(ids[8:16])
    index.insert(ids[8:16], lo[8:16], hi[8:16])
    index.pairs("all")
    # not validate(): the editor never calls it, and compiling it cost 1.3-1.6 s CPU per
    # backend before the warm-up could finish and release pair finding


def main(argv: list[str]) -> int:
    backend = argv[0] if argv else "octree"

    def announce(line: str) -> None:
        print(line, flush=True)

    warm(backend, announce)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
