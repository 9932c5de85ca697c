"""A finished worker lets go of its job and of its receivers: what the job read is freed even
when the receiver names the worker (the usual way to tell a superseded answer)."""
from __future__ import annotations

import gc
import weakref

from editor.qt.workers import CallWorker, RebuildWorker


class _Payload:
    """Stands for what a job reads: a frame with its trees, an index snapshot."""


def _start_call(answers: list, payloads: list) -> None:
    payload = _Payload()
    payloads.append(weakref.ref(payload))
    worker = CallWorker(lambda: id(payload))
    # the receiver names the worker, as the panels do
    worker.result.connect(lambda value, ms: answers.append((worker is not None, value)))
    worker.start()


def _start_rebuild(answers: list, payloads: list) -> None:
    payload = _Payload()
    payloads.append(weakref.ref(payload))
    worker = RebuildWorker(lambda: payload)
    worker.finished_index.connect(lambda index, ms: answers.append((worker is not None, id(index))))
    worker.start()


def test_finished_workers_free_what_their_jobs_read(qtbot):
    answers: list = []
    payloads: list = []
    for _ in range(4):
        _start_call(answers, payloads)
    _start_rebuild(answers, payloads)
    qtbot.waitUntil(lambda: len(answers) == 5, timeout=10_000)
    assert all(named for named, _ in answers)  # every answer arrived, to a receiver naming its worker
    answers.clear()  # the rebuild's receiver kept the id only; nothing here holds a payload

    def freed() -> bool:
        gc.collect()
        return all(ref() is None for ref in payloads)

    qtbot.waitUntil(freed, timeout=5_000)
