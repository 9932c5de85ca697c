"""The headless command line: JSON reports and one-line errors with non-zero exits."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from editor.cli import run_cli

REPO = Path(__file__).resolve().parents[1]


def run(capsys, *argv):
    code = run_cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_stats_json_has_the_documented_shape(capsys):
    code, out, err = run(capsys, "stats", "--random", "500", "--seed", "3", "--backend", "brute", "--json")
    assert code == 0, err
    report = json.loads(out)
    for key in ("source", "brushes", "entities", "brush_entities", "faces", "triangles", "segments",
                "objects", "bounds"):
        assert key in report["scene"]
    for key in ("backend", "params", "nodes", "leaves", "max_depth", "references", "build_ms"):
        assert key in report["index"]
    assert report["scene"]["objects"] == 500
    assert report["pairs"]["candidates"] == 500 * 499 // 2  # brute force tests every pair
    assert 0 < report["pairs"]["overlapping"] < report["pairs"]["candidates"]


@pytest.mark.parametrize("argv,needle", [
    (["--backend", "no-such-backend"], "unknown backend 'no-such-backend'"),
    (["--backend", "brute", "--param", "bogus=1"], "parameter 'bogus'"),
    (["--backend", "brute", "--param", "novalue"], "KEY=VALUE"),
    (["--random", "-5"], "--random"),
])
def test_bad_arguments_give_one_line_and_nonzero_exit(capsys, argv, needle):
    base = ["stats", "--random", "50"] if "--random" not in argv else ["stats"]
    code, out, err = run(capsys, *base, *argv, "--json")
    assert code != 0
    assert out == ""
    assert needle in err
    assert len(err.strip().splitlines()) == 1


def test_every_registered_backend_rejects_nan_and_out_of_bounds_params(capsys):
    from spatial.registry import default_registry

    for name, cls in default_registry().backends.items():
        numeric = [s for s in cls.param_specs() if s.kind in (int, float) and s.hi is not None]
        for spec in numeric:
            for bad in ("nan", str(spec.hi * 10 + 1)):
                code, out, err = run(capsys, "stats", "--random", "20", "--backend", name,
                                     "--param", f"{spec.name}={bad}", "--json")
                assert code == 2 and spec.name in err, (name, spec.name, bad, err)


def test_plugins_json_lists_the_builtin_backends(capsys):
    code, out, err = run(capsys, "plugins", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert "brute" in report["backends"]
    assert all(p["error"] is None for p in report["plugins"] if p["source"] == "builtin")


def test_app_entry_point_runs_headless_without_qt():
    """`python app.py stats` must not import Qt (pipelines run it on machines without a display)."""
    code = ("import sys, app; rc = app.main(['stats', '--random', '10', '--backend', 'brute', '--json']);"
            "assert not any(m.startswith(('PySide6', 'pyqtgraph', 'OpenGL')) for m in sys.modules), "
            "'Qt imported'; sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["scene"]["objects"] == 10
