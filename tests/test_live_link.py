"""The live link end to end: `app.py listen`, the Python and C clients, their example games."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from editor.cli import run_cli

REPO = Path(__file__).resolve().parents[1]
CLIENTS = REPO / "clients"


def load_ps_link():
    """The stdlib-only client, loaded from its file as a game would copy it."""
    spec = importlib.util.spec_from_file_location("ps_link", CLIENTS / "python" / "ps_link.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Listener:
    """`app.py listen` in a child process on a free port."""

    def __init__(self, *extra):
        self.proc = subprocess.Popen([sys.executable, str(REPO / "app.py"), "listen", "--port", "0",
                                      "--timeout", "60", *extra], cwd=REPO, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stderr.readline()
        assert "listening on 127.0.0.1:" in line, line + self.proc.stderr.read()
        self.port = int(line.rsplit(":", 1)[1])

    def result(self):
        out, err = self.proc.communicate(timeout=120)
        return self.proc.returncode, out, err


def replayed(capsys, path, backend):
    code = run_cli(["simulate", "--recording", str(path), "--backend", backend, "--frames", "100000",
                    "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return {f["frame"]: f["overlapping"] for f in json.loads(out)["frames"]}


def check_live_report(capsys, tmp_path, out, frames, saved):
    report = json.loads(out)
    assert report["mode"] == "live" and len(report["frames"]) == frames
    assert [f["frame"] for f in report["frames"]] == list(range(1, frames + 1))
    assert report["link"]["error"] is None and report["link"]["names"] == 100
    assert max(f["overlapping"] for f in report["frames"]) > 0
    top = next(h for h in report["hotspots"] if h["row"] >= 0)  # a cell of the last frame's tree
    assert top["stored_count"] > 0 and top["stored"][0]["tests"] >= top["stored"][-1]["tests"]
    assert all(0 <= s["id"] for s in top["stored"])
    again = replayed(capsys, saved, report["backend"])
    live = {f["frame"]: f["overlapping"] for f in report["frames"]}
    assert again == live  # every frame the game sent, the first included
    return report


@pytest.mark.slow
@pytest.mark.parametrize("text", [False, True])
def test_the_python_example_game_streams_to_listen_and_the_recording_replays_alike(capsys, tmp_path, text):
    saved = tmp_path / "s.jsonl"
    listener = Listener("--frames", "40", "--backend", "octree", "--save-recording", str(saved), "--json")
    game = subprocess.run([sys.executable, str(CLIENTS / "python" / "example_game.py"), "--port",
                           str(listener.port), "--frames", "40", "--movers", "300", "--seed", "2"]
                          + (["--text"] if text else []), capture_output=True, text=True, timeout=120)
    assert game.returncode == 0, game.stderr
    assert "40 frames sent, 0 dropped" in game.stderr
    code, out, err = listener.result()
    assert code == 0, err
    check_live_report(capsys, tmp_path, out, 40, saved)


def compile_c_example(tmp_path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if compiler is None:
        pytest.skip("no C compiler on this machine (CI installs gcc)")
    exe = tmp_path / "example_game"
    built = subprocess.run([compiler, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1",
                            "-o", str(exe), str(CLIENTS / "c" / "example_game.c"), "-lm"],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    return exe


@pytest.mark.slow
def test_the_c_example_game_streams_to_listen_and_saves_the_same_stream(capsys, tmp_path):
    exe = compile_c_example(tmp_path)
    saved = tmp_path / "s.npz"
    listener = Listener("--frames", "30", "--backend", "octree", "--save-recording", str(saved), "--json")
    game = subprocess.run([str(exe), "--port", str(listener.port), "--frames", "30", "--movers", "300"],
                          capture_output=True, text=True, timeout=120)
    assert game.returncode == 0, game.stderr
    code, out, err = listener.result()
    assert code == 0, err
    report = check_live_report(capsys, tmp_path, out, 30, saved)
    # save mode writes the same stream: replayed, the same pairs frame by frame (text lines too)
    for extra in ([], ["--text"]):
        file = tmp_path / f"game{len(extra)}.psl"
        done = subprocess.run([str(exe), "--save", str(file), "--frames", "30", "--movers", "300", *extra],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        from_file = replayed(capsys, file, "octree")
        assert from_file == {f["frame"]: f["overlapping"] for f in report["frames"]}


def test_the_python_client_saves_a_stream_that_replays(capsys, tmp_path):
    ps_link = load_ps_link()
    path = tmp_path / "run.psl"
    with ps_link.save(path) as link:
        link.set_static([(100, 0, 0, 0, 10, 10, 1)])
        link.set_names({1: "crate"})
        for frame in range(1, 6):
            link.send_frame(frame, [(1, frame, 0, 0, frame + 2, 2, 2, True), (2, 5, 0, 0, 6, 2, 6, False)],
                            binary=frame % 2 == 0)
        assert not (tmp_path / "run.psl").exists()  # appears whole at close
    assert link.frames_sent == 5 and path.exists()
    pairs = replayed(capsys, path, "brute")
    # the crate touches the static box each frame and the sleeper from x = 3 on
    assert pairs == {1: 1, 2: 1, 3: 2, 4: 2, 5: 2}
    with pytest.raises(RuntimeError, match="header was already sent"):
        link.set_names({3: "late"})


def test_the_python_client_drops_frames_instead_of_stalling_when_the_editor_falls_behind():
    ps_link = load_ps_link()
    with socket.create_server(("127.0.0.1", 0)) as server:
        link = ps_link.connect("127.0.0.1", server.getsockname()[1], buffer_bytes=64 * 1024)
        conn, _ = server.accept()  # accepts, never reads: an editor that fell behind
        with conn:
            ids, boxes, awake = list(range(2000)), [0.0, 0, 0, 1, 1, 1] * 2000, [True] * 2000
            start = time.monotonic()
            results = [link.send_frame_arrays(f, ids, boxes, awake) for f in range(1, 400)]
            assert time.monotonic() - start < 20  # each call returned although nothing was read
            assert link.dropped > 0 and results.count(False) == link.dropped
            assert link.frames_sent + link.dropped == 399
            assert link.flush() <= 64 * 1024  # never more pending than the bound
        link.close(timeout=0)


def test_connecting_to_nothing_is_one_clear_error():
    ps_link = load_ps_link()
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
    with pytest.raises(ps_link.LinkError, match=f"cannot connect to 127.0.0.1:{port}"):
        ps_link.connect("127.0.0.1", port, timeout=2)


@pytest.mark.slow
def test_listen_reports_a_port_in_use_and_a_broken_stream_in_one_line(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, str(REPO / "app.py"), "listen", "--port", str(port), "--json"],
                              cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().count("\n") == 0 and f"127.0.0.1:{port}: cannot listen" in done.stderr
    listener = Listener("--backend", "brute", "--json")
    with socket.create_connection(("127.0.0.1", listener.port)) as game:
        game.sendall(b'{"frame": 1, "objects": [[1, 0, 0, 0, 1, 1, 1]]}\n'
                     b'{"frame": 2, "objects": [[1, 0, 0, 0, 1, 1, 1]]}\nGET / HTTP/1.1\r\n\r\n')
    code, out, err = listener.result()
    assert code == 0
    warning = [line for line in err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "byte 98, line 3: column 1: invalid JSON" in warning[0]
    report = json.loads(out)
    assert [f["frame"] for f in report["frames"]] == [1, 2] and "invalid JSON" in report["link"]["error"]


def _windows_toolchain() -> tuple[str, str]:
    """The MinGW-w64 C compiler and Wine, or a skip naming what is missing."""
    compiler = shutil.which("x86_64-w64-mingw32-gcc")
    wine = shutil.which("wine64") or shutil.which("wine") or \
        next((p for p in ("/usr/lib/wine/wine64",) if Path(p).exists()), None)
    if compiler is None or wine is None:
        missing = " and ".join(n for n, found in (("x86_64-w64-mingw32-gcc", compiler),
                                                  ("wine64", wine)) if found is None)
        pytest.skip(f"{missing} not on this machine (CI installs gcc-mingw-w64-x86-64 and wine64)")
    return compiler, wine


@pytest.mark.slow
def test_the_c_example_built_for_windows_streams_through_winsock(capsys, tmp_path):
    """ps_link.h's Winsock path: built as a Windows program, run under Wine, same stream."""
    compiler, wine = _windows_toolchain()
    exe = tmp_path / "example_game.exe"
    built = subprocess.run([compiler, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1",
                            "-o", str(exe), str(CLIENTS / "c" / "example_game.c"), "-lws2_32"],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    saved = tmp_path / "s.npz"
    listener = Listener("--frames", "30", "--backend", "octree", "--save-recording", str(saved), "--json")
    env = dict(os.environ, WINEPREFIX=str(tmp_path / "wine"), WINEDEBUG="-all")
    game = subprocess.run([wine, str(exe), "--port", str(listener.port), "--frames", "30",
                           "--movers", "300"], capture_output=True, text=True, timeout=300, env=env)
    assert game.returncode == 0, game.stderr[-2000:]
    assert "30 frames sent, 0 dropped" in game.stderr + game.stdout
    code, out, err = listener.result()
    assert code == 0, err
    check_live_report(capsys, tmp_path, out, 30, saved)


def test_a_game_that_closes_and_connects_again_at_once_is_the_next_game_not_refused():
    """`Link.close` waits until the editor has read the stream's end, so a reconnect (the
    Blender add-on's Send scene) is the editor's next game rather than a second one refused."""
    from editor.qt.live.receiver import Receiver

    ps_link = load_ps_link()
    receiver = Receiver("127.0.0.1", 0)
    port = int(receiver.address.rsplit(":", 1)[1])
    events = []
    try:
        for round_ in range(1, 21):
            link = ps_link.connect("127.0.0.1", port)
            link.set_names({1: f"round {round_}"})
            link.send_frame(1, [(1, 0, 0, 0, 1, 1, 1, True)])
            link.close(timeout=5)
            assert link.error is None
        deadline = time.monotonic() + 20
        while sum(kind == "closed" for kind, _ in events) < 20 and time.monotonic() < deadline:
            events += receiver.take()
            time.sleep(0.01)
    finally:
        receiver.stop()
    kinds = [kind for kind, _ in events]
    assert "refused" not in kinds
    assert kinds.count("connected") == 20 and kinds.count("closed") == 20
    received = b"".join(value for kind, value in events if kind == "data")
    assert all(f"round {k}".encode() in received for k in range(1, 21))
