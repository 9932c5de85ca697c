"""ps_link: stream a game's boxes to Partition Studio, live or to a file.

One stdlib-only file: copy it into a game or a tool (Blender add-on, test harness). The
stream is the one ``docs/live-link.md`` describes: one header line (static boxes, meta,
object names), then a frame each game frame, as a JSON line or a compact binary frame.

    import ps_link
    link = ps_link.connect("127.0.0.1", 7878)        # or ps_link.save("run.psl")
    link.set_static([(1000, -64, -64, -16, 64, 64, 0)])
    link.set_names({1000: "floor", 7: "ogre"})
    link.set_meta({"game": "mygame", "dt": 1 / 60})
    for frame in range(1, 601):
        link.send_frame(frame, [(7, x, 0, 0, x + 32, 32, 56, True)])   # binary by default
    link.close()

Sending never stalls the game: the socket is non-blocking and what it cannot take at once
waits in a buffer of at most ``buffer_bytes``; a frame that would overflow it is dropped
whole and counted (:attr:`Link.dropped`), so the editor sees a gap in frame numbers rather
than a game that waits. The header is never dropped. In save mode every frame is written.
"""
from __future__ import annotations

import errno
import json
import os
import socket
import struct
import sys
import time
from array import array

__all__ = ["Link", "LinkError", "connect", "save", "encode_binary_frame", "encode_text_frame",
           "DEFAULT_PORT", "BINARY_MAGIC"]

DEFAULT_PORT = 7878
#: the first bytes of a binary frame (a NUL never occurs in JSON text)
BINARY_MAGIC = b"\x00PSB"
#: default bound of the bytes waiting to be sent
DEFAULT_BUFFER_BYTES = 8 * 1024 * 1024
_HEAD = struct.Struct("<4sIIII")
_LITTLE = sys.byteorder == "little"


class LinkError(OSError):
    """The link could not connect, or could not write its file."""


def _rows(objects, width):
    """Split ``(id, minx, miny, minz, maxx, maxy, maxz[, awake])`` rows into flat columns."""
    ids, boxes, awake = array("I"), array("f"), bytearray()
    for row in objects:
        ids.append(int(row[0]))
        boxes.extend(float(v) for v in row[1:7])
        if width:
            awake.append(1 if (len(row) < 8 or row[7]) else 0)
    return ids, boxes, awake


def encode_binary_frame(frame, ids, boxes, awake):
    """Bytes of one binary frame.

    ``ids``: n ints; ``boxes``: 6n floats (minx, miny, minz, maxx, maxy, maxz per object);
    ``awake``: n flags.
    """
    ids = ids if isinstance(ids, array) and ids.typecode == "I" else array("I", ids)
    boxes = boxes if isinstance(boxes, array) and boxes.typecode == "f" else array("f", boxes)
    flags = bytes(bytearray(1 if a else 0 for a in awake))
    n = len(ids)
    if len(boxes) != 6 * n or len(flags) != n:
        raise ValueError(f"{n} ids need {6 * n} box values and {n} awake flags, "
                         f"got {len(boxes)} and {len(flags)}")
    if not _LITTLE:
        ids, boxes = array("I", ids), array("f", boxes)
        ids.byteswap()
        boxes.byteswap()
    length = 12 + n * 29
    return _HEAD.pack(BINARY_MAGIC, length, frame, n, 0) + ids.tobytes() + boxes.tobytes() + flags


def encode_text_frame(frame, objects):
    """Bytes of one frame line: ``objects`` rows ``(id, minx, ..., maxz[, awake])``."""
    rows = [[int(r[0])] + [float(v) for v in r[1:7]] + [bool(r[7]) if len(r) > 7 else True]
            for r in objects]
    return (json.dumps({"frame": int(frame), "objects": rows}, separators=(",", ":")) + "\n").encode()


class Link:
    """A connection (or a file) a game sends its frames to. Make one with :func:`connect` or
    :func:`save`; the counters say what happened: ``frames_sent``, ``dropped``, ``bytes_sent``."""

    def __init__(self, sock=None, file=None, path=None, buffer_bytes=DEFAULT_BUFFER_BYTES):
        self._sock, self._file, self._path = sock, file, path
        self.buffer_bytes = int(buffer_bytes)
        self._pending = bytearray()
        self._static = []
        self._meta = {}
        self._header_sent = False
        self.frames_sent = 0
        self.dropped = 0
        self.bytes_sent = 0
        self.closed = False
        self.error = None

    # ------------------------------------------------------------------ header
    def set_static(self, boxes):
        """Objects that never move: rows ``(id, minx, miny, minz, maxx, maxy, maxz)``.
        Sent with the header, before the first frame."""
        self._before_header("set_static")
        self._static.extend([int(r[0])] + [float(v) for v in r[1:7]] for r in boxes)

    def set_names(self, names):
        """Names the editor shows for object ids: ``{id: "name"}`` (in the header's meta)."""
        self._before_header("set_names")
        self._meta.setdefault("names", {}).update({str(int(k)): str(v) for k, v in names.items()})

    def set_meta(self, meta):
        """Any JSON object kept with the recording (``game``, ``dt``...)."""
        self._before_header("set_meta")
        self._meta.update(meta)

    def _before_header(self, what):
        if self._header_sent:
            raise RuntimeError(f"{what}: the header was already sent (call it before the first frame)")

    def send_header(self):
        """Send the header now (the first frame sends it otherwise). Never dropped."""
        if self._header_sent:
            return
        header = {"static": self._static}
        if self._meta:
            header["meta"] = self._meta
        self._header_sent = True
        self._write((json.dumps(header, separators=(",", ":")) + "\n").encode(), droppable=False)

    # ------------------------------------------------------------------ frames
    def send_frame(self, frame, objects, binary=True):
        """Send every dynamic object alive at the end of ``frame``: rows
        ``(id, minx, miny, minz, maxx, maxy, maxz[, awake])``. Returns False if dropped."""
        if binary:
            ids, boxes, awake = _rows(objects, 1)
            return self.send_frame_arrays(frame, ids, boxes, awake)
        self.send_header()
        return self._write(encode_text_frame(frame, objects))

    def send_frame_arrays(self, frame, ids, boxes, awake):
        """Binary frame from columns: ``ids`` (n), ``boxes`` (6n floats), ``awake`` (n).
        Returns False when the frame was dropped because the editor is behind."""
        self.send_header()
        return self._write(encode_binary_frame(frame, ids, boxes, awake))

    # ------------------------------------------------------------------ transport
    def _write(self, data, droppable=True):
        if self.closed:
            raise RuntimeError("the link is closed")
        if self._file is not None:
            self._file.write(data)
            self.frames_sent += droppable
            self.bytes_sent += len(data)
            return True
        self.flush()
        if self.error is not None or (droppable and len(self._pending) + len(data) > self.buffer_bytes):
            self.dropped += droppable
            return False
        self._pending += data
        self.frames_sent += droppable
        self.flush()
        return True

    def flush(self, timeout=0.0):
        """Send what is pending without blocking (or waiting up to ``timeout`` seconds).
        Returns the bytes still pending."""
        deadline = time.monotonic() + timeout
        while self._pending and self._sock is not None and self.error is None:
            try:
                sent = self._sock.send(self._pending)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError as exc:  # the editor went away: count frames as dropped from now on
                self.error = exc
                break
            del self._pending[:sent]
            self.bytes_sent += sent
            if not self._pending or time.monotonic() >= deadline:
                break
            if sent == 0:
                time.sleep(0.001)
        return len(self._pending)

    @property
    def connected(self):
        """True while the socket works (always True in save mode until closed)."""
        return not self.closed and self.error is None

    def close(self, timeout=2.0):
        """Send what is pending, tell the editor the stream ended and wait until it has read
        everything and closed its side (all within ``timeout`` s), then close; a save file is
        moved into place only now, so it is never left half-written.

        Waiting for the editor's side to close means a game (or a Blender add-on) that
        connects again right after closing is taken as the next game, not refused as a second
        one while the editor still reads the first."""
        if self.closed:
            return
        if self._sock is not None:
            deadline = time.monotonic() + timeout
            self.flush(timeout)
            self._wait_for_peer_close(deadline)
            self._sock.close()
        if self._file is not None:
            self.send_header()  # a file with no frame still says what it is
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            os.replace(self._path + ".part", self._path)
        self.closed = True

    def _wait_for_peer_close(self, deadline):
        """Half-close the socket (the editor reads the end of the stream) and read until the
        editor closes its side or ``deadline`` passes; the editor never writes back, so
        anything read is discarded."""
        if self.error is not None:
            return
        try:
            self._sock.shutdown(socket.SHUT_WR)
            while time.monotonic() < deadline:
                try:
                    if not self._sock.recv(4096):
                        return
                except (BlockingIOError, InterruptedError):
                    time.sleep(0.005)
        except OSError:  # reset or already gone: nothing more to wait for
            return

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def connect(host="127.0.0.1", port=DEFAULT_PORT, buffer_bytes=DEFAULT_BUFFER_BYTES, timeout=5.0):
    """A :class:`Link` to an editor (or ``app.py listen``) at ``host:port``.

    Connecting may wait up to ``timeout`` seconds (before the game loop starts); after that
    the socket never blocks. Raises :class:`LinkError` when nothing listens there.
    """
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as exc:
        raise LinkError(exc.errno or errno.ECONNREFUSED,
                        f"cannot connect to {host}:{port}: {exc.strerror or exc}") from None
    sock.setblocking(False)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return Link(sock=sock, buffer_bytes=buffer_bytes)


def save(path):
    """A :class:`Link` writing the stream to ``path`` (replay it with
    ``app.py simulate --recording PATH``); the file appears whole at :meth:`Link.close`."""
    path = os.fspath(path)
    try:
        file = open(path + ".part", "wb")
    except OSError as exc:
        raise LinkError(exc.errno, f"{path}: cannot write: {exc.strerror}") from None
    return Link(file=file, path=path)
