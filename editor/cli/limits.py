"""The command line's memory budget: a run that would need more stops with one line, not a crash.

Each backend refuses, before building, a parameter set whose worst case exceeds the memory
budget (:mod:`spatial.memory_budget`: a quadtree at ``max_depth=24, max_objects=1,
max_duplication=4`` on 5,000 boxes is refused at once, naming the estimate and the budget).
As the last line of defence the CLI also caps its own address space at what it holds when it
starts plus :func:`memory_budget_mb` MB (``RLIMIT_AS``): any allocation past the budget, in
numpy or in a compiled kernel, raises ``MemoryError``, which the CLI reports as one line naming
the budget and the backend with its parameters. Linux only (elsewhere no cap is set).
"""
from __future__ import annotations

import os

from spatial.memory_budget import MEMORY_BUDGET_ENV, configured_budget_mb

__all__ = ["MEMORY_BUDGET_ENV", "DEFAULT_MEMORY_BUDGET_MB", "memory_budget_mb",
           "apply_memory_budget"]

#: megabytes a command may allocate beyond what the process holds when it starts
DEFAULT_MEMORY_BUDGET_MB = 4096


def memory_budget_mb() -> int | None:
    """The budget in MB: ``$PARTITION_STUDIO_MEMORY_BUDGET_MB`` or the default; None when
    the variable is ``0`` (no cap). A value that is not a whole number is ignored."""
    configured = configured_budget_mb()
    if configured is None:
        return DEFAULT_MEMORY_BUDGET_MB
    return None if configured <= 0 else configured


def apply_memory_budget() -> int | None:
    """Cap this process's address space at its current size plus the budget.

    Returns
    -------
    int or None
        The budget applied, in MB; None when there is none (disabled, or the platform has no
        ``RLIMIT_AS`` or ``/proc``). A lower limit already set by the caller is kept.
    """
    budget = memory_budget_mb()
    if budget is None:
        return None
    try:
        import resource

        with open("/proc/self/statm", encoding="ascii") as fh:
            current = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, OSError, ValueError):
        return None
    limit = current + budget * (1 << 20)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY and soft <= limit:
        return budget
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        return None
    return budget
