"""Search a backend's tunable parameters for the lowest cost on a workload.

The search (:func:`tune`) explores the ``Params`` fields declared ``tunable`` within their
bounds, measuring every candidate with :func:`spatial.cost.measure`:

1. **defaults** — trial 0 is always the backend's defaults (with any ``fixed`` values), so the
   best result is never worse than the defaults under the same cost model and seed (ties keep
   the earlier trial);
2. **start** — a seeded Latin-hypercube sample of the space (``max(6, 2·dims)`` points, at
   most 16);
3. **refine** — a coordinate pattern search from the best point: each dimension in turn is
   stepped up and down (every other value for a choice); the first improvement moves there;
   a sweep without improvement halves the step; below 1/64 of the range the search restarts
   from a fresh seeded sample. It runs until the budget (less a share kept for step 4), the
   trial limit or a cancel;
4. **settle** — each value of the best trial that differs from the defaults is put back to its
   default, one at a time, and kept there when the cost stays within ``tie_tolerance``.

Ties are then resolved the way a person would (:func:`resolve_ties`): among trials within
``tie_tolerance`` of the cheapest, the one changing the fewest parameters from the defaults
(then the nearest to them) is ``best``, and ``plateau`` reports the parameters whose values made
no difference ("any max_depth >= 7 gives the same cost").

Search space: numbers are mapped to ``[0, 1]``, logarithmically when the field says
``scale="log"``. Fields with unit ``"units"`` (lengths) are searched between a quarter of the
median object size and half the world extent (clipped to their bounds); other numbers whose
declared range is enormous compared with their default (``hi/lo > 1e4`` for log fields, a span
over 1000 times the default for linear ones) are searched within ×/÷64 of the default. Whole
numbers are rounded; a rounded point already measured is not measured again.

Determinism: the proposals depend only on the seed and on the costs of earlier trials. With a
work-counter objective (the default weights) the same seed and the same number of trials give
the same trials and the same best parameters; only *how many* trials fit in a time budget
depends on the machine (pass ``max_trials`` for an exact repeat). A trial cut short by the
budget is recorded as ``timeout`` and never chosen.

Bounding time: ``budget_s`` is a wall-clock budget for the whole search. Compiling a
backend's kernels the first time is not part of it: :func:`warm_up` runs every code path once
on a few objects before the clock starts (kernels are cached on disk afterwards; the time is
reported as ``warmup_s``). With
``isolation="process"`` every trial runs in a forked child process which is killed when the
budget runs out (overrun: the kill latency, about 50 ms), so even a build that cannot be
interrupted (a BSP on a big level) never blows the budget. With ``isolation="none"`` trials run
in the calling thread and stop between measurement stages (build, each frame, rays, each
frustum): an overrun is then bounded by the longest single stage. Before each new trial the
search also stops if less than half the median trial time is left, and a trial taking more
than ten times as long as the defaults' (at least a second) is abandoned as ``timeout`` — such
shapes (a quadtree splitting the same big boxes to its depth limit, say) would otherwise eat
the whole budget. Both limits read the clock, so on a machine so loaded that trials approach
them, a repeat may differ.

API for a GUI (Qt-free)
-----------------------
Run :func:`tune` in a worker thread with ``isolation="none"``::

    token = CancelToken()
    def on_trial(progress: TuneProgress):      # called after every trial, in the worker
        emit(progress.trial.index, progress.best.cost, [t.as_dict() for t in progress.trials])
    result = tune(cls, workload, budget_s=30, seed=0, cancel=token, on_trial=on_trial)
    # from the GUI thread: token.cancel()  -> the search stops before the next trial / stage

``result.best`` / ``result.defaults`` are :class:`Trial` records (params, cost, full
:class:`~spatial.cost.CostReport` as a dict); ``result.trials`` lists every trial;
``result.cancelled`` and ``result.stop_reason`` say why it ended. Nothing is applied anywhere:
the caller decides what to do with ``result.best.params``.

:func:`compare_backends` tunes several backends in one budget (``--all-backends``): cheapest
first (a small probe decides the order), each taking an equal share of what is left, and
reports those whose defaults could not be measured within their share.
"""
from __future__ import annotations

import dataclasses
import math
import multiprocessing
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .cost import CostWeights, TrialTimeout, Workload, measure
from .errors import ParamError, PartitionStudioError
from .memory_budget import MemoryBudgetError
from .params import param_specs, params_to_dict, parse_params

if TYPE_CHECKING:
    from .contract import SpatialIndex

ISOLATIONS = ("none", "process")
#: pattern-search step (fraction of a dimension's range) at the start and the smallest one
FIRST_STEP = 0.25
SMALLEST_STEP = 1.0 / 64
#: the kill of an overdue child process happens this long after the deadline at most
KILL_GRACE_S = 0.05
_POLL_S = 0.02
#: consecutive already-measured proposals after which the space counts as exhausted
_EXHAUSTED_AFTER = 500
#: a trial may take this many times the defaults' trial (at least TRIAL_CAP_MIN_S) before it
#: is abandoned as ``timeout``
TRIAL_CAP_FACTOR = 10.0
TRIAL_CAP_MIN_S = 1.0
#: objects of the warm-up run that compiles a backend's kernels before the clock starts
WARM_UP_OBJECTS = 32
#: measured costs within this fraction of the cheapest count as tied (see :func:`resolve_ties`)
TIE_TOLERANCE = 0.005
#: share of the time budget kept for settling the chosen trial back towards the defaults
SETTLE_SHARE = 0.15


class CancelToken:
    """Thread-safe cancellation flag checked between trials (and while a child trial runs)."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


@dataclass
class Trial:
    """One measured (or failed) parameter set.

    ``status`` is ``"ok"``, ``"invalid"`` (the backend rejected the combination),
    ``"refused"`` (its worst-case memory exceeds the memory budget: not run), ``"timeout"``
    (cut by the time budget) or ``"error"``.
    """

    index: int
    phase: str            # "default", "start", "refine", "restart" or "settle"
    params: dict
    status: str
    cost: float | None
    report: dict | None
    seconds: float
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class TuneProgress:
    """What an ``on_trial`` callback receives after every trial."""

    trial: Trial
    best: Trial | None
    trials: list[Trial]
    elapsed_s: float
    budget_s: float


@dataclass
class TuneResult:
    """The outcome of :func:`tune`."""

    backend: str
    seed: int
    weights: CostWeights
    budget_s: float
    elapsed_s: float
    trials: list[Trial]
    best: Trial | None
    defaults: Trial | None
    cancelled: bool
    stop_reason: str      # "budget", "max_trials", "cancelled", "exhausted"
    workload: str = ""
    space: list[dict] = field(default_factory=list)
    warmup_s: float = 0.0
    #: parameters whose values tied with the chosen trial's (see :func:`resolve_ties`)
    plateau: list[dict] = field(default_factory=list)
    tie_tolerance: float = TIE_TOLERANCE

    @property
    def improvement(self) -> float | None:
        """Relative cost saved against the defaults (0.25 = a quarter cheaper)."""
        best, base = self.best, self.defaults
        # only measured ("ok") trials have a cost; a zero default cost gives no ratio
        if best is None or best.cost is None or base is None or not base.cost:
            return None
        return 1.0 - best.cost / base.cost

    def as_dict(self) -> dict:
        return {"backend": self.backend, "seed": self.seed,
                "weights": dataclasses.asdict(self.weights), "budget_s": self.budget_s,
                "elapsed_s": self.elapsed_s, "warmup_s": self.warmup_s, "cancelled": self.cancelled,
                "stop_reason": self.stop_reason, "workload": self.workload, "space": self.space,
                "best": self.best.as_dict() if self.best else None,
                "defaults": self.defaults.as_dict() if self.defaults else None,
                "improvement": self.improvement, "plateau": self.plateau,
                "tie_tolerance": self.tie_tolerance,
                "trials": [t.as_dict() for t in self.trials]}


@dataclass(frozen=True)
class TuneOptions:
    """How :func:`tune` searches: budget, seed, objective and limits (see :func:`tune`)."""

    budget_s: float = 10.0
    seed: int = 0
    weights: CostWeights | None = None
    max_trials: int | None = None
    isolation: str = "none"
    warm: bool = True
    fixed: dict | None = None
    tie_tolerance: float = TIE_TOLERANCE

    def with_settings(self, **settings: Any) -> TuneOptions:
        """A copy with ``settings`` replaced; an unknown name is a :class:`ParamError`."""
        known = {f.name for f in dataclasses.fields(self)}
        for name in settings:
            if name not in known:
                raise ParamError(name, f"unknown tuning option (known: {', '.join(sorted(known))})")
        return dataclasses.replace(self, **settings)


# --------------------------------------------------------------------------- search space
@dataclass(frozen=True)
class Dimension:
    """One tunable field mapped to the unit interval."""

    name: str
    kind: type
    lo: float = 0.0
    hi: float = 1.0
    log: bool = False
    choices: tuple = ()

    def value(self, u: float) -> Any:
        """The field value at unit coordinate ``u``."""
        u = min(max(float(u), 0.0), 1.0)
        if self.choices:
            return self.choices[min(int(u * len(self.choices)), len(self.choices) - 1)]
        if self.log:
            x = math.exp(math.log(self.lo) + u * (math.log(self.hi) - math.log(self.lo)))
        else:
            x = self.lo + u * (self.hi - self.lo)
        x = min(max(x, self.lo), self.hi)
        return int(round(x)) if self.kind is int else float(x)

    def unit(self, value: Any) -> float:
        """Unit coordinate of a value (values outside the window clamp to its ends)."""
        if self.choices:
            i = self.choices.index(value) if value in self.choices else 0
            return (i + 0.5) / len(self.choices)
        x = min(max(float(value), self.lo), self.hi)
        if self.hi <= self.lo:
            return 0.0
        if self.log:
            return (math.log(x) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo))
        return (x - self.lo) / (self.hi - self.lo)

    def describe(self) -> dict:
        return {"name": self.name, "type": self.kind.__name__,
                "range": list(self.choices) if self.choices else [self.lo, self.hi],
                "scale": "choice" if self.choices else ("log" if self.log else "linear")}


@dataclass(frozen=True)
class ScaleHints:
    """Sizes of the scene, for searching lengths: median object size and world extent."""

    small: float
    extent: float

    @classmethod
    def of(cls, lo: np.ndarray, hi: np.ndarray) -> ScaleHints:
        if len(lo) == 0:
            return cls(1.0, 1.0)
        sizes = (hi - lo).max(axis=1)
        extent = float((hi.max(axis=0) - lo.min(axis=0)).max())
        small = float(np.median(sizes))
        extent = extent if extent > 0 else 1.0
        return cls(small if small > 0 else extent / 1024, extent)


def _numeric_window(spec, hints: ScaleHints) -> tuple[float, float, bool]:
    lo = -math.inf if spec.lo is None else float(spec.lo)
    hi = math.inf if spec.hi is None else float(spec.hi)
    d = float(spec.default)
    log = spec.scale == "log"
    if spec.unit == "units":  # a length: search the sizes this scene has
        wlo = max(lo, hints.small / 4)
        whi = min(hi, hints.extent / 2)
        if d > 0:
            wlo, whi = min(wlo, d), max(whi, d)
        if wlo < whi:
            lo, hi = wlo, whi
            log = lo > 0 and hi / lo > 20
    elif log and lo > 0 and hi / lo > 1e4 and d > 0:
        lo, hi = max(lo, d / 64), min(hi, d * 64)
    elif not log and hi - lo > 1000 * max(abs(d), 1.0):
        if d > 0:
            lo, hi, log = max(lo, d / 64), min(hi, d * 64), True
        else:
            hi = lo + 1000 * max(abs(d), 1.0)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        lo, hi = (d / 64, d * 64) if d > 0 else (d - 1000.0, d + 1000.0)
        log = d > 0
    if log and lo <= 0:
        lo = min(hi, max(d, 1e-6)) / 1e3 if hi > 0 else lo
        log = lo > 0
    return lo, hi, log


def search_space(params_cls: type, hints: ScaleHints | None = None) -> list[Dimension]:
    """The :class:`Dimension` of every tunable field of ``params_cls`` (see the module doc)."""
    hints = hints or ScaleHints(1.0, 1.0)
    dims = []
    for spec in param_specs(params_cls):
        if not spec.tunable:
            continue
        if spec.kind is bool:
            dims.append(Dimension(spec.name, bool, choices=(False, True)))
        elif spec.choices:
            if len(spec.choices) > 1:
                dims.append(Dimension(spec.name, str, choices=tuple(spec.choices)))
        elif spec.kind in (int, float):
            lo, hi, log = _numeric_window(spec, hints)
            if spec.kind is int:
                lo, hi = math.ceil(lo), math.floor(hi)
                log = log and lo >= 1
            if hi > lo:
                dims.append(Dimension(spec.name, spec.kind, float(lo), float(hi), log))
    return dims


# --------------------------------------------------------------------------- trial runners
def _measure_payload(cls, params, workload, weights, deadline) -> tuple[str, Any]:
    """``(status, report dict or message)`` of one measurement; never raises."""
    try:
        parsed = parse_params(cls.Params, params)
        cls(parsed)  # parameter combinations a backend rejects fail here, cheaply
    except (ParamError, ValueError) as exc:
        return "invalid", str(exc)
    try:  # a worst case over the memory budget is not run at all
        cls.check_memory_budget(parsed, workload.lo, workload.hi)
    except MemoryBudgetError as exc:
        return "refused", str(exc)
    try:
        return "ok", measure(cls, parsed, workload, weights, all_pairs=True,
                             deadline=deadline).as_dict()
    except TrialTimeout as exc:
        return "timeout", str(exc)
    except ParamError as exc:
        return "invalid", str(exc)
    except PartitionStudioError as exc:
        if getattr(exc, "budget", False):  # a frame over the work budget: refused, like memory
            return "refused", str(exc)
        return "error", f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # a backend bug must not end the search; it is recorded
        return "error", f"{type(exc).__name__}: {exc}"


def _child_main(conn, cls, params, workload, weights, budget_left) -> None:
    deadline = time.perf_counter() + budget_left
    try:
        conn.send(_measure_payload(cls, params, workload, weights, deadline))
    finally:
        conn.close()


def _run_in_process(cls, params, workload, weights, deadline, cancel) -> tuple[str, Any]:
    """Run one measurement in a forked child; kill it at the deadline or on cancel."""
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    left = max(deadline - time.perf_counter(), 0.0)
    child = ctx.Process(target=_child_main, args=(send, cls, params, workload, weights, left),
                        daemon=True)
    child.start()
    send.close()
    try:
        while True:
            if receive.poll(_POLL_S):
                try:
                    return receive.recv()
                except EOFError:
                    child.join(1.0)
                    return "error", f"trial process ended with exit code {child.exitcode}"
            if cancel is not None and cancel.cancelled:
                return "timeout", "cancelled"
            if time.perf_counter() > deadline + KILL_GRACE_S:
                return "timeout", "killed at its time limit (budget or trial cap)"
            if not child.is_alive() and not receive.poll(0):
                return "error", f"trial process ended with exit code {child.exitcode}"
    finally:
        receive.close()
        if child.is_alive():
            child.kill()
        child.join(1.0)


# --------------------------------------------------------------------------- the search
class _Stop(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Search:
    def __init__(self, cls, workload, options: TuneOptions, cancel, on_trial) -> None:
        weights, budget_s, seed = options.weights or CostWeights(), options.budget_s, options.seed
        max_trials, isolation, fixed = options.max_trials, options.isolation, options.fixed
        if isolation not in ISOLATIONS:
            raise ParamError("isolation", f"expected one of {', '.join(ISOLATIONS)}, got {isolation!r}")
        if isolation == "process" and "fork" not in multiprocessing.get_all_start_methods():
            isolation = "none"  # no fork on this platform: stage-bounded trials instead
        if not (budget_s > 0 and math.isfinite(budget_s)):
            raise ParamError("budget_s", f"must be a positive number of seconds, got {budget_s!r}")
        if max_trials is not None and max_trials < 1:
            raise ParamError("max_trials", f"must be at least 1, got {max_trials!r}")
        self.cls, self.workload, self.weights = cls, workload, weights
        self.budget_s, self.seed, self.max_trials = float(budget_s), int(seed), max_trials
        self.cancel, self.on_trial, self.isolation = cancel, on_trial, isolation
        fixed = dict(fixed or {})
        if fixed:  # validated and converted like any parameter; these stay out of the search
            parsed = params_to_dict(parse_params(cls.Params, fixed))
            fixed = {name: parsed[name] for name in fixed}
        self.fixed = fixed
        self.dims = [d for d in search_space(cls.Params, ScaleHints.of(workload.lo, workload.hi))
                     if d.name not in fixed]
        self.defaults = {**params_to_dict(cls.Params()), **fixed}
        self.rng = np.random.default_rng([self.seed, 7])
        self.trials: list[Trial] = []
        self.seen: dict[tuple, Trial] = {}
        self.best: Trial | None = None
        self.duplicates = 0
        self.start = time.perf_counter()
        self.end = self.start + self.budget_s
        # the search leaves a share of the budget to settle() (nothing to settle without dims)
        self.deadline = self.end - (SETTLE_SHARE * self.budget_s if self.dims else 0.0)

    # ---------------------------------------------------------------- points
    def params_at(self, point: np.ndarray) -> dict:
        values = dict(self.defaults)
        for dim, u in zip(self.dims, point):
            values[dim.name] = dim.value(u)
        return values

    def point_of(self, params: dict) -> np.ndarray:
        return np.array([dim.unit(params[dim.name]) for dim in self.dims])

    def _key(self, params: dict) -> tuple:
        return tuple(sorted((k, repr(v)) for k, v in params.items()))

    # ---------------------------------------------------------------- evaluation
    def _check_stop(self) -> None:
        if self.cancel is not None and self.cancel.cancelled:
            raise _Stop("cancelled")
        if self.max_trials is not None and len(self.trials) >= self.max_trials:
            raise _Stop("max_trials")
        left = self.deadline - time.perf_counter()
        done = [t.seconds for t in self.trials if t.ok]
        if left <= 0 or (done and left < 0.5 * float(np.median(done))):
            raise _Stop("budget")

    def evaluate(self, params: dict, phase: str) -> Trial:
        key = self._key(params)
        if key in self.seen:
            self.duplicates += 1
            if self.duplicates > _EXHAUSTED_AFTER:
                raise _Stop("exhausted")
            self._check_stop()
            return self.seen[key]
        self._check_stop()
        self.duplicates = 0
        began = time.perf_counter()
        deadline = self.deadline
        if self.trials and self.trials[0].ok:
            # a shape far slower than the defaults is abandoned before it eats the budget
            deadline = min(deadline, began + max(TRIAL_CAP_FACTOR * self.trials[0].seconds,
                                                 TRIAL_CAP_MIN_S))
        if self.isolation == "process":
            status, payload = _run_in_process(self.cls, params, self.workload, self.weights,
                                              deadline, self.cancel)
        else:
            status, payload = _measure_payload(self.cls, params, self.workload, self.weights,
                                               deadline)
        seconds = time.perf_counter() - began
        if status == "ok":
            trial = Trial(len(self.trials), phase, params, "ok", float(payload["cost"]), payload,
                          seconds)
        else:
            trial = Trial(len(self.trials), phase, params, status, None, None, seconds, str(payload))
        self.trials.append(trial)
        self.seen[key] = trial
        if self.better(trial, self.best):
            self.best = trial
        if self.on_trial is not None:
            self.on_trial(TuneProgress(trial, self.best, list(self.trials),
                                       time.perf_counter() - self.start, self.budget_s))
        return trial

    def better(self, trial: Trial, than: Trial | None) -> bool:
        """Whether ``trial`` was measured and costs less than ``than`` (or ``than`` was not)."""
        if trial.cost is None:  # only measured ("ok") trials have a cost
            return False
        return than is None or than.cost is None or trial.cost < than.cost

    # ---------------------------------------------------------------- phases
    def latin_hypercube(self, count: int) -> np.ndarray:
        n = len(self.dims)
        strata = np.stack([self.rng.permutation(count) for _ in range(n)], axis=1)
        return (strata + self.rng.random((count, n))) / count

    def run(self) -> str:
        try:
            self.evaluate(self.defaults, "default")
            if not self.dims:
                return "exhausted"
            for point in self.latin_hypercube(min(max(6, 2 * len(self.dims)), 16)):
                self.evaluate(self.params_at(point), "start")
            self.refine()
        except _Stop as stop:
            return stop.reason
        return "exhausted"

    def settle(self, chosen: Trial | None, tolerance: float) -> None:
        """Measure ``chosen`` with each changed value put back to its default, one at a time
        (most changed first), keeping every reset that costs no more than ``tolerance`` above
        it: values that only happened to be there go back to the defaults. Runs in the
        budget's remaining share; :func:`resolve_ties` then sees these trials too."""
        self.deadline = self.end
        if chosen is None or chosen.cost is None:
            return
        limit = chosen.cost + abs(chosen.cost) * max(tolerance, 0.0)
        current = dict(chosen.params)
        changed = [d for d in self.dims if current[d.name] != self.defaults[d.name]]
        changed.sort(key=lambda d: -abs(d.unit(current[d.name]) - d.unit(self.defaults[d.name])))
        try:
            for dim in changed:
                candidate = {**current, dim.name: self.defaults[dim.name]}
                trial = self.evaluate(candidate, "settle")
                if trial.cost is not None and trial.cost <= limit:
                    current = candidate
        except _Stop:
            pass

    def refine(self) -> None:
        anchor = self.best if self.best is not None else self.trials[0]
        point, step, phase = self.point_of(anchor.params), FIRST_STEP, "refine"
        while True:
            improved = False
            for d, dim in enumerate(self.dims):
                for candidate in self._neighbours(point, d, dim, step):
                    trial = self.evaluate(self.params_at(candidate), phase)
                    if self.better(trial, anchor):
                        anchor, point, improved = trial, candidate, True
                        break
            if improved:
                continue
            step /= 2
            if step < SMALLEST_STEP:  # converged here: look elsewhere, from a fresh sample
                restart = self.latin_hypercube(1)[0]
                trial = self.evaluate(self.params_at(restart), "restart")
                anchor, point, step = trial, restart, FIRST_STEP

    @staticmethod
    def _neighbours(point: np.ndarray, d: int, dim: Dimension, step: float) -> list[np.ndarray]:
        out = []
        if dim.choices:
            current = dim.value(point[d])
            for i, choice in enumerate(dim.choices):
                if choice != current:
                    p = point.copy()
                    p[d] = (i + 0.5) / len(dim.choices)
                    out.append(p)
            return out
        for sign in (1.0, -1.0):
            p = point.copy()
            p[d] = min(max(point[d] + sign * step, 0.0), 1.0)
            if p[d] != point[d]:
                out.append(p)
        return out


def tune(cls: type[SpatialIndex], workload: Workload, options: TuneOptions | None = None, *,
         cancel: CancelToken | None = None, on_trial: Callable[[TuneProgress], None] | None = None,
         **settings: Any) -> TuneResult:
    """Search ``cls``'s tunable parameters for the lowest cost on ``workload``.

    Parameters
    ----------
    cls : type of SpatialIndex
        The backend class (its ``Params`` declares what is tunable and the bounds).
    workload : Workload
        What every trial measures (see :mod:`spatial.cost`).
    options : TuneOptions, optional
        How to search; ``settings`` (any :class:`TuneOptions` field by name) replace its values:

        ``budget_s`` wall-clock budget of the whole search, in seconds; ``seed`` seed of the
        sampling (same seed and trial count: same trials); ``weights`` the objective (default
        :class:`CostWeights()`, the per-frame work); ``max_trials`` stop after this many
        measured trials (exactly repeatable runs); ``isolation`` ``"none"`` (trials in the
        calling thread, bounded between stages) or ``"process"`` (forked children killed at
        the deadline, see the module docstring); ``fixed`` parameters held at these values
        (e.g. ``{"plane": "xz"}``), in trial 0 too, and left out of the search; ``warm`` first
        run :func:`warm_up` (not counted in the budget, reported as ``warmup_s``);
        ``tie_tolerance`` costs within this fraction of the cheapest tie (:func:`resolve_ties`).
    cancel : CancelToken, optional
        Checked before every trial (and while a child trial runs).
    on_trial : callable, optional
        ``on_trial(TuneProgress)`` after every trial.

    Returns
    -------
    TuneResult
        ``best`` is the tie-resolved choice; ``plateau`` lists the parameters that did not matter.
    """
    options = (options or TuneOptions()).with_settings(**settings)
    weights = options.weights or CostWeights()
    warmup_s = warm_up(cls, workload, params=options.fixed) if options.warm else 0.0
    search = _Search(cls, workload, options, cancel, on_trial)
    reason = search.run()
    if reason != "cancelled":
        search.settle(search.best, options.tie_tolerance)
    best, plateau = resolve_ties(search.trials, search.best, search.dims, search.defaults,
                                 options.tie_tolerance)
    return TuneResult(cls.name, int(options.seed), weights, float(options.budget_s),
                      time.perf_counter() - search.start, search.trials, best,
                      search.trials[0] if search.trials else None, reason == "cancelled", reason,
                      workload.description, [d.describe() for d in search.dims], warmup_s,
                      plateau, options.tie_tolerance)


# --------------------------------------------------------------------------- ties
def _changes(trial: Trial, dims: list[Dimension], defaults: dict) -> tuple[int, float]:
    """How many searched values differ from the defaults, and how far (unit coordinates)."""
    changed, distance = 0, 0.0
    for dim in dims:
        value, default = trial.params[dim.name], defaults[dim.name]
        if value != default:
            changed += 1
            distance += abs(dim.unit(value) - dim.unit(default))
    return changed, distance


def _plateau_entry(dim: Dimension, tied: list[Trial], chosen: Trial) -> dict | None:
    """What ``tied`` says about ``dim``: the values (or range) that all cost the same."""
    values = sorted({t.params[dim.name] for t in tied}, key=lambda v: (str(type(v)), v))
    if len(values) < 2:
        return None
    entry = {"name": dim.name, "chosen": chosen.params[dim.name], "trials": len(tied)}
    if dim.choices:
        entry["values"] = values
        entry["text"] = f"{dim.name}: any of {', '.join(map(str, values))} gives the same cost"
        return entry
    lo, hi = values[0], values[-1]
    entry.update(lo=lo, hi=hi)
    top = dim.value(1.0)
    if hi == top and lo != dim.value(0.0):
        entry["text"] = f"any {dim.name} \u2265 {lo:.4g} gives the same cost ({lo:.4g}\u2013{hi:.4g} measured)"
    else:
        entry["text"] = f"any {dim.name} from {lo:.4g} to {hi:.4g} gives the same cost (measured)"
    return entry


def resolve_ties(trials: list[Trial], best: Trial | None, dims: list[Dimension], defaults: dict,
                 tolerance: float = TIE_TOLERANCE) -> tuple[Trial | None, list[dict]]:
    """The trial a person would keep among those tied with ``best``, and the plateau.

    Trials whose cost is within ``tolerance`` (relative) of the cheapest are tied: counters
    that differ by less say nothing about which setting is better. Among them the one that
    changes the fewest searched parameters from ``defaults`` wins, then the one nearest to
    them (in the search's unit coordinates), then the cheaper, then the earlier. So a
    ``max_depth`` that makes no difference stays at its default instead of whatever value the
    search happened to try last. The plateau lists, per searched parameter, the values seen
    among the tied trials ("any max_depth >= 7 gives the same cost").
    """
    if best is None or best.cost is None:
        return best, []
    limit = best.cost + abs(best.cost) * max(tolerance, 0.0)
    tied = [t for t in trials if t.cost is not None and t.cost <= limit]
    chosen = min(tied, key=lambda t: (*_changes(t, dims, defaults), t.cost, t.index))
    plateau = [entry for dim in dims if (entry := _plateau_entry(dim, tied, chosen))]
    return chosen, plateau


def warm_up(cls: type[SpatialIndex], workload: Workload, objects: int = WARM_UP_OBJECTS,
            params: dict | None = None) -> float:
    """Run every code path of ``cls`` once on a tiny part of ``workload``; return the seconds.

    Compiled kernels are built (or loaded from the on-disk cache) here, in this process, so
    that trials (and forked trial processes, which inherit them) measure the structure and not
    the compiler. Failures are ignored: the real trial reports them.
    """
    began = time.perf_counter()
    try:
        measure(cls, parse_params(cls.Params, params or {}), workload.subset(objects), CostWeights())
    except Exception:  # noqa: BLE001 - the defaults trial records the same failure properly
        pass
    return time.perf_counter() - began


@dataclass
class Comparison:
    """The outcome of :func:`compare_backends`: tuned backends, cheapest first, and the rest."""

    results: list[TuneResult]
    not_evaluated: dict[str, str]  # backend -> why it has no measured trial
    order: list[str]               # the order backends were tuned in (cheapest probe first)

    @property
    def best(self) -> TuneResult | None:
        return self.results[0] if self.results else None

    def as_dict(self) -> dict:
        ranking = []
        for r in self.results:
            if r.best is None:
                raise ValueError(f"backend {r.backend}: a ranked result needs a measured trial")
            ranking.append({"backend": r.backend, "cost": r.best.cost,
                            "default_cost": r.defaults.cost if r.defaults else None,
                            "params": r.best.params, "trials": len(r.trials)})
        return {"ranking": ranking, "not_evaluated": self.not_evaluated, "order": self.order}


def compare_backends(classes: list[type[SpatialIndex]], workload: Workload,
                     options: TuneOptions | None = None, *, cancel: CancelToken | None = None,
                     on_trial: Callable[[str, TuneProgress], None] | None = None,
                     probe_objects: int = 256, **settings: Any) -> Comparison:
    """Tune every backend of ``classes`` within one shared budget and rank them by cost.

    ``options`` and ``settings`` are those of :func:`tune` (``budget_s`` is the shared budget,
    default 30 s here). Each backend's defaults are first measured on a small subset of the
    workload (``probe_objects`` objects, within a tenth of the budget in all, without a
    warm-up, so with ``isolation="process"`` a backend that hangs is cut off); only backends
    whose probe finished are warmed up in this process. Backends are then tuned
    cheapest first, each with an equal share of the time left, so the time a cheap backend does
    not use goes to the costlier ones. A backend whose defaults could not be measured within its
    share (or failed) is listed in ``not_evaluated`` with the reason.
    """
    options = (options or TuneOptions(budget_s=30.0)).with_settings(**settings)
    budget_s = options.budget_s
    start = time.perf_counter()
    deadline = start + budget_s
    probe = workload.subset(probe_objects)
    probe_s: dict[str, float] = {}
    not_evaluated: dict[str, str] = {}
    probe_share = 0.1 * budget_s / max(len(classes), 1)
    for cls in classes:
        if cancel is not None and cancel.cancelled:
            break
        began = time.perf_counter()
        # no warm-up yet: a pathological backend must not hold the budget in this process
        result = tune(cls, probe, options, budget_s=probe_share, max_trials=1, cancel=cancel,
                      warm=False)
        probe_s[cls.name] = (time.perf_counter() - began) if result.best else math.inf
    ordered = sorted(classes, key=lambda c: (probe_s.get(c.name, math.inf), c.name))
    ranked: list[tuple[float, str, TuneResult]] = []
    for position, cls in enumerate(ordered):
        left = deadline - time.perf_counter()
        if cancel is not None and cancel.cancelled:
            not_evaluated[cls.name] = "cancelled"
            continue
        if left <= 0.05:
            not_evaluated[cls.name] = "no time left in the budget"
            continue
        share = left / (len(ordered) - position)
        callback = (lambda p, name=cls.name: on_trial(name, p)) if on_trial else None
        # warm up (here, shared by forked trials) only what the probe showed to be quick
        result = tune(cls, workload, options, budget_s=share, cancel=cancel, on_trial=callback,
                      warm=math.isfinite(probe_s.get(cls.name, math.inf)))
        if result.best is None or result.best.cost is None:
            why = result.trials[0].status if result.trials else result.stop_reason
            detail = result.trials[0].message if result.trials else ""
            not_evaluated[cls.name] = (f"defaults not measured within {share:.1f} s ({why}"
                                       + (f": {detail}" if detail else "") + ")")
        else:
            ranked.append((result.best.cost, result.backend, result))
    ranked.sort(key=lambda entry: entry[:2])
    return Comparison([result for _, _, result in ranked], not_evaluated,
                      [c.name for c in ordered])
