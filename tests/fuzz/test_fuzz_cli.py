"""The command line's promise, end to end on hostile files: one line on stderr naming the file,
a non-zero exit, nothing on stdout; and the biggest cases under a hard memory limit."""
from __future__ import annotations

import io
import struct
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from editor.cli import run_cli
from tests.plugins.test_doom_formats import square_room, write_wad
from tests.plugins.test_doom_hostile import _node, _room_with_nodes

FACE = "( 0 0 0 ) ( 64 0 0 ) ( 0 64 0 ) t 0 0 0 1 1"
CUBE = ["( 0 0 0 ) ( 0 1 0 ) ( 0 0 1 ) t 0 0 0 1 1", "( 64 0 0 ) ( 64 0 1 ) ( 64 1 0 ) t 0 0 0 1 1",
        "( 0 0 0 ) ( 0 0 1 ) ( 1 0 0 ) t 0 0 0 1 1", "( 0 64 0 ) ( 1 64 0 ) ( 0 64 1 ) t 0 0 0 1 1",
        "( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) t 0 0 0 1 1", "( 0 0 64 ) ( 0 1 64 ) ( 1 0 64 ) t 0 0 0 1 1"]


def _map(ending: str, final: bool) -> str:
    lines = ["{", '"classname" "worldspawn"', "{", *CUBE, "}", "}"]
    return ending.join(lines) + (ending if final else "")


def _hostile(tmp_path, kind: str):
    """Write one hostile input; return its path and the text the error must hold."""
    if kind == "wad with a node cycle":
        path = tmp_path / "cycle.wad"
        write_wad(path, _room_with_nodes([_node(1, 0x8000), _node(0, 0x8000)]))
        return path, "lump MAP01/NODES: record 0: child node 1 is reached twice"
    if kind == "wad with a huge declared count":
        path = tmp_path / "count.wad"
        write_wad(path, square_room(False))
        raw = bytearray(path.read_bytes())
        struct.pack_into("<i", raw, 4, 2**31 - 1)
        path.write_bytes(bytes(raw))
        return path, "directory of 2147483647 lumps"
    if kind == "obj face index 0":
        path = tmp_path / "zero.obj"
        path.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n")
        return path, "zero.obj:4:3: vertex index 0 does not exist"
    if kind == "obj inf vertex":
        path = tmp_path / "inf.obj"
        path.write_text("v 0 0 0\nv inf 0 0\nv 0 1 0\nf 1 2 3\n")
        return path, "inf.obj:2:3: vertex coordinate 'inf' is not finite"
    if kind == "ply index out of range":
        path = tmp_path / "bad.ply"
        path.write_text("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
                        "property float y\nproperty float z\nelement face 1\n"
                        "property list uchar int vertex_indices\nend_header\n"
                        "0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n")
        return path, "face 0 uses vertex index 7, out of range"
    if kind == "scene nested 100k deep":
        path = tmp_path / "deep.json"
        path.write_text("[" * 100_000)
        return path, "deep.json:1:65: nesting deeper than 64"
    if kind == "scene with a 5,000-digit integer":
        path = tmp_path / "digits.json"
        path.write_text('{"format": "partition-studio-scene", "version": ' + "9" * 5000 + "}")
        return path, "digits.json:1:49: a number of 5,000 characters"
    if kind == "map with a huge token":
        path = tmp_path / "token.map"
        path.write_text('{\n"message" "' + "m" * 200_000 + '"\n}\n')
        return path, "token.map:2:11: a token of 200,002 characters"
    if kind == "a folder":
        path = tmp_path / "folder.map"
        path.mkdir()
        return path, "is a folder"
    raise AssertionError(kind)


KINDS = ["wad with a node cycle", "wad with a huge declared count", "obj face index 0",
         "obj inf vertex", "ply index out of range", "scene nested 100k deep",
         "scene with a 5,000-digit integer", "map with a huge token", "a folder"]


@pytest.mark.parametrize("kind", KINDS)
def test_stats_on_a_hostile_file_prints_one_line_and_fails(tmp_path, capsys, kind):
    path, expected = _hostile(tmp_path, kind)
    code = run_cli(["stats", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"partition-studio: error: {path}")
    assert expected in err


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("final", [True, False])
def test_stats_reads_a_map_whatever_its_line_endings(tmp_path, capsys, ending, final):
    path = tmp_path / "cube.map"
    path.write_bytes(_map(ending, final).encode())
    assert run_cli(["stats", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and '"brushes": 1' in out


def test_replaying_a_recording_whose_header_claims_a_trillion_rows_fails_cleanly(tmp_path, capsys):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (10 ** 12, 3)})
    path = tmp_path / "huge.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("lo.npy", header.getvalue() + bytes(24))
    code = run_cli(["simulate", "--recording", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code != 0 and out == ""
    assert err.count("\n") == 1 and "field 'lo': the header declares shape (1000000000000, 3)" in err


LIMITED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from editor.cli import run_cli
sys.exit(run_cli(sys.argv[1:]))
"""


@pytest.mark.slow
def test_a_50_mb_token_is_refused_under_a_1_gib_memory_limit(tmp_path):
    path = tmp_path / "huge_token.map"
    with open(path, "w") as fh:
        fh.write('{\n"classname" "worldspawn"\n"message" "')
        fh.write("a" * 50_000_000)
        fh.write('"\n}\n')
    limit = 1024 ** 3
    done = subprocess.run([sys.executable, "-c", LIMITED.format(limit=limit), "stats", str(path),
                           "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"partition-studio: error: {path}:3:11: a token of 50,000,002 "
                           "characters is longer than the limit of 65,536 (is this a .map file?)\n")
