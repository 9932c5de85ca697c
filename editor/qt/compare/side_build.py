"""Compare mode's side trees, built off the GUI thread.

The sides' trees and draw arrays are made on one :class:`~editor.qt.workers.CallWorker` from a
snapshot taken on the GUI thread: the document's index record
(:func:`~editor.model.compare.sides.document_record`) and a copy of its scene (objects are
values, so the copy is a table of references and the worker reads nothing the GUI thread
edits). The GUI thread only adopts what arrives (:meth:`.side_state.SideState.set_document`
with ``built=``), one side per turn of the event loop, so a big level never stalls the window
while its sides are built. One worker builds both sides in turn rather than one each: the
sides' Python work shares the interpreter lock with the window's thread, and two workers
would leave it a third of the lock instead of half.

A result is dropped when a newer build started (another spec was applied, another level
opened), and the sides are built again when the document was edited while they were building;
once adopted, a side follows edits incrementally like the editor's own index.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from editor.model import ChangeKind
from editor.model.compare.sides import SideSpec, build_side, document_record
from editor.model.index_input import IndexInput

from ..document import Document
from ..scene_geometry import prepare_geometry
from ..views.view2d import VIEW_AXES
from ..workers import CallWorker

#: the compare views look down on the level: only the top plane's outlines are prepared
SIDE_VIEW = "Top"


def build_side_view(record, snapshot, spec: SideSpec, shown_for):
    """``(index, geometry)`` of one side: its tree over ``record`` and the top view's draw
    arrays of ``snapshot`` (a copy of the scene ``shown_for``). Runs on a worker."""
    index = build_side(record, spec)
    index.nodes()  # lazy work done here, not on the GUI thread's first draw
    geometry = prepare_geometry(snapshot, planes=(VIEW_AXES[SIDE_VIEW],), shown_for=shown_for)
    return index, geometry


def build_sides(record, snapshot, specs, shown_for) -> list:
    """Each side's :func:`build_side_view`, or the exception its build raised (one side's
    failure leaves the other to be shown)."""
    out: list = []
    for spec in specs:
        try:
            out.append(build_side_view(record, snapshot, spec, shown_for))
        except Exception as exc:  # noqa: BLE001 - reported as one line naming the side
            out.append(exc)
    return out


class _Job:
    """A build in flight: the specs it builds and how many edits it has seen."""

    def __init__(self, specs: list[SideSpec], edits: int) -> None:
        self.specs = specs
        self.edits = edits
        self.worker: CallWorker | None = None


class SideBuilds(QObject):
    """Builds the sides of compare mode on a worker (see the module docstring).

    Signals: ``built(side number)`` once a side shows its new tree, ``failed(side number,
    message)`` when its build raised (the side keeps what it showed).
    """

    built = Signal(int)
    failed = Signal(int, str)

    def __init__(self, sides, parent=None) -> None:
        super().__init__(parent)
        self.sides = list(sides)
        self.job: _Job | None = None
        #: finished sides waiting for their turn to be shown: (job, number, spec, result)
        self.adopting: list[tuple] = []
        self.document: Document | None = None
        self.edits = 0  # edits of the document seen (selections aside)
        self._record: tuple[IndexInput, int] | None = None  # the last snapshot, at which edit
        self._held = False  # workers wait for release() (the window's first paint)

    @property
    def held(self) -> bool:
        """Workers wait for :meth:`release`."""
        return self._held

    def hold(self) -> None:
        """Start no worker until :meth:`release` (builds asked for meanwhile wait)."""
        self._held = True

    def release(self) -> None:
        """Start the worker of the build asked for while held, if any."""
        self._held = False
        job = self.job
        if job is not None and job.worker is not None and not job.worker.isRunning() \
                and not job.worker.isFinished():
            job.worker.start()

    @property
    def busy(self) -> bool:
        """A build is in flight or a finished side waits to be shown."""
        return self.job is not None or bool(self.adopting)

    def start(self, document: Document | None, specs,
              record: IndexInput | None = None) -> None:
        """Build every side of ``document`` with its spec of ``specs`` (replacing a build in
        flight); ``record``: the document's :func:`document_record` taken just now, if any."""
        assert document is not None, "sides are built for a document"
        self.cancel()
        self._follow(document)
        if record is None:
            record = document_record(document.scene, document.display_name())
        self._record = (record, self.edits)
        snapshot = document.scene.copy()
        job = self.job = _Job(list(specs), self.edits)
        worker = job.worker = CallWorker(
            lambda: build_sides(record, snapshot, job.specs, document.scene))
        worker.result.connect(lambda value, _ms: self._done(job, value))
        worker.failed.connect(lambda text: self._failed(job, text))
        if not self._held:
            worker.start()

    def current_record(self) -> IndexInput | None:
        """The record the sides were last built from, while the document is unedited since."""
        if self._record is None or self._record[1] != self.edits:
            return None
        return self._record[0]

    def _done(self, job: _Job, results: list) -> None:
        if self.job is not job:
            return  # a newer build replaced it: dropped
        self.job = None
        if job.edits != self.edits:  # the document moved on while it built: again
            self.start(self.document, job.specs)
            return
        self.adopting = [(job, number, spec, result)
                         for number, (spec, result) in enumerate(zip(job.specs, results))]
        self._adopt_next()

    def _adopt_next(self) -> None:
        """Show the next finished side; the one after waits for the next turn of the event
        loop, so the window paints and answers between the two."""
        if not self.adopting:
            return  # cancelled meanwhile
        job, number, spec, result = self.adopting.pop(0)
        if self.adopting:
            QTimer.singleShot(0, self._adopt_next)
        if job.edits != self.edits:  # edited since it finished: build again
            self.adopting = []
            self.start(self.document, job.specs)
            return
        if isinstance(result, Exception):
            self.failed.emit(number, f"{type(result).__name__}: {result}")
            return
        index, geometry = result
        side = self.sides[number]
        side.spec = spec
        side.set_document(self.document, geometry=geometry, built=index)
        self.built.emit(number)

    def _failed(self, job: _Job, text: str) -> None:
        if self.job is job:
            self.job = None
            for number in range(len(job.specs)):
                self.failed.emit(number, text)

    def cancel(self) -> None:
        """Forget the build in flight and the sides waiting to be shown (dropped)."""
        job, self.job = self.job, None
        self.adopting = []
        if job is not None and job.worker is not None:
            job.worker.cancel()

    def close(self) -> None:
        self.cancel()
        self._follow(None)

    def _follow(self, document) -> None:
        if document is self.document:
            return
        if self.document is not None:
            self.document.scene_changed.disconnect(self._on_scene_changed)
        self.document = document
        if document is not None:
            document.scene_changed.connect(self._on_scene_changed)

    def _on_scene_changed(self, _ids, kind) -> None:
        if kind & ~ChangeKind.SELECTION:
            self.edits += 1
