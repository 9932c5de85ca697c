"""Plugins cannot write into the report, keep the process alive or end it unexplained.

Every case runs ``python app.py ...`` in a child process with a plugin folder.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from editor.cli.outcome import EXIT_PLUGIN
from tests.test_cli_robust import app, assert_one_line_error

pytestmark = pytest.mark.slow


def _plugin(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return folder


def test_writes_to_file_descriptor_1_and_a_fork_never_reach_the_json(tmp_path):
    folder = tmp_path / "plugins"
    _plugin(folder, "fd1.py", "import os\nos.write(1, b'RAW-AT-IMPORT\\n')\n"
                              "def register(registry):\n    os.write(1, b'RAW-AT-REGISTER\\n')\n")
    _plugin(folder, "forks.py", "import os\nif os.fork() == 0:\n    os.write(1, b'CHILD\\n')\n"
                                "def register(registry):\n    pass\n")
    code, out, err = app("--plugin-dir", folder, "plugins", "--json", timeout=120)
    assert code == 0, err
    report = json.loads(out)  # the whole stdout is one JSON document
    assert "brute" in report["backends"]
    assert "RAW-AT-IMPORT" in err and "RAW-AT-REGISTER" in err
    assert "RAW" not in out and "CHILD" not in out
    assert out.count('"backends"') == 1  # the forked copy printed no second report


def test_a_thread_left_running_does_not_keep_the_command_alive(tmp_path):
    folder = _plugin(tmp_path / "plugins", "sleeper.py",
                     "import threading, time\n"
                     "threading.Thread(target=time.sleep, args=(3600,), name='sleeper').start()\n"
                     "def register(registry):\n    pass\n")
    code, out, err = app("--plugin-dir", folder, "stats", "--random", "50", "--backend", "brute",
                         "--json", timeout=120)
    assert code == 0, err
    assert json.loads(out)["scene"]["objects"] == 50
    assert "not waiting for 1 thread(s) left running by plugin code (sleeper)" in err


QUITS = '''
from dataclasses import dataclass
import sys

from spatial.contract import SpatialIndex


class Quits(SpatialIndex):
    name = "quits"

    @dataclass
    class Params:
        pass

    def _build(self, slots):
        sys.exit(CODE)


def register(registry):
    registry.add_backend(Quits)
'''


@pytest.mark.parametrize("exit_code", [0, 3])
def test_sys_exit_in_a_backends_build_is_a_named_failure(tmp_path, exit_code):
    folder = _plugin(tmp_path / "plugins", "quits.py", QUITS.replace("CODE", str(exit_code)))
    code, out, err = app("--plugin-dir", folder, "stats", "--random", "20", "--backend", "quits",
                         "--json")
    assert_one_line_error(code, out, err, "quits.py'", f"called sys.exit({exit_code})",
                          "Quits._build()")
    assert code == EXIT_PLUGIN


def test_an_importer_failure_names_the_level_and_the_plugin(tmp_path):
    folder = _plugin(tmp_path / "plugins", "things.py",
                     "def load(path):\n    raise RuntimeError('importer exploded')\n"
                     "def register(registry):\n    registry.add_importer('thing', ('*.thing',), load)\n")
    level = tmp_path / "level.thing"
    level.write_text("")
    code, out, err = app("--plugin-dir", folder, "stats", level, "--json")
    assert_one_line_error(code, out, err, f"{level}: importer 'thing' failed", "things.py'",
                          "load()", "RuntimeError: importer exploded")
    assert code == EXIT_PLUGIN
