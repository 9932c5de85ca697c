"""The command line keeps what it cannot use and refuses what it cannot do, in one line.

Every case runs ``python app.py ...`` in a child process (see tests/test_cli_robust.py).
"""
from __future__ import annotations

import json
import os

import pytest

from tests.invalid_brush_maps import BROKEN, broken_map_text
from tests.test_cli_robust import app, assert_one_line_error

pytestmark = pytest.mark.slow


@pytest.fixture()
def broken_map(tmp_path_factory):
    path = tmp_path_factory.mktemp("input") / "broken.map"
    path.write_text(broken_map_text())
    return path


# --------------------------------------------------------------------------- broken brushes
def test_convert_round_trips_broken_brushes(broken_map, tmp_path):
    native, out = tmp_path / "level.json", tmp_path / "again.map"
    code, _, err = app("convert", broken_map, native)
    assert code == 0, err
    assert err.count("brush kept as written, not indexed") == len(BROKEN)
    code, _, err = app("convert", native, out)
    assert code == 0, err
    text = out.read_text()
    for faces in BROKEN.values():
        assert "\n".join("  " + f for f in faces) in text


def test_stats_counts_invalid_brushes(broken_map):
    code, out, err = app("stats", broken_map, "--backend", "brute", "--json")
    assert code == 0, err
    scene = json.loads(out)["scene"]
    assert scene["invalid_brushes"] == len(BROKEN) and scene["objects"] == 2


# --------------------------------------------------------------------------- special outputs
def test_convert_writes_through_a_symlink(broken_map, tmp_path):
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    code, _, err = app("convert", broken_map, link, "--force")
    assert code == 0, err
    assert link.is_symlink() and '"invalid_brushes"' in real.read_text()


@pytest.mark.parametrize("force", [(), ("--force",)])
def test_convert_refuses_a_fifo_in_one_line(broken_map, tmp_path, force):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    code, out, err = app("convert", broken_map, fifo, *force, timeout=120)
    assert_one_line_error(code, out, err, "pipe.json", "named pipe")
    assert code == 2
