"""The editor's runner for :class:`editor.model.IndexSync`: builds an index on a worker thread.

The model decides when a rebuild runs in the background (its size, a backend to prepare) and
drops stale results; this module only moves the work off the GUI thread. The finished index
comes back through a queued signal, so ``done`` always runs on the GUI thread.
"""
from __future__ import annotations

from collections.abc import Callable

from spatial.contract import SpatialIndex

from .workers import RebuildWorker


def run_on_thread(build: Callable[[], SpatialIndex], prepare: Callable[[], None] | None,
                  done: Callable[[SpatialIndex, float], None],
                  failed: Callable[[BaseException], object]) -> RebuildWorker:
    """Run ``prepare()`` then ``build()`` on a :class:`~.workers.RebuildWorker`; ``done(index,
    build_ms)`` or ``failed(exc)`` on the GUI thread unless cancelled (an
    :class:`editor.model.index_sync.Runner`)."""
    worker = RebuildWorker(build, prepare=prepare)
    worker.finished_index.connect(done)
    worker.failed.connect(failed)
    worker.start()
    return worker
