"""The add-on's connection to Partition Studio, with no Blender in it (plain Python).

Blender hands :class:`SceneStream` snapshots of the scene (:class:`Snapshot`: named boxes in
metres, static and moving); the stream turns them into the live link of
``docs/live-link.md`` through the project's client ``ps_link``:

* :meth:`SceneStream.connect` sends the header — the static boxes, every object's name
  (``meta.names``), ``game``/``source``/``dt``/``units_per_metre`` — then the current frame;
* :meth:`SceneStream.send` sends the moving boxes as one frame. Frame numbers count the frames
  sent on the connection (the stream's numbers must increase, Blender's go back when one
  scrubs); a frame equal to the last one sent (same Blender frame, same boxes) is skipped;
* a header cannot change once frames flow, so a change it would carry (static objects, names,
  the units scale) marks the stream ``stale``: :meth:`SceneStream.send_scene` then reconnects,
  which makes the editor start a new session with the new header.

Sending never waits for the editor: ``ps_link`` keeps a bounded buffer and drops a frame that
would overflow it (counted in :attr:`SceneStream.dropped`). A missing or closed editor is a
line in :attr:`SceneStream.state`, never an exception.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: moving objects take ids from 1 up, static objects from here up: the two ranges never meet
STATIC_ID_BASE = 1 << 26
#: the protocol's bound on ids (binary frames carry ids below 2**27)
ID_LIMIT = 1 << 27
#: seconds a connect may wait for the editor to answer (a refused port answers at once)
CONNECT_TIMEOUT = 2.0
#: seconds a disconnect waits for the editor to read what is pending
CLOSE_TIMEOUT = 1.0

Box = tuple[float, float, float, float, float, float]


@dataclass
class Snapshot:
    """What Blender shows at one moment, in metres.

    ``moving``: ``(name, box)`` of every object sent each frame. ``static``: the same for the
    objects of the header, or ``None`` when they were not measured (a frame change measures
    only the movers); ``static_names`` names them either way (taken from ``static`` when left
    out), so a new or deleted static object is noticed without measuring any.
    """

    scene_frame: int
    moving: list[tuple[str, Box]] = field(default_factory=list)
    static: list[tuple[str, Box]] | None = None
    static_names: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.static_names is None and self.static is not None:
            self.static_names = frozenset(name for name, _ in self.static)


class IdTable:
    """An id per object name, the same for the whole Blender session (reconnects included);
    static and moving objects draw from separate ranges, so a frame never names a static id."""

    def __init__(self) -> None:
        self._moving: dict[str, int] = {}
        self._static: dict[str, int] = {}

    def moving_id(self, name: str) -> int:
        """The id of the moving object ``name`` (assigned at first sight)."""
        return self._assign(self._moving, name, 1, STATIC_ID_BASE)

    def static_id(self, name: str) -> int:
        """The id of the static object ``name`` (assigned at first sight)."""
        return self._assign(self._static, name, STATIC_ID_BASE, ID_LIMIT)

    @staticmethod
    def _assign(table: dict[str, int], name: str, first: int, limit: int) -> int:
        oid = table.get(name)
        if oid is None:
            oid = first + len(table)
            if oid >= limit:
                raise ValueError(f"more than {limit - first} objects named in one session")
            table[name] = oid
        return oid


def _scaled(box: Box, scale: float) -> Box:
    return tuple(float(v) * scale for v in box)  # type: ignore[return-value]


class SceneStream:
    """One add-on's link to Partition Studio (see the module docstring).

    Parameters
    ----------
    client : module
        ``ps_link`` (anything with its ``connect`` and ``LinkError``).
    """

    def __init__(self, client: Any) -> None:
        self.client = client
        self.ids = IdTable()
        self.link: Any = None
        self.address = ""
        self.state = "not connected"
        #: why the header no longer matches the scene ("" while it does)
        self.stale = ""
        self.frames_sent = 0
        self.dropped = 0
        self._frame = 0
        self._last_sent: tuple | None = None
        self._header_static: frozenset[str] = frozenset()
        self._header_rows: list[tuple] = []
        self._header_names: set[str] = set()
        self._scale = 1.0

    # ------------------------------------------------------------------ connection
    @property
    def connected(self) -> bool:
        """True while a link is open and working."""
        return self.link is not None and self.link.connected

    def connect(self, host: str, port: int, snapshot: Snapshot, scale: float = 1.0,
                meta: dict | None = None) -> bool:
        """Connect to the editor at ``host:port`` and send the header and the current frame;
        ``snapshot.static`` must be measured. False (and :attr:`state` says why) when nothing
        listens there. A link already open is closed first: the editor starts a new session."""
        if snapshot.static is None:
            raise ValueError("connect needs the static objects measured (Snapshot.static)")
        self.disconnect()
        try:
            link = self.client.connect(host, int(port), timeout=CONNECT_TIMEOUT)
        except self.client.LinkError as exc:  # its strerror is the whole line, without "[Errno N]"
            self.state = f"not connected: {exc.strerror or exc}"
            return False
        except (OSError, ValueError, OverflowError) as exc:  # a bad host name or port
            self.state = f"not connected: {host}:{port}: {exc}"
            return False
        self.link, self.address, self._scale = link, f"{host}:{port}", float(scale)
        self.frames_sent = self.dropped = 0
        self._frame, self._last_sent, self.stale = 0, None, ""
        static_rows = [(self.ids.static_id(name), *_scaled(box, scale)) for name, box in snapshot.static]
        names = {self.ids.static_id(name): name for name, _ in snapshot.static}
        names.update({self.ids.moving_id(name): name for name, _ in snapshot.moving})
        link.set_static(static_rows)
        link.set_names(names)
        link.set_meta(dict(meta or {}, units_per_metre=float(scale)))
        link.send_header()
        self._header_static = frozenset(snapshot.static_names or ())
        self._header_rows = sorted(static_rows)
        self._header_names = set(names.values())
        self.state = f"connected to {self.address}"
        self.send(snapshot)
        return self.connected

    def disconnect(self, reason: str = "disconnected") -> None:
        """Send what is pending (waiting at most :data:`CLOSE_TIMEOUT`) and close."""
        link, self.link = self.link, None
        if link is None:
            return
        self._count(link)
        try:
            link.close(timeout=CLOSE_TIMEOUT)
        except OSError:
            pass  # the editor is gone already: closing is all that was left to do
        self.state = reason

    # ------------------------------------------------------------------ frames
    def send(self, snapshot: Snapshot) -> bool:
        """Send the moving boxes of ``snapshot`` as the next frame; False when not connected,
        unchanged since the last frame, or dropped (the editor is behind)."""
        if self.link is None:
            return False
        self._notice_changes(snapshot)
        rows = [(self.ids.moving_id(name), _scaled(box, self._scale)) for name, box in snapshot.moving]
        key = (snapshot.scene_frame, tuple(rows))
        if key == self._last_sent:
            return False  # nothing new to say: a redraw or a selection change
        ids = [oid for oid, _ in rows]
        boxes = [v for _, box in rows for v in box]
        self._frame += 1
        sent = self.link.send_frame_arrays(self._frame, ids, boxes, [True] * len(ids))
        self._count(self.link)
        if self.link.error is not None:
            self._lost(self.link.error)
            return False
        if sent:
            self._last_sent = key
        return bool(sent)

    def send_scene(self, host: str, port: int, snapshot: Snapshot, scale: float = 1.0,
                   meta: dict | None = None) -> bool:
        """Send the whole scene: a frame on the open link while its header still holds, else
        (not connected, or :attr:`stale`) a new connection with a new header."""
        if self.connected and not self.stale and float(scale) == self._scale and \
                snapshot.static is not None and self._same_static(snapshot):
            self._last_sent = None  # asked for: send even an unchanged frame
            return self.send(snapshot)
        return self.connect(host, port, snapshot, scale, meta)

    def poll(self) -> None:
        """Push what the socket could not take at once and notice a closed editor (call it
        from a timer: without new frames nothing else would)."""
        if self.link is None:
            return
        self.link.flush()
        self._count(self.link)
        if self.link.error is not None:
            self._lost(self.link.error)

    def mark_stale(self, why: str) -> None:
        """The header no longer matches the scene (e.g. a static object moved)."""
        if self.link is not None and not self.stale:
            self.stale = why
            self.state = f"connected to {self.address} ({why}: Send scene to update)"

    # ------------------------------------------------------------------ helpers
    def _same_static(self, snapshot: Snapshot) -> bool:
        """The measured static boxes are the ones the header carried (names and boxes)."""
        rows = [(self.ids.static_id(name), *_scaled(box, self._scale)) for name, box in snapshot.static or ()]
        return sorted(rows) == self._header_rows

    def _notice_changes(self, snapshot: Snapshot) -> None:
        if snapshot.static_names is not None and snapshot.static_names != self._header_static:
            self.mark_stale("static objects added or removed")
        elif any(name not in self._header_names for name, _ in snapshot.moving):
            self.mark_stale("new objects")

    def _count(self, link) -> None:
        self.frames_sent, self.dropped = link.frames_sent, link.dropped

    def _lost(self, error: BaseException) -> None:
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        link, self.link = self.link, None
        try:
            link.close(timeout=0)
        except OSError:
            pass
        self.state = f"disconnected: the editor closed the connection ({reason})"
