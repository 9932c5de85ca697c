"""Objects full of arrays sent between processes, each array's bytes sent once (Qt-free).

A live game's newest frame goes from the processing process to the window's with copies of
the index and of the hotspot window: 20-30 MB in 100-300 arrays at 30,000 objects, most of
them equal to the previous frame's (the static cells, the hotspot window's per-frame arrays,
the slots of cells seen before). :class:`ShipmentWriter` pickles a shipment with each large
array replaced by a reference: to an array the reader already holds, when the previous
shipment had an equal one (the same array, or one of the same type and shape whose bytes are
equal), else to a new array whose bytes follow the pickle as they are. :class:`ShipmentReader`
resolves the references. Both keep the arrays of the last shipment only.

Arrays a reader holds are shared between the objects it rebuilt: the shipments' objects are
read, never written (the display's copies of a frame).
"""
from __future__ import annotations

import io
import os
import pickle
import socket
import threading
from collections import defaultdict

import numpy as np

#: arrays smaller than this go inside the pickle (a reference costs about as much)
MIN_SHARED_BYTES = 32 * 1024


class ShipmentWriter:
    """The sending side (see the module docstring)."""

    def __init__(self) -> None:
        self._next_token = 0
        self._by_id: dict[int, tuple[np.ndarray, int]] = {}
        self._by_kind: dict[tuple, list[tuple[np.ndarray, int]]] = {}
        self.sent_bytes = 0      # array bytes sent, last shipment
        self.reused_bytes = 0    # array bytes referred to, last shipment

    def encode(self, shipment) -> tuple[bytes, list[memoryview]]:
        """``(payload, array bytes)``: the pickle of ``shipment`` and the bytes of its new
        arrays, in order."""
        by_id: dict[int, tuple[np.ndarray, int]] = {}
        by_kind: dict[tuple, list[tuple[np.ndarray, int]]] = defaultdict(list)
        hints = {kind: iter(arrays) for kind, arrays in self._by_kind.items()}
        new: list[np.ndarray] = []
        self.sent_bytes = self.reused_bytes = 0
        writer = self

        class Pickler(pickle.Pickler):
            def persistent_id(self, obj):
                if type(obj) is not np.ndarray or obj.nbytes < MIN_SHARED_BYTES or \
                        obj.dtype.hasobject or not obj.flags.c_contiguous:
                    return None
                kind = (obj.dtype.str, obj.shape)
                reference: tuple
                known = by_id.get(id(obj)) or writer._by_id.get(id(obj))
                token = known[1] if known is not None and known[0] is obj else None
                if token is None:
                    # the previous shipment's array of the same kind at the same turn (objects
                    # of the same structure list their arrays in the same order), if its bytes
                    # are equal
                    hint = next(hints[kind], None) if kind in hints else None
                    if hint is not None and _same_bytes(hint[0], obj):
                        token = hint[1]
                if token is None:
                    token = writer._next_token
                    writer._next_token += 1
                    new.append(obj)
                    writer.sent_bytes += obj.nbytes
                    reference = ("new", token, obj.dtype.str, obj.shape)
                else:
                    writer.reused_bytes += obj.nbytes
                    reference = ("held", token)
                by_id[id(obj)] = (obj, token)
                by_kind[kind].append((obj, token))
                return reference

        stream = io.BytesIO()
        Pickler(stream, protocol=5).dump(shipment)
        self._by_id, self._by_kind = by_id, dict(by_kind)
        return stream.getvalue(), [array.data.cast("B") for array in new]


class ShipmentReader:
    """The receiving side (see the module docstring)."""

    def __init__(self) -> None:
        self._held: dict[int, np.ndarray] = {}

    def decode(self, payload: bytes, buffers: list):
        """The shipment of ``payload``, its new arrays' bytes in ``buffers`` (in order)."""
        fresh = iter(buffers)
        held = self._held
        used: dict[int, np.ndarray] = {}

        class Unpickler(pickle.Unpickler):
            def persistent_load(self, reference):
                if reference[0] == "new":
                    _, token, dtype, shape = reference
                    array = np.frombuffer(next(fresh), dtype=np.dtype(dtype)).reshape(shape)
                else:
                    token = reference[1]
                    known = used.get(token)
                    array = known if known is not None else held[token]
                used[token] = array
                return array

        shipment = Unpickler(io.BytesIO(payload)).load()
        self._held = used
        return shipment


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equal (NaN equal to itself); both C-contiguous, of one dtype and shape."""
    if a.flags.c_contiguous is False:
        return False
    return bool(np.array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8)))


# ---------------------------------------------------------------------- over a connection
def send(conn, lock: threading.Lock, writer: ShipmentWriter, shipment) -> None:
    """Send ``shipment`` on ``conn``: a message with the pickle and the sizes of the new
    arrays, then their bytes in one write (see :func:`receive`)."""
    with lock:  # encoded in the order sent: the reader decodes them in that order
        payload, views = writer.encode(shipment)
        conn.send(("shipment", payload, [view.nbytes for view in views]))
        _write_all(conn, [view for view in views if view.nbytes])


def receive(conn, reader: ShipmentReader, message: tuple):
    """The shipment ``message`` announced, its new arrays read straight into writable
    buffers of their own, in one read."""
    _, payload, sizes = message
    # not zero-filled (bytearray's was 6 % of the window's process, holding the interpreter
    # lock): the read fills them, without the lock
    buffers = [np.empty(size, dtype=np.uint8) for size in sizes]
    _read_all(conn, [buffer.data for buffer in buffers if len(buffer)])
    return reader.decode(payload, buffers)


#: on POSIX a connection is a socket: the arrays' bytes go in one gathered write and come in
#: one scattered read on its descriptor. A read per array waited for the interpreter lock each
#: time (the window's thread holds it for milliseconds at a time). Windows' pipes take the
#: connection's own framing.
_SCATTER = os.name == "posix" and hasattr(socket.socket, "recvmsg_into")
#: buffers per system call (POSIX guarantees at least 16; Linux and macOS take 1024)
_IOV_MAX = 512


def _write_all(conn, views: list[memoryview]) -> None:
    if not _SCATTER:
        for view in views:
            conn.send_bytes(view)
        return
    raw = socket.socket(fileno=conn.fileno())
    try:
        while views:
            views = _advance(views, raw.sendmsg(views[:_IOV_MAX]))
    finally:
        raw.detach()  # the connection keeps its descriptor


def _read_all(conn, views: list[memoryview]) -> None:
    if not _SCATTER:
        for view in views:
            conn.recv_bytes_into(view)
        return
    raw = socket.socket(fileno=conn.fileno())
    try:
        while views:
            got = raw.recvmsg_into(views[:_IOV_MAX], 0, socket.MSG_WAITALL)[0]
            if got == 0:
                raise EOFError("the processing process closed its pipe mid-frame")
            views = _advance(views, got)
    finally:
        raw.detach()


def _advance(views: list[memoryview], done: int) -> list[memoryview]:
    """``views`` without their first ``done`` bytes."""
    k = 0
    while k < len(views) and done >= views[k].nbytes:
        done -= views[k].nbytes
        k += 1
    rest = views[k:]
    if done and rest:
        rest[0] = rest[0][done:]
    return rest
