"""The socket side of the editor's live link: a thread that accepts games and reads their bytes.

:class:`Receiver` listens on one address. Its thread accepts one game at a time, reads what the
game sends and queues it, with the connection's events, for the processing thread to take with
:meth:`Receiver.take`, woken by :attr:`Receiver.arrived` (that thread parses and processes;
this one never touches the index or Qt). When the game disconnects it goes back to accepting,
so a game can reconnect without a restart; a second game connecting meanwhile is refused with
a closed socket.
"""
from __future__ import annotations

import socket
import threading
from collections import deque
from typing import Literal

#: bytes read at a time
READ_BYTES = 1 << 20
#: bytes queued for processing before the thread stops reading (the game then drops frames)
MAX_QUEUED_BYTES = 256 * 1024 * 1024

#: what the thread queues for processing: a game connected (its ``host:port``), bytes it
#: sent, another game refused meanwhile (its ``host:port``), its connection closed (the reason)
LinkEvent = (tuple[Literal["connected"], str] | tuple[Literal["data"], bytes]
             | tuple[Literal["refused"], str] | tuple[Literal["closed"], str])


def parse_address(text: str, default_host: str = "127.0.0.1") -> tuple[str, int]:
    """``[HOST:]PORT`` as ``(host, port)``; ``ValueError`` with one line if it is not one."""
    host, _, port = text.strip().rpartition(":")
    host = host.strip("[]") or default_host
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"expected [HOST:]PORT with a port in 0..65535, got {text!r}")
    return host, int(port)


class Receiver:
    """Listen on ``host:port`` (see the module docstring); raises ``OSError`` if it cannot."""

    def __init__(self, host: str = "127.0.0.1", port: int = 7878) -> None:
        self.server = socket.create_server((host, port))
        self.server.settimeout(0.2)  # so stop() is noticed
        self.address = "{}:{}".format(*self.server.getsockname()[:2])
        self._events: deque[LinkEvent] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._drop = threading.Event()
        #: set whenever an event is queued, so the processing thread wakes at once
        self.arrived = threading.Event()
        self.queued_bytes = 0
        self._thread = threading.Thread(target=self._run, name="live-link", daemon=True)
        self._thread.start()

    def take(self) -> list[LinkEvent]:
        """Every event queued since the last call, in order."""
        with self._lock:
            events = list(self._events)
            self._events.clear()
            self.queued_bytes = 0
        return events

    def drop_connection(self) -> None:
        """Close the current game's connection (a broken stream); keep listening."""
        self._drop.set()

    def stop(self) -> None:
        """Stop listening and close any connection (returns once the thread ended)."""
        self._stop.set()
        self._thread.join(timeout=2)
        self.server.close()

    def _push(self, event: LinkEvent) -> None:
        with self._lock:
            self._events.append(event)
            if event[0] == "data":
                self.queued_bytes += len(event[1])
        self.arrived.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, peer = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._drop.clear()
            self._push(("connected", f"{peer[0]}:{peer[1]}"))
            self._push(("closed", self._serve(conn)))

    def _refuse_others(self) -> None:
        """Close every other game that connected meanwhile: one game at a time, each told by
        a closed socket and named in one ``("refused", peer)`` event."""
        self.server.settimeout(0)
        try:
            while True:
                other, peer = self.server.accept()
                other.close()
                self._push(("refused", f"{peer[0]}:{peer[1]}"))
        except OSError:  # nothing more waiting (BlockingIOError) or the server closed
            pass
        finally:
            self.server.settimeout(0.2)

    def _serve(self, conn: socket.socket) -> str:
        conn.settimeout(0.2)
        with conn:
            while not self._stop.is_set() and not self._drop.is_set():
                if self.queued_bytes > MAX_QUEUED_BYTES:  # the editor is behind: let TCP push back
                    self._stop.wait(0.01)
                    continue
                self._refuse_others()
                try:
                    data = conn.recv(READ_BYTES)
                except TimeoutError:
                    continue
                except OSError as exc:
                    return f"connection lost: {exc.strerror or exc}"
                if not data:
                    return "the game disconnected"
                self._push(("data", data))
        return "closed by the editor"
