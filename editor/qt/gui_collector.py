"""Python's cyclic garbage collector, run on the GUI thread only.

A collection starts wherever an allocation crosses the collector's threshold — on a worker
thread too (the tuner, the loader, the Statistics pair count). A collection there may free the
last Python reference to a Qt object left in a reference cycle; PySide then destroys that
object from the worker, locking Qt's connection mutexes while it waits for the interpreter
lock, while the GUI thread, holding the interpreter lock, deletes another object and waits for
those mutexes: the editor hangs for good (seen with the tuner comparing every backend). The
usual cure for Qt applications, and the one pyqtgraph ships: switch automatic collection off
and collect from a timer on the GUI thread, with the same generation thresholds.
"""
from __future__ import annotations

_COLLECTOR = None


def collect_on_gui_thread(interval_s: float = 1.0) -> None:
    """Move cyclic garbage collection to a timer on the calling (GUI) thread; once a process.

    Call it from the GUI thread after the ``QApplication`` exists.
    """
    global _COLLECTOR
    if _COLLECTOR is None:
        from pyqtgraph.util.garbage_collector import GarbageCollector
        _COLLECTOR = GarbageCollector(interval=interval_s)


def collect_if_due() -> None:
    """Collect now, on the calling thread, the generations past their thresholds (what the
    timer does); for code that runs on the GUI thread without its event loop, such as a test
    session between tests. Does nothing before :func:`collect_on_gui_thread`."""
    if _COLLECTOR is not None:
        _COLLECTOR.check()
