"""A game's frames processed in a process of their own (Qt-free).

:class:`ProcessLiveProcessor` has the interface of :class:`~.processor.LiveProcessor` (the
display calls ``take_events``, ``take_newest``, ``summary``, ``stop``, ``abort``) but runs that
processor in a child process: every game frame is parsed and stepped there, with a core and an
interpreter lock of its own. In one process, the processing thread and the window's thread
took turns at one interpreter lock: with a game of 10,000 movers the two cores stayed a third
idle while both threads waited for it, and the window showed 16-19 frames a second.

Threads of the editor's process serve it, none of them the window's:

* *live-forward* takes what the socket thread received and writes it to the child;
* *live-collect* reads what the child sends back (:mod:`.shipment`): events in order, every
  frame's record and stats included; the newest processed frame (record, stats, pairs, node
  table), which it completes with the display's ``prepare`` hook; the session's counts.

A frame's copies of the index and of the hotspot window stay in the child until the display
reads them (:class:`~.processor.FrameCopies`): they are 10-30 MB a frame at 30,000 objects,
and sending them with every frame shown held the window at 9-14 frames a second. The
overlay, the bodies, the plots and the status need none of them; a query on the live tree, the
Hotspots list (every few seconds), the inspector and the pair browser fetch them, once per
frame. The child keeps the copies of the frames the editor still holds (it says when it lets
one go), and sends them all before it ends, so the frames left on display keep theirs.

The child's processor hands a frame over when the window asks for one (``on_request``): the
window asks for the next as it takes one, so a frame is on its way while the window paints,
and no copy is made that the window would not show (handed over at a fixed 30 a second, a
game of 10,000 movers kept the processing behind and the window at 15-17 frames a second). A
frame sent is light (record, stats, pairs, node table: 3-4 MB at 30,000 objects, many of whose
arrays the editor already holds: :mod:`.shipment`). The child imports only Qt-free modules;
it ends when told, or when the editor's end of the pipe closes.
"""
from __future__ import annotations

import importlib.machinery
import multiprocessing
import os
import pickle
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable

from spatial.contract import SpatialIndex

from ..hotspots import HotspotWindow
from ..query_answers import QueryAsk
from ..recording import FrameRecord, Recording
from . import shipment
from .processor import FrameCopies, Handover, LiveFrame, LiveHeader, SessionSummary
from .processor_child import serve_child

#: game bytes sent to the child and not parsed yet, at most (then the socket thread queues them)
FORWARD_AHEAD_BYTES = 64 * 1024 * 1024
#: a fetch of a frame's copies waits this long for the child at most
FETCH_TIMEOUT_S = 30.0
#: modules the children's parent process imports once, so a child starts with them loaded
PRELOAD = [__name__, "editor.model.live.processor_child", "spatial.registry", "plugins"]


def process_context():
    """The start method: a fork server where there is one (a child starts in milliseconds,
    forked from a process that never loaded Qt), else a fresh interpreter."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        return context
    return multiprocessing.get_context("spawn")


def runs_in_child(make_index) -> bool:
    """True if ``make_index`` can be sent to a child process: a backend class (and parameters)
    whose module the child can import by name, as the built-in backends and installed plugin
    packages are. A plugin loaded from a file the child cannot import stays on a thread."""
    backend = getattr(make_index, "func", None)
    module = getattr(backend, "__module__", None)
    if module is None:
        return False
    try:
        # looked up on the import path, as the child will (a module loaded from a file is in
        # this process's sys.modules under a name no finder knows)
        top = importlib.machinery.PathFinder.find_spec(module.partition(".")[0])
        if top is None or not _defined_under(sys.modules.get(module), top):
            return False
        pickle.dumps(make_index)
    except Exception:  # noqa: BLE001 (anything unpicklable or unimportable: keep it here)
        return False
    return True


class ProcessLiveProcessor:
    """:class:`~.processor.LiveProcessor`'s interface, the processing in a child process (see
    the module docstring). ``make_index`` must be picklable (:func:`runs_in_child`);
    ``prepare`` and ``offered`` run in this process, on the collecting thread."""

    def __init__(self, take: Callable[[], list], wake: threading.Event,
                 make_index: Callable[[], SpatialIndex],
                 prepare: Callable[[FrameRecord], object] | None = None,
                 offered: Callable[[], None] | None = None) -> None:
        self._take = take
        self._wake = wake
        self.prepare = prepare
        self.offered = offered
        self._make_index = self._started_with = make_index
        self._queries: QueryAsk | None = None
        context = process_context()
        self._conn, self._child_conn = context.Pipe()
        self._process = context.Process(target=serve_child, args=(self._child_conn, make_index),
                                        name="live-processor", daemon=True)
        self._send_lock = threading.Lock()
        self._handover = Handover()
        self._header: LiveHeader | None = None
        self._copies = threading.Condition()
        self._arrived: dict[int, tuple] = {}   # frame copies sent by the child, by key
        self._forgotten: deque[int] = deque()  # keys of frames no one here holds any more
        self._want = False  # the display took a frame: ask the child for the next
        self.pid: int | None = None
        self.forwarded_bytes = 0  # game bytes written to the child
        self.backlog_bytes = 0    # game bytes taken from the socket thread, not written yet
        self.consumed_bytes = 0   # of those, parsed by the child's session
        self.received_at: tuple[float, ...] = ()
        self.processed_at: tuple[float, ...] = ()
        self.fetches = 0          # frames whose copies the display fetched
        #: names of the child's threads that stepped a frame
        self.step_threads: set[str] = set()
        self._started = threading.Event()
        self._ended = threading.Event()   # the child said it ended (or its pipe closed)
        self._stop = threading.Event()
        self._draining = threading.Event()
        self._forward = threading.Thread(target=self._forward_run, name="live-forward", daemon=True)
        self._collect = threading.Thread(target=self._collect_run, name="live-collect", daemon=True)
        self._forward.start()  # it starts the child: a first start waits for the fork server

    # ------------------------------------------------------------------ the display's side
    def take_events(self) -> list[tuple]:
        """Every event since the last call, in order (see :meth:`LiveProcessor.take_events`)."""
        return self._handover.take_events()

    def take_newest(self) -> LiveFrame | None:
        """The newest frame handed over since the last call (``None``: none since)."""
        frame = self._handover.take_newest()
        if frame is not None:  # the forwarding thread asks the child for the next one
            self._want = True
            self._wake.set()
        return frame

    def summary(self) -> SessionSummary | None:
        """The counts of the current game's session, as the child last sent them."""
        return self._handover.summary

    @property
    def pending_bytes(self) -> int:
        """Game bytes taken from the socket thread and not parsed yet."""
        return self.backlog_bytes + self.ahead_bytes

    @property
    def ahead_bytes(self) -> int:
        """Game bytes sent to the child and not parsed yet (at most about
        :data:`FORWARD_AHEAD_BYTES`)."""
        return max(0, self.forwarded_bytes - self.consumed_bytes)

    @property
    def make_index(self) -> Callable[[], SpatialIndex]:
        return self._make_index

    @make_index.setter
    def make_index(self, factory: Callable[[], SpatialIndex]) -> None:
        """The index factory for the next game to connect (sent when it changed)."""
        if _same_factory(factory, self._make_index):
            return
        self._make_index = factory
        self._send(("make_index", factory))

    @property
    def queries(self) -> QueryAsk | None:
        """The ray and frustum answered on each frame handed over (see
        :attr:`LiveProcessor.queries`); set here, sent to the child."""
        return self._queries

    @queries.setter
    def queries(self, ask: QueryAsk | None) -> None:
        self._queries = ask
        self._send(("queries", ask))

    @property
    def running(self) -> bool:
        return not self._ended.is_set()

    def stop(self, timeout: float = 1.0) -> bool:
        """Process what was already received, then end the child; True if it ended within
        ``timeout`` seconds (else it ends on its own once done)."""
        self._draining.set()
        self._wake.set()
        self._forward.join(timeout)
        ended = self._ended.wait(max(0.0, timeout))
        if ended and self._collect.is_alive():
            self._collect.join(timeout)
        return ended

    def abort(self) -> None:
        """End the child after the frame in hand, dropping what was not processed."""
        self._stop.set()
        self._wake.set()
        self._send(("abort",))

    # ------------------------------------------------------------------ the forwarding thread
    def _send(self, message: tuple) -> None:
        with self._send_lock:
            if not self._started.is_set():
                if message[0] == "abort":
                    self._ended.set()
                return  # before the child started: it starts with the newest factory and ask
            try:
                self._conn.send(message)
            except (OSError, ValueError):  # the child is gone
                self._ended.set()

    def _forward_run(self) -> None:
        try:
            self._process.start()
        except Exception as exc:  # noqa: BLE001 (no process: one line, the link stays up)
            first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
            self._end(f"the processing process could not start: {type(exc).__name__}: {first}")
            return
        finally:
            self._child_conn.close()
        self.pid = self._process.pid
        with self._send_lock:  # what was set before the child started
            if not _same_factory(self._make_index, self._started_with):
                self._conn.send(("make_index", self._make_index))
            if self._queries is not None:
                self._conn.send(("queries", self._queries))
            self._started.set()  # under the lock: a value set meanwhile is sent after these
        self._collect.start()
        if self._stop.is_set():
            self._send(("abort",))
            return
        backlog: deque[tuple] = deque()  # taken from the socket thread, not sent yet
        while not self._stop.is_set() and not self._ended.is_set():
            self._wake.wait(0.05)
            self._wake.clear()
            # the child reads everything it is sent: what it has not parsed stays under the
            # bound, the rest waits here (one take's worth) and then in the socket thread's
            # queue, which lets TCP push back
            took = self.ahead_bytes + self.backlog_bytes < FORWARD_AHEAD_BYTES
            events = self._take() if took else []
            for event in events:
                backlog.append(event)
                self.backlog_bytes += len(event[1]) if event[0] == "data" else 0
            while backlog and self.ahead_bytes < FORWARD_AHEAD_BYTES:
                event = backlog.popleft()
                if event[0] == "data":
                    self.backlog_bytes -= len(event[1])
                    self.forwarded_bytes += len(event[1])
                self._send(event)
            if self._want:
                self._want = False
                self._send(("want",))
            forgotten = [self._forgotten.popleft() for _ in range(len(self._forgotten))]
            if forgotten:
                self._send(("forget", forgotten))
            if took and not events and not backlog and self._draining.is_set():
                self._send(("stop",))
                return

    # ------------------------------------------------------------------ the collecting thread
    def _collect_run(self) -> None:
        reader = shipment.ShipmentReader()
        try:
            while True:
                message = self._conn.recv()
                if message[0] == "ended":
                    break
                shipped = shipment.receive(self._conn, reader, message)
                if shipped[0] == "copies":
                    with self._copies:
                        self._arrived[shipped[1]] = shipped[2]
                        self._copies.notify_all()
                else:
                    self._on_frames(*shipped[1:])
        except (EOFError, OSError):
            self._post(("closed", "the processing process ended"))
        finally:
            self._end(None)

    def _on_frames(self, events, light, key, summary, counts) -> None:
        for event in events:
            if event[0] == "header":
                self._header = event[1]
        newest = None
        if light is not None:
            record, stats, pairs, nodes, processed, serial, answers = light
            copies = FrameCopies(fetch=lambda: self._fetch_copies(key, record))
            # once no frame here holds them, the child lets its copies go (the finaliser names
            # this processor weakly: held strongly, it kept the processor and its newest frame
            # alive for good, as that frame holds these copies)
            weakref.finalize(copies, _forget_copies, weakref.ref(self), key)
            newest = LiveFrame(record, stats, pairs, nodes, copies, processed, serial,
                               self.prepare(record) if self.prepare is not None else None,
                               answers)
        self._handover.post(*events, newest=newest, summary=summary)
        self.consumed_bytes, self.received_at, self.processed_at, threads = counts
        self.step_threads.update(threads)
        if newest is not None and self.offered is not None:
            self.offered()

    def _end(self, reason: str | None) -> None:
        if reason is not None:
            self._post(("closed", reason))
        with self._copies:
            self._ended.set()
            self._copies.notify_all()
        if self._process.pid is not None:
            self._process.join(1.0)
            if self._process.is_alive():
                self._process.terminate()

    def _forget(self, key: int) -> None:
        """Called wherever the frame's last reference went: the forwarding thread tells the
        child (a send here could wait for the pipe)."""
        self._forgotten.append(key)
        self._wake.set()

    def _fetch_copies(self, key: int, record: FrameRecord) -> tuple[SpatialIndex, HotspotWindow]:
        """The copies of the frame the child sent under ``key``: asked for and waited for
        (called on whichever thread reads the frame's index first)."""
        self.fetches += 1
        deadline = time.monotonic() + FETCH_TIMEOUT_S
        with self._copies:
            if key not in self._arrived and not self._ended.is_set():
                self._send(("copies", key))
            while key not in self._arrived and not self._ended.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._copies.wait(left)
            pair = self._arrived.pop(key, None)
        return pair if pair is not None else self._rebuilt(record)

    def _rebuilt(self, record: FrameRecord) -> tuple[SpatialIndex, HotspotWindow]:
        """The child is gone (or no longer had the frame): an index built here from the
        frame's boxes, so a reader still finds every object of the frame where it was."""
        rec = Recording()
        header = self._header
        if header is not None:
            rec.static_ids, rec.static_lo, rec.static_hi = header.static_ids, header.static_lo, header.static_hi
        ids, lo, hi, dynamic, awake = rec.boxes(record)
        index = self._make_index()
        index.build(ids, lo, hi, dynamic=dynamic, awake=awake)
        return index, HotspotWindow()

    def _post(self, event: tuple) -> None:
        self._handover.post(event)


def _forget_copies(processor_ref, key: int) -> None:
    """A frame's copies were let go: tell its processor, if it is still there."""
    processor = processor_ref()
    if processor is not None:
        processor._forget(key)


def _defined_under(module, top) -> bool:
    """``module`` was loaded from the file of ``top`` (a package's spec) or from inside it."""
    path = getattr(module, "__file__", None)
    if path is None or top.origin is None:
        return False
    root = os.path.dirname(top.origin) if top.submodule_search_locations else top.origin
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root + os.sep)


def _same_factory(a, b) -> bool:
    """Two index factories make the same index (same backend class and parameters)."""
    if a is b:
        return True
    return hasattr(a, "func") and (a.func, a.args, a.keywords) == \
        (getattr(b, "func", None), getattr(b, "args", None), getattr(b, "keywords", None))
