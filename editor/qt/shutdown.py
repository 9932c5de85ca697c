"""Ending the editor's process while work it cannot interrupt still runs.

Workers run compiled code (a first compile can take a minute) that no flag interrupts. Qt
aborts the process ("QThread: Destroyed while thread is still running", exit status 134) when
a running ``QThread`` is destroyed, which Python's normal exit does; a daemon thread inside
numba at interpreter shutdown can crash it too. :func:`exit_code` gives the work a bounded
time to end, then ends the process at once with the right status, skipping the destructors:
whatever the work wrote (numba's cache files) is written atomically, and the warm-up
processes end by themselves when their stdin pipe closes (``editor.warmup``).
"""
from __future__ import annotations

from editor.hard_exit import exit_now

#: how long the editor waits, when it exits, for workers still running (milliseconds)
EXIT_WAIT_MS = 3000


def exit_code(code: int, window=None, wait_ms: int = EXIT_WAIT_MS) -> int:
    """Return ``code`` once every worker thread has ended; if some are still running after
    ``wait_ms``, exit the process right here with ``code`` (stdout and stderr flushed)."""
    from editor.warmup import stop_all

    from .workers import wait_for_workers

    stop_all()
    readiness = getattr(window, "kernel_readiness", None) if window is not None else None
    busy = bool(wait_for_workers(wait_ms))
    if readiness is not None and not readiness.stop(wait_ms / 1000):
        busy = True
    link = getattr(window, "live_link", None) if window is not None else None
    processor = getattr(link, "processor", None)
    if processor is not None:  # a live game's processing thread: end it after its frame in hand
        processor.abort()
        if not processor.stop(wait_ms / 1000):
            busy = True
    if busy:
        settings = getattr(window, "settings", None)
        if settings is not None:
            settings.sync()  # os._exit skips the destructor that would write them
        exit_now(code)
    return code
