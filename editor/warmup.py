"""Compile the spatial kernels in a second process while the editor starts for the first time.

The editor's hot loops are numba kernels cached on disk. On a machine whose cache is empty (the
first start after installing, or after an upgrade changed the kernels) every kernel the first
frame needs is compiled before that frame: the brush solids for the level, then the spatial
index's build and node-table kernels — and right after the frame the pair finding of the
statistics panel. Compiling holds the interpreter, so one process does these one after another.

:class:`KernelWarmup` starts ``python -m editor.warmup BACKEND --part tools`` beside the editor
when the cache is cold. That process exercises the backend on a small generated scene — build
and node table first (then it prints ``ready``), then edits and queries — so numba compiles
those kernels and writes them to the shared on-disk cache while the editor reads its level.
Once it says ``ready`` a second process (``--part pairs``) compiles pair finding and the
simulation on the other core (:data:`PARTS`); before that, from the start, the other core
compiles the kernels of reading a level (``--part level``, :func:`warm_level`), which the
editor's loading thread waits for before it reads the level. The editor waits for ``ready`` before it builds its
own index (which then loads the kernels from the cache) and holds pair finding until the
warm-up has finished. With a warm cache nothing is started: :func:`cache_is_cold` is a few small
file reads.

The first switch to a backend whose kernels are not cached works the same way
(:class:`BackendPreparation`): numba's compiler is Python code that holds the interpreter lock
for hundreds of milliseconds at a time, so compiling on a worker thread still stalls the
window. A child process compiles instead; the worker thread waits for it on a pipe (without
the interpreter lock) and then loads the kernels from the disk cache, which takes tens of
milliseconds and gives the lock back every few milliseconds.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy and the backends load lazily: the warm-up process starts fast
    import numpy as np

    from spatial.contract import SpatialIndex

#: the line the warm-up process prints once the kernels of the first frame are in the cache
READY = "ready"
#: the line it prints next, once pair finding's kernels (the Statistics panel's) are there too
PAIRS_READY = "pairs ready"
#: the lines it prints after those, one per family of kernels the editor's tools call, in this
#: order: editing (moves, new and deleted objects, undo), the query tools (and picking by the
#: index), and the simulation (pair finding of awake objects, lifespans); see :data:`FAMILIES`
QUERIES_READY = "queries ready"
EDITS_READY = "edits ready"
SIMULATION_READY = "simulation ready"
#: the line the ``level`` process prints once the kernels of reading a level are cached (the
#: ``.map`` reader's pre-pass and the brush solids): the editor's loading thread waits for it
#: before it reads the level, so it loads them from the cache instead of compiling them
LEVEL_READY = "level ready"
#: kernel family -> the line the warm-up process prints once that family is cached, in the
#: order the process warms them (``editor.qt.kernel_readiness`` enables the tools of each).
#: Editing first: a click picks without kernels until ``pick`` is loaded
#: (``editor.model.picking``), so editing is what a first session waits for, and its compile
#: is the shorter (about 3.5 CPU-s for the octree, picking's about 12)
FAMILIES = {"edit": EDITS_READY, "pick": QUERIES_READY, "simulate": SIMULATION_READY}
#: how far a first switch to a backend has come (:class:`BackendPreparation`'s ``progress``)
#: when the process said :data:`READY`, :data:`PAIRS_READY` and when this process has loaded
#: those kernels: compiling the build and node table takes most of the time
PROGRESS = {READY: 0.6, PAIRS_READY: 0.8, "loaded": 0.9}
#: a first start warms in two processes, one per core: ``tools`` caches the first frame, then
#: what a user does first (editing, then picking's query tools), and once it has said
#: :data:`EDITS_READY` (a switch: :data:`READY`) the editor starts ``pairs``, which loads the
#: first frame from the cache and compiles pair finding (the Statistics panel's) and the
#: simulation. In one process pair finding came second and held picking and editing back by
#: its compile (about 16 s of CPU for the octree)
PARTS = {"tools": ("edit", "pick"), "pairs": ("simulate",)}
#: the part a first start runs at once beside ``tools``, on the other core: reading a level
#: (:func:`warm_level`). The editor's loading thread compiled those kernels itself before, and
#: numba's compiler held the interpreter for up to half a second at a time, which froze the
#: window while the level opened; this process has no window to freeze
LEVEL_PART = "level"
#: the part that prints each line the editor waits for, where one part alone prints it: a
#: wait for it ends when that part's process has ended without printing it
LINE_PART = {LEVEL_READY: LEVEL_PART}
#: the warm-up process runs at this lower CPU priority (``nice``): on a busy machine the
#: editor's own threads, the window's above all, come first. Not the :data:`LEVEL_PART`
#: process: its compile ran at the editor's priority (in the editor) before, and the level's
#: opening waits for it and for ``tools``' first frame. Niced too, the two shared what the
#: machine's other work left and the level came later (22.2 s at load 2.8-3.2, the level's
#: kernels cached at 21.1 s) than at the editor's priority (16.6 s at load 1.5-2.2, 11.2 s)
WARMUP_NICENESS = 10
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
        warm_statistics(warm_first_frame(backend)[0])
    else:
        warm(backend, announce=lambda line: None)
    _READY_HERE.add(backend)


class FamilyLoader:
    """Loads (or compiles) the kernel families of one backend into this process, one family
    at a time, on a small index of its own: :class:`editor.qt.kernel_readiness.KernelReadiness`
    calls :meth:`load` on its worker thread once the warm-up process has cached a family, so
    the window's thread then finds every kernel it calls ready. Touches no document."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        #: the small scene of :func:`warm_first_frame` (made on the first load)
        self._scene: tuple[SpatialIndex, np.ndarray, np.ndarray, np.ndarray] | None = None

    def load(self, family: str) -> None:
        """Run ``family`` (a key of :data:`FAMILIES`) on the small scene, or the first frame's
        kernels for ``"first_frame"``. Pair counting runs with the simulation family only:
        on a first start picking and editing are cached before pair finding (see
        :data:`PARTS`), and loading them must not wait for, or compile, pair finding."""
        if self._scene is None:
            self._scene = warm_first_frame(self.backend)
        if family == "simulate":
            warm_statistics(self._scene[0])
        if family != "first_frame":
            FAMILY_WARMERS[family](*self._scene)


def warmup_command(backend: str) -> list[str]:
    """The command line of a warm-up process for ``backend``: ``python -m editor.warmup``
    with the plugin folders this process was given (a folder plugin's backend compiles there
    too; ``$PARTITION_STUDIO_PLUGIN_PATH`` is inherited with the environment)."""
    from spatial.registry import plugin_dirs

    command = [sys.executable, "-m", "editor.warmup", backend, "--parent-pipe"]
    for folder in plugin_dirs():  # absolute: the process starts in the repository root
        command += ["--plugin-dir", os.path.abspath(folder)]
    return command


#: warm-up processes started by this process and maybe still running (see :func:`stop_all`)
_RUNNING: set[KernelWarmup] = set()
#: backend preparations whose kernels are still being compiled or loaded
_PREPARING: set[BackendPreparation] = set()


def stop_all() -> None:
    """Cancel every backend preparation and end every warm-up process this process started
    that still runs (the editor closes); what they cached so far stays cached."""
    for preparation in list(_PREPARING):
        preparation.cancel()
    for warmup in list(_RUNNING):
        warmup.stop()


class KernelWarmup:
    """A running warm-up (see the module docstring): the ``tools`` process of :data:`PARTS`
    at once, and the ``pairs`` process as soon as the first has said ``second_after``
    (:data:`READY` by default; one process doing everything with ``split=False``). The lines
    of both are heard as one.

    A first start passes :data:`EDITS_READY` (:meth:`start_if_cold`): until editing is
    cached the ``tools`` process has the second core to itself, so a level's editing is
    enabled sooner, and pair finding (the Statistics panel's, Play's) follows a few seconds
    later. A first switch keeps :data:`READY`: its new tree waits for pair finding.

    With ``level`` (a first start) a third process, :data:`LEVEL_PART`, starts at once too
    and caches the kernels of reading a level (:meth:`wait_level_kernels`).

    Raises ``OSError`` when the first process cannot be started.
    """

    def __init__(self, backend: str, split: bool = True, second_after: str = READY,
                 level: bool = False):
        self.backend = backend
        self.second_after = second_after
        self.ready = False
        self.said: set[str] = set()  # the lines the processes have printed so far
        self._heard = threading.Condition()
        self._open_outputs = 0  # outputs still read; a second process may still start
        self._ended = False  # every output has ended and no process will start any more
        self._ended_parts: set[str | None] = set()  # the parts whose output has ended
        self._stopped = False
        self.second: subprocess.Popen | None = None  # the ``pairs`` process, once started
        #: the :data:`LEVEL_PART` process, when one was started
        self.level_process: subprocess.Popen | None = None
        self._readers: list[threading.Thread] = []
        self.process = self._start("tools" if split else None)
        _RUNNING.add(self)
        if level:
            try:
                self.level_process = self._start(LEVEL_PART)
            except OSError:  # no line comes: the editor reads its level as without it
                with self._heard:
                    self._ended_parts.add(LEVEL_PART)

    def _start(self, part: str | None) -> subprocess.Popen:
        """Start one warm-up process and a reader for its lines (any number of threads may
        wait for them)."""
        command = warmup_command(self.backend) + (["--part", part] if part else [])
        # its stdin is a pipe that only this process holds open: when this process ends,
        # however it ends, the pipe closes and the warm-up process exits (see _watch_parent)
        process = subprocess.Popen(command, cwd=str(ROOT), stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        with self._heard:
            self._open_outputs += 1
        reader = threading.Thread(target=self._read_lines, args=(process, part),
                                  name=f"warmup-{self.backend}-{part or 'all'}-output",
                                  daemon=True)
        self._readers.append(reader)
        reader.start()
        return process

    def _read_lines(self, process: subprocess.Popen, part: str | None) -> None:
        starts_second = part == "tools"
        stream = process.stdout
        assert stream is not None  # started with stdout=PIPE
        try:
            for text in stream:  # a blocking read: the GIL is free meanwhile
                line = text.strip()
                if starts_second and line == self.second_after and self.second is None:
                    self._start_second()  # before the line is heard: _ended cannot slip in
                with self._heard:
                    self.said.add(line)
                    self._heard.notify_all()
        except (OSError, ValueError):  # the pipe was closed under us: the process is ending
            pass
        with self._heard:
            self._open_outputs -= 1
            self._ended = self._open_outputs == 0
            self._ended_parts.add(part)
            self._heard.notify_all()

    def _start_second(self) -> None:
        with self._heard:
            if self._stopped:
                return
        try:
            self.second = self._start("pairs")
        except OSError:  # its lines never come: the editor compiles pair finding itself
            return
        with self._heard:
            stopped = self._stopped
        if stopped:  # stop() ran while it started: end it too
            self.stop()

    @classmethod
    def start_if_cold(cls, backend: str) -> KernelWarmup | None:
        """Start a first start's warm-up for ``backend`` when its kernels are not cached (the
        ``pairs`` process once editing is cached), else ``None``."""
        return cls(backend, second_after=EDITS_READY, level=True) if cache_is_cold(backend) \
            else None

    def wait_ready(self, timeout: float = 600.0, line: str = READY) -> bool:
        """Block until a process has printed ``line`` — :data:`READY`, the first frame's
        kernels are cached; :data:`PAIRS_READY`, pair finding's; a line of :data:`FAMILIES`,
        that family's — or every process ended, or ``timeout`` seconds went by; returns
        whether it was printed. Later calls return at once."""
        part = LINE_PART.get(line)
        with self._heard:
            self._heard.wait_for(lambda: line in self.said or self._ended
                                 or (part is not None and part in self._ended_parts), timeout)
            self.ready = READY in self.said
            return line in self.said

    def wait_level_kernels(self, timeout: float = 600.0) -> bool:
        """Block (without the interpreter lock) until the :data:`LEVEL_PART` process has
        cached the kernels of reading a level, or ended, or ``timeout`` seconds went by;
        returns whether they are cached. At once when no such process was started."""
        if self.level_process is None:
            return False
        return self.wait_ready(timeout, LEVEL_READY)

    def _processes(self) -> list[subprocess.Popen]:
        return [p for p in (self.process, self.second, self.level_process) if p is not None]

    def wait_finished(self, timeout: float | None = None) -> bool:
        """Block until the processes have exited; returns whether they cached every kernel
        they warm (exit status 0). Processes still running after ``timeout`` are stopped."""
        try:
            code = self.process.wait(timeout)
            self._readers[0].join(timeout)  # it starts the second process, if it ever will
            codes = [code] + [p.wait(timeout) for p in self._processes()[1:]]
        except subprocess.TimeoutExpired:
            self.stop()
            return False
        _RUNNING.discard(self)
        return all(c == 0 for c in codes)

    def finished(self) -> bool:
        """Whether every process has exited (every kernel they warm is cached)."""
        done = self.process.poll() is not None and not self._readers[0].is_alive() and \
            all(p.poll() is not None for p in self._processes())
        if done:
            _RUNNING.discard(self)
        return done

    def stop(self) -> None:
        """End the processes if they still run (closing the editor early)."""
        with self._heard:
            self._stopped = True
        for process in self._processes():
            if process.poll() is None:
                process.kill()
                process.wait()
            if process.stdin is not None:
                process.stdin.close()
        _RUNNING.discard(self)


class BackendPreparation:
    """The first use of a backend whose kernels are not cached, prepared off the GUI thread.

    :meth:`first_frame` runs on the rebuild's worker thread before the real build: it loads
    the kernels of the tree still on screen (a kernel's first call in a process takes numba's
    process-wide compiler lock, even to load it from the cache, and the GUI thread keeps
    calling that tree's), then starts ``python -m editor.warmup BACKEND``, waits for its
    ``ready`` and loads the first frame's kernels from the disk cache. :meth:`rest` runs on a
    thread of its own once the new tree is on screen: it waits for the process to finish and
    loads the remaining kernels (edits, queries) the same way.

    If the process cannot start or ends without caching the kernels (a crash, killed), this
    process compiles them itself as it did before the child process existed, and
    ``note(text)`` is called with a line saying so (for the status bar).

    Parameters
    ----------
    backend : str
        The backend to prepare.
    current : str, optional
        The backend of the tree on screen, whose kernels are loaded first.
    note : callable, optional
        ``note(text)``, called from the worker thread when the compile falls back to this
        process.
    progress : callable, optional
        ``progress(fraction)``, called from the worker thread as the steps of
        :data:`PROGRESS` are reached.
    """

    def __init__(self, backend: str, current: str | None = None, note=None,
                 progress=None) -> None:
        self.backend = backend
        self.current = current
        self.note = note or (lambda text: None)
        self.progress = progress or (lambda fraction: None)
        self.warmup: KernelWarmup | None = None
        self.fell_back = False
        self._cancelled = False
        _PREPARING.add(self)

    def first_frame(self) -> None:
        """Compile (elsewhere) and load the kernels a new tree on screen needs."""
        if self.current and self.current != self.backend:
            warm_in_process(self.current, first_frame_only=True)
        try:
            self.warmup = KernelWarmup(self.backend)
        except OSError as exc:
            self._fall_back(f"cannot start the compile process: {exc}")
        else:
            if self._cancelled:  # cancelled while the process started
                self.warmup.stop()
                return
            # a new tree on screen needs pair finding too (the Statistics panel counts pairs
            # at once): wait until those kernels are cached as well
            if self.warmup.wait_ready():
                self.progress(PROGRESS[READY])
            if not self.warmup.wait_ready(line=PAIRS_READY):
                self._fall_back(self._failure())
        if not self._cancelled:
            self.progress(PROGRESS[PAIRS_READY])
            warm_in_process(self.backend, first_frame_only=True)
            self.progress(PROGRESS["loaded"])

    def rest(self) -> None:
        """Load (or, after a failure, compile) the backend's remaining kernels."""
        try:
            if self._cancelled:
                return
            if self.warmup is not None and not self.fell_back and not self.warmup.wait_finished():
                self._fall_back(self._failure())
            if not self._cancelled:
                warm_in_process(self.backend)
        finally:
            _PREPARING.discard(self)

    def cancel(self) -> None:
        """Stop the compile process; what it cached so far stays cached."""
        self._cancelled = True
        _PREPARING.discard(self)
        if self.warmup is not None:
            self.warmup.stop()

    def _failure(self) -> str:
        """Why the compile process gave no kernels (it is stopped if it still runs)."""
        warmup = self.warmup
        if warmup is None:
            return "the compile process was not started"
        try:  # its output has ended: so is the process, or about to be
            code = warmup.process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            warmup.stop()
            return "the compile process did not finish in time"
        if code < 0:
            return f"the compile process was stopped by signal {-code}"
        return f"the compile process failed (exit status {code})"

    def _fall_back(self, why: str) -> None:
        self.fell_back = True
        if not self._cancelled:
            self.note(f"Preparing the {self.backend} — {why}: compiling its kernels in the "
                      "editor's own process (the window may pause)…")


def warm_first_frame(backend: str) -> tuple[SpatialIndex, np.ndarray, np.ndarray, np.ndarray]:
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
    # the memory check of a cell tree (quadtree, triangle octree) counts grid cells with a
    # kernel that a small scene's build never reaches, and a switch runs that check on the
    # window's thread: every backend's first frame loads it, so no switch compiles it there
    from spatial.memory_budget import cells_met_on_grid
    cells_met_on_grid(lo, hi, lo.min(axis=0), 10.0)
    return index, ids, lo, hi


def warm_statistics(index) -> None:
    """Run on ``index`` what the Statistics panel runs on a new tree on a worker thread (its
    pair count): the warm-up process says :data:`PAIRS_READY` after it, and a first switch
    loads it before the tree appears."""
    index.count_pairs("all")


def warm_queries(index, ids, lo, hi) -> None:
    """Picking and the query tools: boxes, points, spheres, rays (one and batched), frusta."""
    import numpy as np

    from spatial.geometry import frustum_planes_from_camera

    centre = (lo[0] + hi[0]) / 2
    index.query_box(lo[0], hi[0])
    index.query_point(centre)
    index.query_sphere(centre, 5.0)
    index.query_ray(lo[0] - 10.0, np.array([1.0, 0.5, 0.25]))
    index.query_boxes(lo[:8], hi[:8])
    index.query_rays(lo[:8] - 10.0, np.tile([1.0, 0.5, 0.25], (8, 1)))
    index.query_frustum(frustum_planes_from_camera((50.0, 50.0, -50.0), (0.0, 0.0, 1.0),
                                                   (0.0, 1.0, 0.0), 60.0, 1.5, 1.0, 500.0))
    index.query_box(lo[0], hi[0], trace=True)  # the node inspector's and query layer's rows


def warm_edits(index, ids, lo, hi) -> None:
    """Editing: one object moved (a nudge, a drag), several moved, removed and added back."""
    index.update(ids[:1], lo[:1] + 1.0, hi[:1] + 1.0)
    index.update(ids[:8], lo[:8] + 1.0, hi[:8] + 1.0)
    index.remove(ids[8:16])
    index.insert(ids[8:16], lo[8:16], hi[8:16])
    index.remove(ids[16:17])
    index.insert(ids[16:17], lo[16:17], hi[16:17])
    index.nodes()


def warm_simulation(index, ids, lo, hi) -> None:
    """The simulation's frame: objects moved, lifespans stepped, pairs of awake objects."""
    import numpy as np

    index.pairs("all")  # the overlay's pair-test column
    index.pairs("active")
    index.set_awake(ids[:4], np.zeros(4, dtype=bool))
    index.set_awake(ids[:4], np.ones(4, dtype=bool))
    index.update(ids[:8], lo[:8] + 2.0, hi[:8] + 2.0)
    index.step(1)
    index.pairs("active")
    index.count_pairs("active")
    index.pairs("all")


#: kernel family -> what exercises it on the small scene of :func:`warm_first_frame`
FAMILY_WARMERS = {"pick": warm_queries, "edit": warm_edits, "simulate": warm_simulation}


def warm(backend: str, announce=print, part: str | None = None) -> None:
    """Run every kernel path of ``backend`` the editor uses, on a small scene; ``announce``
    gets :data:`READY` once the first frame's kernels (build, node table, stats) are compiled,
    :data:`PAIRS_READY` once pair finding's are, then the line of each of :data:`FAMILIES`
    once that family's are. With ``part`` (a key of :data:`PARTS`) only that part's families:
    ``tools`` announces :data:`READY`, then editing's and picking's lines; ``pairs`` (run once
    the first frame is cached) pair finding's and the simulation's; :data:`LEVEL_PART` reads a
    level (:func:`warm_level`) and announces :data:`LEVEL_READY`, no backend's kernels."""
    if part == LEVEL_PART:
        warm_level()
        announce(LEVEL_READY)
        return
    index, ids, lo, hi = warm_first_frame(backend)
    if part != "pairs":
        announce(READY)
    if part != "tools":
        warm_statistics(index)
        announce(PAIRS_READY)
    for family, line in FAMILIES.items():
        if part is None or family in PARTS[part]:
            FAMILY_WARMERS[family](index, ids, lo, hi)
            announce(line)
    # not validate(): the editor never calls it, and compiling it cost 1.3-1.6 s CPU per
    # backend before the warm-up could finish and release pair finding


def warm_level() -> None:
    """Open a level as the editor's loading thread does: the demo level (its brush solids),
    then the same level written by the editor's own ``.map`` writer and read back (the
    ``.map`` reader's compiled pre-pass). The kernels and signatures are the ones real levels
    use (Standard and Valve 220 faces, ASCII text); a file with non-ASCII characters reads its
    characters as 32-bit codes, a signature of its own that is left to the editor."""
    import tempfile

    from editor.model.loading import open_level, save_level
    from spatial import outline_raster

    outline_raster.load_kernels()  # the loading thread loads them too (the bodies' outlines)
    demo = open_level(None).document
    with tempfile.TemporaryDirectory(prefix="partition-studio-warm-up-") as folder:
        path = os.path.join(folder, "level.map")
        save_level(demo, path)
        open_level(path)


def _serialise_cache_writes() -> None:
    """Make this process's writes to numba's disk cache exclusive among warm-up processes.

    numba adds an overload to a function's cache index by reading the index, adding the entry
    and writing it back, then writing the data file it named: two processes caching two
    overloads of one function at the same moment (a shared helper such as
    ``spatial.kernels.grow``) could lose an entry or pair one's index entry with the other's
    code. The two processes of :data:`PARTS` take one file lock around each such write."""
    try:
        import fcntl
        import tempfile

        from numba.core.caching import IndexDataCacheFile
    except ImportError:  # no fcntl (Windows) or numba moved it: writes are not serialised
        return
    path = os.path.join(tempfile.gettempdir(), f"partition-studio-kernel-cache-{os.getuid()}.lock")
    save = IndexDataCacheFile.save

    def locked_save(self, key, data):
        with open(path, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                return save(self, key, data)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    # a method replaced on purpose, which mypy refuses on principle
    IndexDataCacheFile.save = locked_save  # type: ignore[method-assign]


def _watch_parent() -> None:
    """End this process when the editor that started it ends, however it ends (closed,
    crashed, killed): a thread reads stdin, a pipe only the editor holds open, and exits when
    the pipe closes, which the operating system does when the editor's process ends.

    Not ``PR_SET_PDEATHSIG``: Linux sends that signal when the *thread* that started the
    child ends, and a backend's first switch starts its process from a worker thread that
    ends long before the compile does. Only with ``--parent-pipe`` (the editor passes it):
    run by hand, stdin may well be closed from the start."""
    def watch() -> None:
        try:  # os.read, not sys.stdin: a buffered reader's lock held by this daemon thread
            while os.read(fd, 4096):  # would abort the interpreter's normal exit
                pass
        except OSError:
            pass
        os._exit(0)  # what is cached so far stays cached; numba writes each file atomically

    if sys.stdin is not None:
        fd = sys.stdin.fileno()
        threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main(argv: list[str]) -> int:
    """``python -m editor.warmup [BACKEND] [--plugin-dir DIR]...``"""
    import argparse

    from spatial.registry import add_plugin_dir

    parser = argparse.ArgumentParser(prog="python -m editor.warmup")
    parser.add_argument("backend", nargs="?", default="octree")
    parser.add_argument("--plugin-dir", action="append", default=[])
    parser.add_argument("--parent-pipe", action="store_true",
                        help="exit when stdin closes (the editor that started this ended)")
    parser.add_argument("--part", choices=sorted(PARTS) + [LEVEL_PART],
                        help="warm only this part's kernel families (default: every family)")
    args = parser.parse_args(argv)
    try:
        if args.part != LEVEL_PART:
            os.nice(WARMUP_NICENESS)
    except (AttributeError, OSError):  # no nice() on this platform: run at normal priority
        pass
    if args.parent_pipe:
        _watch_parent()
    for folder in args.plugin_dir:
        add_plugin_dir(folder)

    def announce(line: str) -> None:
        print(line, flush=True)

    _serialise_cache_writes()
    warm(args.backend, announce, args.part)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
