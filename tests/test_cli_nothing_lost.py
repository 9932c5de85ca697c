"""The command line keeps what it cannot use and refuses what it cannot do, in one line.

Every case runs ``python app.py ...`` in a child process (see tests/test_cli_robust.py).
"""
from __future__ import annotations

import json

import pytest

from tests.invalid_brush_maps import BROKEN, broken_map_text
from tests.test_cli_robust import app

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
