"""How a command ends: one exit status per kind of failure, and nothing a plugin leaves behind
keeps the process alive.

=====  ==========================================================================================
 0     done
 1     an unexpected failure of the product (a bug: the line names where it was raised)
 2     bad input: arguments, a file, a parameter, an output that cannot be written
 3     a plugin failed: raised, called ``sys.exit()`` or was interrupted in its own code (the
       line names the plugin and what it was asked to do)
 4     a budget was hit: memory (estimated before building, or reached while reading or
       building) or work (pairs or objects per frame; ``docs/limits.md``)
 130   interrupted (Ctrl+C)
=====  ==========================================================================================
"""
from __future__ import annotations

import sys
import threading

from editor.hard_exit import exit_now

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
EXIT_PLUGIN = 3
EXIT_BUDGET = 4
EXIT_INTERRUPTED = 130

#: seconds given to threads left running before the process ends without them
THREAD_GRACE_S = 1.0


def plugin_exit_line(exc: SystemExit) -> str | None:
    """One line for ``sys.exit()`` called inside plugin code, or None when no plugin did."""
    from spatial import registry as registry_module

    registry = registry_module._DEFAULT
    blamed = registry.plugin_in_traceback(exc) if registry is not None else None
    if blamed is None:
        return None
    plugin, function = blamed
    return f"plugin '{plugin}' called sys.exit({exc.code!r}) in {function}()"


def leftover_threads() -> list[threading.Thread]:
    """Non-daemon threads still running besides the main one (started by plugin code)."""
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and not t.daemon and t.is_alive()]


def finish(code: int, prog: str) -> int:
    """Return ``code``, or end the process with it now if threads would keep it alive.

    A thread a plugin started and never stopped would make the interpreter wait for it at exit
    for ever; after :data:`THREAD_GRACE_S` the process says so on stderr and ends without it
    (the output is already written and flushed).
    """
    left = leftover_threads()
    for thread in left:
        thread.join(THREAD_GRACE_S / max(len(left), 1))
    left = leftover_threads()
    if not left:
        return code
    names = ", ".join(sorted({t.name for t in left}))
    print(f"{prog}: warning: not waiting for {len(left)} thread(s) left running by plugin code "
          f"({names})", file=sys.stderr)
    exit_now(code)
