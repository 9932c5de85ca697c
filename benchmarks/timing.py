"""Timing one operation of one implementation: repeats, medians, limits and failures."""
from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .adapters import NotSupported


@dataclass
class Cell:
    """The outcome of one (implementation, operation) in one scene.

    ``status`` is ``ok`` (``times`` holds every run, ``median`` their median), ``na`` (the
    implementation cannot express the operation), ``skip`` (not run, ``note`` says why) or
    ``error`` (it raised; ``note`` holds the error).
    """

    status: str
    times: list[float] = field(default_factory=list)
    note: str = ""
    check: dict[str, Any] = field(default_factory=dict)

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    def to_json(self) -> dict:
        return {"status": self.status, "median_s": self.median, "times_s": self.times,
                "runs": len(self.times), "note": self.note, "check": self.check}


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ").replace("|", "/")
    return text if len(text) <= 160 else text[:157] + "..."


def time_op(run: Callable[[int], Any], repeats: int, time_limit: float,
            summarize: Callable[[Any], dict] | None = None) -> Cell:
    """Time ``run(repeat)`` up to ``repeats`` times.

    Stops repeating once the runs so far took ``time_limit`` seconds in total (at least one run
    is always made), so a slow cell reports fewer runs instead of stalling the benchmark; the
    report shows the run count whenever it is below ``repeats``. ``summarize`` turns the last
    run's answer into the values checked across implementations (not timed).
    """
    times: list[float] = []
    answer = None
    for repeat in range(repeats):
        gc.collect()  # a collection triggered by the previous run must not land in this one
        start = time.perf_counter()
        try:
            answer = run(repeat)
        except NotSupported as exc:
            return Cell("na", note=str(exc))
        except MemoryError:
            return Cell("error", times, note="MemoryError")
        except Exception as exc:  # any backend failure is a result, not a crash of the run
            return Cell("error", times, note=_error_text(exc))
        times.append(time.perf_counter() - start)
        if sum(times) >= time_limit:
            break
    cell = Cell("ok", times)
    if summarize is not None:
        try:
            cell.check = summarize(answer)
        except Exception as exc:
            cell.check = {"error": _error_text(exc)}
    return cell


def format_seconds(seconds: float) -> str:
    """Human-readable duration with three significant digits."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"
