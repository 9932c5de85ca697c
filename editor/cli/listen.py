"""``listen``: take a running game's frames over TCP and report them like ``simulate``.

``python app.py listen --port PORT [--host H] [--backend NAME] [--param K=V ...]
[--frames N] [--save-recording FILE] [--force] [--json]`` waits for one game to connect
(``docs/live-link.md``: frame lines and binary frames), steps the chosen backend through every
frame it sends and, after ``N`` frames or when the game disconnects, prints the document
``simulate --json`` prints, with ``mode`` ``live`` and one entry per frame under ``frames``,
plus ``link`` (address, bytes received, frames, the stream fault if any). Each hotspot also
lists the objects its cell stores (``stored``: id, the game's name, tests it causes a frame)
and the overlapping pairs found there (``pairs``), ten of each, with their counts.

It binds ``127.0.0.1`` unless ``--host`` names another address; ``--port 0`` picks a free port.
The address is announced on stderr (``listening on HOST:PORT``) before the first connection.
A broken stream stops the session with one warning line naming the byte offset, line and
frame; the frames before it are reported and saved. ``--save-recording`` (``.npz`` or frame
lines) is checked before listening and written atomically at the end.
"""
from __future__ import annotations

import socket
import sys

from editor.model.live.frame_stream import StreamError
from spatial.atomic import check_output_path
from spatial.params import params_to_dict

from . import PROG, CliError, _add_backend_args, make_backend, subcommand
from .simulate import _no_source, _save_recording, _show, _summary

#: bytes read from the socket at a time
READ_BYTES = 1 << 20


def _configure(p) -> None:
    p.add_argument("--port", type=int, required=True, help="TCP port to listen on (0: any free port)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--frames", type=int, metavar="N", help="stop after N frames (default: at disconnect)")
    p.add_argument("--timeout", type=float, metavar="S", help="give up when no game connects within S seconds")
    p.add_argument("--window", type=int, default=60, metavar="W", help="hotspot window in frames (default 60)")
    p.add_argument("--top", type=int, default=10, metavar="K", help="hotspots listed (default 10)")
    p.add_argument("--save-recording", metavar="OUT", help="save the frames (.npz, or .jsonl frame lines)")
    p.add_argument("--force", action="store_true", help="let --save-recording overwrite an existing file")
    _add_backend_args(p)


def open_listener(host: str, port: int) -> socket.socket:
    """A listening TCP socket, or a :class:`CliError` naming the address and the reason."""
    if not 0 <= port < 65536:
        raise CliError(f"--port must be between 0 and 65535, got {port}")
    try:
        return socket.create_server((host, port))
    except OSError as exc:
        raise CliError(f"{host}:{port}: cannot listen: {exc.strerror or exc}") from None


def _accept(server: socket.socket, timeout: float | None) -> tuple[socket.socket, str]:
    server.settimeout(timeout)
    try:
        conn, peer = server.accept()
    except TimeoutError:
        raise CliError(f"no game connected within {timeout:g} s") from None
    conn.settimeout(None)
    return conn, f"{peer[0]}:{peer[1]}"


def _receive(conn: socket.socket, session) -> None:
    """Feed the session until its frame limit, the game's disconnect or a stream fault."""
    while not session.done:
        try:
            data = conn.recv(READ_BYTES)
        except ConnectionError:
            data = b""  # a reset is a disconnect: what came before stays
        if not data:
            session.finish()
            return
        session.feed(data)


def cmd_listen(args) -> dict:
    """Listen, take one game's frames and report them (see the module docstring)."""
    from editor.model.live.session import LiveSession
    from editor.model.simulation import lifespan_histogram

    if args.frames is not None and args.frames < 1:
        raise CliError(f"--frames must be at least 1, got {args.frames}")
    if args.window < 1 or args.top < 0:
        raise CliError("--window must be at least 1 and --top at least 0")
    if args.save_recording:
        check_output_path(args.save_recording, args.force, "--save-recording")
    index = make_backend(args.backend, args.param, args.params, _no_source())
    server = open_listener(args.host, args.port)
    address = "{}:{}".format(*server.getsockname()[:2])
    print(f"{PROG}: listening on {address}", file=sys.stderr, flush=True)
    with server:
        conn, peer = _accept(server, args.timeout)
    session = LiveSession(index, f"tcp://{peer}", hotspot_window=args.window, limit=args.frames,
                          capacity=args.frames or 36_000)
    error = None
    with conn:
        try:
            _receive(conn, session)
        except StreamError as exc:
            error = str(exc)
            print(f"{PROG}: warning: {error}", file=sys.stderr, flush=True)
    if args.save_recording and len(session.recording):
        _save_recording(session.recording, args.save_recording)
    frames = [s.as_dict() for s in session.stats]
    return {
        "source": session.source, "mode": "live", "backend": index.name,
        "params": params_to_dict(index.params), "seed": None,
        "dt": session.recording.meta.get("dt"), "animate": None, "frames": frames,
        "summary": _summary(frames), "lifespans": lifespan_histogram(index),
        "hotspots": [_hotspot(h, session) for h in session.hotspots.ranking(args.top)],
        "link": {"address": address, "peer": peer, "received_bytes": session.received_bytes,
                 "frames": session.frames, "names": len(session.names), "error": error},
    }


#: objects and pairs listed under each hotspot
LISTED = 10


def _hotspot(spot, session) -> dict:
    """A hotspot of the JSON report with the objects its cell stores and the pairs found there
    (see :mod:`editor.model.hotspot_pairs`), named by the game's ``meta.names``."""
    from editor.model.hotspot_pairs import cell_objects

    out = spot.as_dict()
    if spot.row < 0 or session.last_nodes is None:
        return out
    pairs = session.last_pairs.pairs if session.last_pairs is not None else None
    cell = cell_objects(session.index, session.last_nodes, spot.row, pairs)
    out["stored_count"] = len(cell.held)
    out["stored"] = [{"id": int(oid), "name": session.names.get(int(oid)), "tests": int(tests)}
                     for oid, tests in zip(cell.held[:LISTED], cell.tests[:LISTED])]
    out["pairs_count"] = len(cell.pairs)
    out["pairs"] = cell.pairs[:LISTED].tolist()
    return out


subcommand("listen", "take a running game's frames over TCP and report them per frame",
           _configure, _show)(cmd_listen)
