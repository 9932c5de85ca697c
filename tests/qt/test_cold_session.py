"""No kernel compiles on the window's thread in a first session on a fresh install.

A process of its own with an empty ``$NUMBA_CACHE_DIR`` starts the editor as a first start
does and drives the real window (``tests/qt/cold_session.py``): the tools wait, disabled, until
their kernels are ready; as soon as the level is on screen a click selects a brush (picking
needs no kernel), as soon as editing is ready an arrow key nudges it and a Brush tool drag makes
a new one; then Play runs the simulation, and Stop, Step and a seek on the timeline follow. (The
benchmark ``benchmarks/gui_cold.py`` drives the same session on a real level and adds the tuner
and a switch to each backend.) Every numba kernel compiled or loaded is recorded with its thread: none may be
compiled on the window's thread (the warm-up process compiles them, a worker thread loads
them), and none of the editor's kernels may even be loaded there.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_cold_first_session_compiles_nothing_on_the_window_thread(tmp_path):
    out = tmp_path / "session.json"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"),
               QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-m", "tests.qt.cold_session", str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    session = json.loads(out.read_text(encoding="utf-8"))
    assert session["cold"], "the cache was not empty: nothing would compile"
    assert session["edit_ready"] and session["tools_ready"], "the tools were never enabled"
    # pair finding and the simulation compiled in a second warm-up process
    assert session["second_process"]
    # editing was enabled first, picking's query tools next, no later than the simulation
    ready = session["family_ready_s"]
    assert ready["edit"] <= ready["pick"] <= ready["simulate"]
    # the level could be clicked as soon as it was on screen, before its kernels were loaded
    assert session["select_enabled_at_open"] and len(session["selected_at_open"]) == 1
    # the session really used the kernels: a brush was picked, moved, one drawn and the
    # simulation ran
    assert len(session["selected"]) == 1 and session["moved"] and session["frames"] >= 5
    assert session["new_brushes"] == 1
    records = session["records"]
    # the loader and the warm-up really ran kernels in this process, off the window's thread
    assert any(not r["gui_thread"] and r["cached_kernel"] for r in records)
    assert session["stepped_to"] >= 1 and session["sought_to"] == 0  # Step and seek ran too
    steps = ("click_at_open", "click", "nudge", "new_brush", "play", "pause", "stop", "step",
             "seek")
    on_gui = [r for r in records if r["gui_thread"] and r["phase"] in steps]
    compiled = sorted({r["kernel"] for r in on_gui if r["compiled"]})
    assert not compiled, f"compiled on the window's thread: {compiled}"
    loaded = sorted({r["kernel"] for r in on_gui if r["cached_kernel"]})
    assert not loaded, f"loaded from the disk cache on the window's thread: {loaded}"


#: one cube brush of a ``.map`` file, its x extent given (Standard faces, as id's editor wrote)
CUBE = """{{
( {x0} 0 0 ) ( {x0} 1 0 ) ( {x0} 0 1 ) T 0 0 0 1 1
( {x1} 0 0 ) ( {x1} 0 1 ) ( {x1} 1 0 ) T 0 0 0 1 1
( 0 0 0 ) ( 0 0 1 ) ( 1 0 0 ) T 0 0 0 1 1
( 0 8 0 ) ( 1 8 0 ) ( 0 8 1 ) T 0 0 0 1 1
( 0 0 0 ) ( 1 0 0 ) ( 0 1 0 ) T 0 0 0 1 1
( 0 0 8 ) ( 0 1 8 ) ( 1 0 8 ) T 0 0 0 1 1
}}
"""


@pytest.mark.slow
def test_opening_a_map_on_a_first_start_compiles_nothing_in_the_editors_process(tmp_path):
    """The ``.map`` reader's and the brush solids' kernels are compiled by a warm-up process
    (``--part level``) while the editor's loading thread waits for them without the
    interpreter lock: numba's compiler holds that lock for up to half a second at a time, so
    compiling them on the loading thread froze the window while the level opened."""
    level = tmp_path / "cubes.map"
    level.write_text('{\n"classname" "worldspawn"\n'
                     + "".join(CUBE.format(x0=16 * k, x1=16 * k + 8) for k in range(4))
                     + '}\n{\n"classname" "info_player_start"\n"origin" "4 4 24"\n}\n')
    out = tmp_path / "session.json"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"),
               QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-m", "tests.qt.cold_session", str(out), str(level),
                           "--until", "open"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    session = json.loads(out.read_text(encoding="utf-8"))
    assert session["cold"], "the cache was not empty: nothing would compile"
    # from the start (the window's first frame is a phase of its own) until the level is shown
    records = [r for r in session["records"] if r["phase"] in ("start", "show", "open")]
    read = {r["kernel"].rsplit(".", 1)[0] for r in records if r["cached_kernel"]}
    # the level was really read with the kernels: the reader's pre-pass and the brush solids
    assert {"plugins.quake_map.scan", "spatial.brush"} <= read, sorted(read)
    compiled = sorted({r["kernel"] for r in records if r["compiled"]})
    assert not compiled, f"compiled in the editor's process while the level opened: {compiled}"
