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

    def __init__(self, record, a, b, seed: int = 0, frames: int = DEFAULT_FRAMES,
                 recording=None) -> None:
        super().__init__()
        self.record, self.a, self.b, self.seed, self.frames = record, a, b, seed, frames
        self.recording = recording

    def run(self) -> None:
        try:
            result = compare_record(self.record, self.a, self.b, seed=self.seed, frames=self.frames,
                                    recording=self.recording)
        except Exception as exc:  # noqa: BLE001 - reported as one line in the window
            if not self.cancelled:
                self.failed.emit(f"{type(exc).__name__}: {exc}")
            return
        if not self.cancelled:
            self.done.emit(result)


class PrepareWorker(_Cancellable):
    """Compile (in a child process) and load the kernels of side backends used for the first
    time, as the editor's own backend switch does (:class:`editor.warmup.BackendPreparation`),
    so the window never compiles; ``ready()`` when done."""

    ready = Signal()

    def __init__(self, backends: list[str], current: str | None) -> None:
        super().__init__()
        from editor.warmup import BackendPreparation

        self.preparations = [BackendPreparation(name, current=current) for name in backends]

    def run(self) -> None:
        for preparation in self.preparations:
            if self.cancelled:
                preparation.cancel()
                continue
            preparation.first_frame()
            preparation.rest()
        if not self.cancelled:
            self.ready.emit()

    def cancel(self) -> None:
        super().cancel()
        for preparation in self.preparations:
            preparation.cancel()
