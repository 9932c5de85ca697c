"""The editor's warm-up hook for :class:`editor.model.IndexSync`: a backend's kernels compiled
by a child process before its first build (see :mod:`editor.warmup`).
"""
from __future__ import annotations

import threading
from collections.abc import Callable


class KernelWarmUpHook:
    """The sync's warm-up hook in the editor: a backend used for the first time with a cold
    kernel cache is compiled by a child process (:class:`editor.warmup.BackendPreparation`)
    before its build; its status lines and progress go to ``note`` and ``progress``, called
    from worker threads."""

    def __init__(self, note: Callable[[str], None], progress: Callable[[float], None]) -> None:
        self._note, self._progress = note, progress

    def needed(self, backend: str) -> bool:
        from editor.warmup import needs_warm_up

        return needs_warm_up(backend)

    def preparation(self, backend: str, current: str) -> _Preparation:
        from editor.warmup import BackendPreparation

        return _Preparation(BackendPreparation(backend, current=current,
                                               note=self._note, progress=self._progress))


class _Preparation:
    """The first frame's kernels before the build, compiled by a child process and loaded here
    from the disk cache; the rest (queries, edits) the same way on a thread of its own, while
    the new tree is already on screen."""

    def __init__(self, preparation) -> None:
        self._preparation = preparation
        self.rest: threading.Thread | None = None

    def run(self) -> None:
        self._preparation.first_frame()
        self.rest = threading.Thread(target=self._preparation.rest, daemon=True,
                                     name=f"warm-{self._preparation.backend}")
        self.rest.start()

    def cancel(self) -> None:
        self._preparation.cancel()  # ends its compile process
