"""The processing process's side of :mod:`.processor_process` (Qt-free).

The child's main thread reads the editor's messages (the game's bytes and connection events,
``want``, ``copies``, ``forget``, ``make_index``, ``queries``, ``stop``, ``abort``); a
:class:`~.processor.LiveProcessor` thread steps the session and hands a frame over when asked;
a *live-ship* thread sends back what it hands over (:mod:`.shipment`), keeping each frame's
copies of the index and hotspot window until the editor fetches them or lets the frame go.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict, deque
from collections.abc import Callable

from spatial.contract import SpatialIndex

from . import shipment
from .processor import FrameCopies, LiveProcessor

#: how often the child sends what its processor posted when no frame was handed over
SHIP_INTERVAL_S = 0.02
#: frames whose copies the child keeps at most: those the editor still holds (the frame on
#: display, the newest handed over, one a worker reads), which it names as it lets them go
MAX_KEPT_FRAMES = 32


def serve_child(conn, make_index: Callable[[], SpatialIndex]) -> None:
    """The child's main: run a :class:`LiveProcessor` on what ``conn`` brings and send back
    what it hands over (see the module docstring). Ends on ``("stop",)`` once everything
    received was processed, on ``("abort",)`` at once, or when the editor's end closes."""
    _ChildServer(conn, make_index).run()


class _ChildServer:
    """The child's side: its main thread reads ``conn``; a *live-ship* thread sends."""

    def __init__(self, conn, make_index: Callable[[], SpatialIndex]) -> None:
        self.conn = conn
        self._inbox: deque[tuple] = deque()
        self._inbox_lock = threading.Lock()
        self._wake = threading.Event()
        self._offered = threading.Event()
        self._finished = threading.Event()
        self._send_lock = threading.Lock()
        self._writer = shipment.ShipmentWriter()
        self._kept: OrderedDict[int, FrameCopies] = OrderedDict()
        self._sent_frames = 0  # frames sent (their keys)
        self.processor = LiveProcessor(self._take, self._wake, make_index,
                                       offered=self._offered.set, on_request=True, warm=True)

    def run(self) -> None:
        shipper = threading.Thread(target=self._ship_run, name="live-ship", daemon=True)
        shipper.start()
        try:
            stopping = self._serve()
            self._finished.set()
            shipper.join()
            self._ship()
            if stopping:  # the frames left on display keep their copies
                for key in list(self._kept):
                    self._send_copies(key)
            with self._send_lock:
                self.conn.send(("ended",))
        except (OSError, ValueError):
            pass
        finally:
            self.conn.close()

    def _serve(self) -> bool:
        """Read the editor's messages until told to end; True if told to stop (not abort)."""
        processor = self.processor
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):
                os._exit(0)  # the editor ended: nothing to hand over to
            kind = message[0]
            if kind == "want":
                processor.request()
            elif kind == "forget":
                with self._send_lock:
                    for key in message[1]:
                        self._kept.pop(key, None)
            elif kind == "copies":
                self._send_copies(message[1])
            elif kind == "make_index":
                processor.make_index = message[1]
            elif kind == "queries":
                processor.queries = message[1]
            elif kind == "abort":
                processor.abort()
                return False
            elif kind == "stop":
                processor.stop(timeout=60.0)
                return True
            else:
                with self._inbox_lock:
                    self._inbox.append(message)
                self._wake.set()

    def _take(self) -> list:
        with self._inbox_lock:
            items = list(self._inbox)
            self._inbox.clear()
        return items

    def _ship_run(self) -> None:
        try:
            while not self._finished.is_set():
                self._offered.wait(SHIP_INTERVAL_S)
                self._offered.clear()
                self._ship()
        except (OSError, ValueError):  # the editor is gone
            os._exit(0)

    def _ship(self) -> None:
        """Send the events posted since the last call, the newest frame handed over (its
        copies kept here) and the counts."""
        processor = self.processor
        newest = processor.take_newest()
        key = None
        if newest is not None:
            self._sent_frames += 1
            key = self._sent_frames
            with self._send_lock:
                self._kept[key] = newest.copies
                while len(self._kept) > MAX_KEPT_FRAMES:  # the editor holds frames it never let go
                    self._kept.popitem(last=False)
        light = None if newest is None else (newest.record, newest.stats, newest.pairs, newest.nodes,
                                             newest.processed, newest.serial, newest.answers)
        counts = (processor.parsed_bytes, tuple(processor.received_at),
                  tuple(processor.processed_at), tuple(processor.step_threads))
        shipment.send(self.conn, self._send_lock, self._writer,
                      ("frames", processor.take_events(), light, key, processor.summary(), counts))

    def _send_copies(self, key: int) -> None:
        with self._send_lock:
            copies = self._kept.get(key)
        pair = copies.get() if copies is not None else None
        shipment.send(self.conn, self._send_lock, self._writer, ("copies", key, pair))
