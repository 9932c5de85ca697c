"""The measurement of compare mode on a worker thread (it builds and queries two trees)."""
from __future__ import annotations

from PySide6.QtCore import Signal

from editor.model.compare.measure import DEFAULT_FRAMES
from editor.model.compare.report import compare_record

from ..workers import _Cancellable


class CompareWorker(_Cancellable):
    """Run :func:`~editor.model.compare.report.compare_record`; ``done(Comparison)`` or
    ``failed(message)``."""

    done = Signal(object)
    failed = Signal(str)

    def __init__(self, record, a, b, seed: int = 0, frames: int = DEFAULT_FRAMES) -> None:
        super().__init__()
        self.record, self.a, self.b, self.seed, self.frames = record, a, b, seed, frames

    def run(self) -> None:
        try:
            result = compare_record(self.record, self.a, self.b, seed=self.seed, frames=self.frames)
        except Exception as exc:  # noqa: BLE001 - reported as one line in the window
            if not self.cancelled:
                self.failed.emit(f"{type(exc).__name__}: {exc}")
            return
        if not self.cancelled:
            self.done.emit(result)
