"""Cyclic garbage is collected on the GUI thread, never on a worker thread: a collection on a
worker may destroy Qt objects there and deadlock against the GUI thread."""
from __future__ import annotations

import gc
import threading
import weakref


class _Cycle:
    def __init__(self):
        self.me = self


def test_a_worker_thread_never_collects_garbage_once_the_window_exists(window, qtbot):
    collected_on = []
    garbage = _Cycle()
    weakref.finalize(garbage, lambda: collected_on.append(threading.current_thread().name))
    del garbage  # unreachable now, but only a cyclic collection frees it

    survivors = []

    def allocate_a_lot():
        # far past every generation's threshold: an automatic collection would start here.
        # They stay alive: the collector's count is allocations less deallocations, so freeing
        # them again would leave the GUI thread's timer nothing due to collect either
        survivors.append([[i] for i in range(50 * sum(gc.get_threshold()))])

    worker = threading.Thread(target=allocate_a_lot, name="worker")
    worker.start()
    worker.join()
    assert collected_on == []  # the worker did not collect it
    qtbot.waitUntil(lambda: bool(collected_on), timeout=5000)  # the GUI thread's timer did
    assert collected_on == [threading.main_thread().name]
    survivors.clear()
