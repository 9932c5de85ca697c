"""Run plugin code so that nothing it does can end or corrupt the command that loads it.

:func:`contained` calls a plugin's import or ``register()`` and turns every way it can fail
into a one-line reason: any exception, ``SystemExit`` (``sys.exit()`` at import),
``KeyboardInterrupt`` and a time limit (a plugin stuck in ``while True: pass`` at import is
reported, not awaited). While plugin code runs, ``print()`` goes to stderr, so a plugin that
talks at import cannot corrupt the JSON document a command prints on stdout (the command
line also sends file descriptor 1 to stderr while plugins run: :func:`stdout_to_stderr`). A
plugin that forks: the copy of the process ends when the plugin code returns in it, so it never
runs the command on.

The time limit uses ``SIGALRM`` on the main thread of a POSIX process: the Python interpreter
raises the timeout between two bytecodes, so even a busy loop is interrupted and the import
machinery cleans up the half-imported module. The alarm repeats every
:data:`REPEAT_S` seconds until the call returns, so a plugin that swallows a timeout with a
bare ``except`` gets the next one (a loop built to swallow every ``BaseException`` forever is
only stopped when a timeout lands outside its handler). Elsewhere (another thread, Windows)
the call runs in a daemon thread that is abandoned when the limit passes.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: seconds between repeated timeouts once the limit has passed
REPEAT_S = 0.1


class PluginTimeout(BaseException):
    """Raised inside plugin code when its time limit has passed.

    A ``BaseException`` so that a plugin's ``except Exception`` cannot swallow it.
    """


@dataclass
class Outcome:
    """What a contained call gave: ``value`` when ``ok``, else a one-line ``error``."""

    ok: bool
    value: Any = None
    error: str = ""


def contained(call: Callable[[], Any], time_limit: float | None = None) -> Outcome:
    """Run ``call()`` with stdout sent to stderr, every failure caught, and a time limit.

    Parameters
    ----------
    call : callable
        The plugin code (an import or a ``register(registry)`` call).
    time_limit : float, optional
        Seconds after which the call is reported as failed; None for no limit.

    Returns
    -------
    Outcome
        ``ok`` and the call's value, or the reason it failed as one line (exception type,
        message and the plugin file and line where it was raised).
    """
    pid = os.getpid()
    try:
        return _contained(call, time_limit)
    finally:
        if os.getpid() != pid:  # a fork inside plugin code: the copy never runs our code on
            os._exit(0)


def _contained(call: Callable[[], Any], time_limit: float | None) -> Outcome:
    with contextlib.redirect_stdout(sys.stderr):
        if time_limit is not None and _alarm_usable():
            try:
                with _alarm(time_limit):
                    return Outcome(True, call())
            except BaseException as exc:  # noqa: B036 - containing every failure is the point
                return Outcome(False, error=_reason(exc, time_limit))
        if time_limit is not None:
            return _in_thread(call, time_limit)
        try:
            return Outcome(True, call())
        except BaseException as exc:  # noqa: B036
            return Outcome(False, error=_reason(exc, time_limit))


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send everything written to stdout to stderr, at the file-descriptor level, for the block.

    ``print()`` and ``sys.stdout`` are redirected, and so is file descriptor 1 itself, so a
    plugin (or a library it loads) writing with ``os.write(1, ...)``, through C code, or from a
    process it forks, cannot mix anything into the document a command prints on stdout after
    the block. Where descriptor 1 cannot be duplicated (closed), only Python's stdout is
    redirected.
    """
    with contextlib.suppress(ValueError, OSError):
        sys.stdout.flush()
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:
        saved = -1
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        with contextlib.suppress(ValueError, OSError):
            sys.stderr.flush()
        if saved >= 0:
            os.dup2(saved, 1)
            os.close(saved)


def blame(exc: BaseException, registry=None) -> str:
    """``" (plugin 'NAME', in FUNCTION())": what plugin code raised (or called ``sys.exit``)``
    — the tail of a one-line message for a failure inside a plugin's own code, naming the
    plugin when ``registry`` finds it in the traceback."""
    if isinstance(exc, SystemExit):
        what = f"called sys.exit({exc.code!r})"
    else:
        message = " ".join(str(exc).split())
        what = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    blamed = registry.plugin_in_traceback(exc) if registry is not None else None
    where = f" (plugin '{blamed[0]}', in {blamed[1]}())" if blamed else ""
    return f"{where}: {what}"


def _reason(exc: BaseException, time_limit: float | None) -> str:
    if isinstance(exc, PluginTimeout):
        return f"did not finish within {time_limit:g} s"
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})"
    if isinstance(exc, KeyboardInterrupt):
        return "raised KeyboardInterrupt"
    last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" ({Path(last[0].filename).name}:{last[0].lineno})" if last else ""
    message = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {message}{where}" if message else f"{type(exc).__name__}{where}"


def _alarm_usable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def _alarm(time_limit: float) -> Iterator[None]:
    armed = [True]

    def on_alarm(signum, frame):
        if armed[0]:
            raise PluginTimeout()

    previous_handler = signal.signal(signal.SIGALRM, on_alarm)
    previous_timer = signal.setitimer(signal.ITIMER_REAL, max(time_limit, 1e-3), REPEAT_S)
    try:
        yield
    finally:
        while True:  # a timeout landing on this very line must not escape the clean-up
            try:
                armed[0] = False
                break
            except PluginTimeout:
                continue
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_handler)
        if previous_timer[0] > 0:  # someone else's timer was running: give it back
            signal.setitimer(signal.ITIMER_REAL, previous_timer[0], previous_timer[1])


def _in_thread(call: Callable[[], Any], time_limit: float) -> Outcome:
    result: list[Outcome] = []

    def run() -> None:
        try:
            result.append(Outcome(True, call()))
        except BaseException as exc:  # noqa: B036
            result.append(Outcome(False, error=_reason(exc, time_limit)))

    worker = threading.Thread(target=run, name="plugin-load", daemon=True)
    worker.start()
    worker.join(time_limit)
    if worker.is_alive() or not result:
        return Outcome(False, error=f"did not finish within {time_limit:g} s")
    return result[0]
