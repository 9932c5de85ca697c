"""The Blender add-on end to end: built into a zip, installed in Blender, streaming to `listen`.

Blender's Python (``bpy``) is not a test dependency (about 400 MB, CPython 3.11 only, its own
numpy): the test runs it as a subprocess named by ``$PARTITION_STUDIO_BLENDER_PYTHON`` (a
python that can ``import bpy``, e.g. a venv with ``pip install 'bpy>=5.0,<5.1'``; ``.ci/run``
makes one) and skips, saying why, without it.

In Blender the script builds a scene headless (a floor, 50 static crates in the collection
``Static`` and a collection inside it, a pillar static by its ``ps_static`` property, 10 movers
keyframed over 60 frames, one with an Array modifier), installs the add-on from its zip through
Blender's own extension installer, connects to ``app.py listen`` and steps ``frame_set`` through
the 60 frames, writing Blender's own world-space bounds of every object each frame. The
listener's recording must hold those 60 frames, box for box after the units scale, with
Blender's names. A second listener checks that an edit while Live is on is sent, and the script
that an absent editor is a state line, not an error.
"""
from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from editor.model.frame_format import load_frame_lines
from editor.model.live.session import parse_names

REPO = Path(__file__).resolve().parents[2]
BLENDER_PYTHON_VARIABLE = "PARTITION_STUDIO_BLENDER_PYTHON"
#: seconds any one subprocess may take (Blender's start, a cold listener compiling its kernels)
TIMEOUT = 300
FRAMES = 60
#: Blender metres x this = the units sent (not 1, so a missing scale shows)
SCALE = 2.0

# Runs inside Blender's Python: argv ends with ZIP PORT EDIT_PORT DEAD_PORT OUT SCALE.
BLENDER_SCRIPT = r'''
import json
import sys
import time

import bpy

zip_path, port, edit_port, dead_port, out_path, scale = sys.argv[-6:]
port, edit_port, dead_port, scale = int(port), int(edit_port), int(dead_port), float(scale)
FRAMES = 60

bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, FRAMES
static = bpy.data.collections.new("Static")
scene.collection.children.link(static)
walls = bpy.data.collections.new("Static walls")  # a collection inside Static is static too
static.children.link(walls)
movers = bpy.data.collections.new("Movers")
scene.collection.children.link(movers)

CORNERS = [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]
QUADS = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]


def cube(name, collection, location, size, rotation=(0.0, 0.0, 0.0)):
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(CORNERS, [], QUADS)
    obj = bpy.data.objects.new(name, mesh)
    collection.objects.link(obj)
    obj.location, obj.scale, obj.rotation_euler = location, size, rotation
    return obj


cube("floor", static, (0.0, 0.0, -0.1), (20.0, 20.0, 0.1))
for k in range(50):
    cube(f"crate {k:02d}", static if k < 40 else walls, (-18 + (k % 10) * 4, -18 + (k // 10) * 4, 0.5),
         (0.5, 0.5, 0.5 + 0.1 * (k % 3)), (0.0, 0.0, 0.1 * k))
pillar = cube("pillar", scene.collection, (15.0, 15.0, 2.0), (0.3, 0.3, 2.0))
pillar["ps_static"] = True  # static by its property, outside the Static collection
for k in range(10):
    obj = cube(f"mover {k}", movers, (-10.0 + 2 * k, -10.0, 1.0), (0.4, 0.6, 0.8))
    obj.keyframe_insert("location", frame=1)
    obj.keyframe_insert("rotation_euler", frame=1)
    obj.location = (-10.0 + 2 * k, 10.0, 1.0 + 0.2 * k)
    obj.rotation_euler = (0.3 * k, 0.0, 1.5)
    obj.keyframe_insert("location", frame=FRAMES)
    obj.keyframe_insert("rotation_euler", frame=FRAMES)
    if k == 0:  # the evaluated mesh is measured: the modifier's copies count
        obj.modifiers.new("array", "ARRAY").count = 3

result = bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default",
                                                 enable_on_install=True)
assert result == {"FINISHED"}, result
addon = sys.modules["bl_ext.user_default.partition_studio"]
status = bpy.context.window_manager.partition_studio


def world_bounds(obj, depsgraph):
    """Blender's own bounds: the evaluated mesh's vertices through matrix_world (mathutils)."""
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    points = [evaluated.matrix_world @ v.co for v in mesh.vertices]
    evaluated.to_mesh_clear()
    return [min(p[i] for p in points) for i in range(3)] + [max(p[i] for p in points) for i in range(3)]


def all_bounds():
    depsgraph = bpy.context.evaluated_depsgraph_get()
    return {o.name: world_bounds(o, depsgraph) for o in scene.objects if o.type == "MESH"}


report = {"client": addon.ps_link.__file__,
          "static": sorted(o.name for o in scene.objects
                           if o.users_collection[0] in (static, walls) or o.get("ps_static")),
          "moving": sorted(o.name for o in movers.objects)}
scene.partition_studio.units_scale = scale
scene.frame_set(1)
report["connect"] = sorted(bpy.ops.partition_studio.connect(host="127.0.0.1", port=port))
report["state_connected"] = status.state
frames = []
for frame in range(1, FRAMES + 1):
    scene.frame_set(frame)
    frames.append({"frame": frame, "bounds": all_bounds()})
report["frames"] = frames
report["sent"], report["dropped"] = status.frames_sent, status.frames_dropped
bpy.ops.partition_studio.disconnect()
report["state_disconnected"] = status.state

# Live: an edit is sent (the first of a burst at once; the timers that send the rest of a
# burst do not run in a headless Blender)
bpy.ops.partition_studio.connect(port=edit_port)
time.sleep(0.1)
bpy.data.objects["mover 3"].location.z += 5.0
bpy.context.view_layer.update()
report["edited"] = all_bounds()["mover 3"]
bpy.data.objects["crate 07"].location.x += 1.0  # a static box: its header is out of date now
bpy.context.view_layer.update()
report["state_stale"] = status.state
bpy.ops.partition_studio.disconnect()

# no editor: a state line, the operator cancelled, no exception
report["connect_absent"] = sorted(bpy.ops.partition_studio.connect(port=dead_port))
report["state_absent"] = status.state
with open(out_path, "w", encoding="utf-8") as fh:
    json.dump(report, fh)
'''


def blender_python() -> str:
    """The python that can import bpy, or a skip saying what is missing."""
    exe = os.environ.get(BLENDER_PYTHON_VARIABLE)
    if not exe:
        pytest.skip(f"${BLENDER_PYTHON_VARIABLE} is not set (a python that can `import bpy`, "
                    "e.g. a Python 3.11 venv with pip install 'bpy>=5.0,<5.1')")
    try:
        probe = subprocess.run([exe, "-c", "import bpy; print(bpy.app.version_string)"],
                               capture_output=True, text=True, timeout=TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"${BLENDER_PYTHON_VARIABLE}={exe} cannot run: {exc}")
    if probe.returncode != 0:
        pytest.skip(f"${BLENDER_PYTHON_VARIABLE}={exe} cannot import bpy: "
                    f"{probe.stderr.strip().splitlines()[-1:] or probe.returncode}")
    return exe


class Listener:
    """``app.py listen`` on a free port, saving its recording; stderr read by a thread so a
    listener that never starts is a timeout, not a hang."""

    def __init__(self, recording: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(REPO / "app.py"), "listen", "--port", "0", "--timeout", str(TIMEOUT),
             "--save-recording", str(recording), "--json", *extra],
            cwd=REPO, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._lines: queue.Queue[str] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        try:
            line = self._lines.get(timeout=TIMEOUT)
        except queue.Empty:
            self.proc.kill()
            pytest.fail(f"listen did not start within {TIMEOUT} s")
        assert "listening on 127.0.0.1:" in line, line
        self.port = int(line.rsplit(":", 1)[1])

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line)
            self._lines.put(line)

    def report(self) -> dict:
        try:
            out, _ = self.proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail(f"listen did not finish within {TIMEOUT} s:\n{''.join(self.stderr)}")
        assert self.proc.returncode == 0, "".join(self.stderr)
        return json.loads(out)


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return probe.getsockname()[1]


def build_addon(out: Path) -> None:
    done = subprocess.run([sys.executable, str(REPO / "clients" / "blender" / "build_zip.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(out) as archive:
        names = archive.namelist()
        bundled = archive.read("partition_studio/ps_link.py")
    assert {"partition_studio/blender_manifest.toml", "partition_studio/__init__.py"} <= set(names)
    assert bundled == (REPO / "clients" / "python" / "ps_link.py").read_bytes()  # the one client


def check_frames(recording, blender: dict) -> None:
    """Every frame of ``recording`` holds Blender's bounds of its frame, box for box."""
    names = parse_names(recording.meta.get("names"))
    assert [r.frame for r in recording] == list(range(1, FRAMES + 1))
    static = {names[int(i)]: np.concatenate([lo, hi]) for i, lo, hi in
              zip(recording.static_ids, recording.static_lo, recording.static_hi)}
    assert sorted(static) == blender["static"]
    for record, expected in zip(recording, blender["frames"]):
        bounds = expected["bounds"]
        moving = {names[int(i)]: np.concatenate([lo, hi]) for i, lo, hi in zip(record.ids, record.lo, record.hi)}
        assert sorted(moving) == blender["moving"], f"frame {record.frame}"
        for name, box in {**static, **moving}.items():
            np.testing.assert_allclose(box, np.array(bounds[name]) * SCALE, rtol=0, atol=1e-4,
                                       err_msg=f"frame {record.frame}: {name}")


@pytest.mark.slow
def test_the_blender_addon_streams_an_animated_scene_to_listen_box_for_box(tmp_path):
    exe = blender_python()
    addon = tmp_path / "partition_studio.zip"
    build_addon(addon)
    main = Listener(tmp_path / "main.jsonl", "--frames", str(FRAMES))
    edits = Listener(tmp_path / "edits.jsonl")
    out = tmp_path / "blender.json"
    script = tmp_path / "scene.py"
    script.write_text(BLENDER_SCRIPT, encoding="utf-8")
    # Blender's user folders in tmp_path: the install touches nothing of the user's own Blender
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "blender-user"))
    try:
        done = subprocess.run([exe, str(script), str(addon), str(main.port), str(edits.port), str(free_port()),
                               str(out), str(SCALE)], capture_output=True, text=True, timeout=TIMEOUT,
                              cwd=tmp_path, env=env)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"Blender did not finish within {TIMEOUT} s:\n{exc.stderr}")
    finally:
        for listener in (main, edits):
            if listener.proc.poll() is None and not out.exists():
                listener.proc.kill()
    assert done.returncode == 0 and out.exists(), f"Blender failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    blender = json.loads(out.read_text(encoding="utf-8"))

    # the add-on runs its bundled copy of the project's client
    assert Path(blender["client"]).parent.name == "partition_studio"
    assert str(tmp_path / "blender-user") in blender["client"]
    assert blender["connect"] == ["FINISHED"] and blender["state_connected"].startswith("connected to 127.0.0.1:")
    assert blender["sent"] == FRAMES and blender["dropped"] == 0
    assert blender["state_disconnected"] == "disconnected"

    report = main.report()
    assert report["link"]["frames"] == FRAMES and report["link"]["error"] is None
    assert report["link"]["names"] == len(blender["static"]) + len(blender["moving"]) == 62
    recording = load_frame_lines(tmp_path / "main.jsonl")
    assert recording.meta["game"] == "blender" and recording.meta["file"] == "untitled"
    assert recording.meta["units_per_metre"] == SCALE
    check_frames(recording, blender)

    # Live: the edit arrived as the second frame; the moved static box marks the header stale
    edits.report()
    edited = load_frame_lines(tmp_path / "edits.jsonl")
    names = parse_names(edited.meta.get("names"))
    assert [r.frame for r in edited] == [1, 2]
    last = edited.get(2)
    row = [names[int(i)] for i in last.ids].index("mover 3")
    np.testing.assert_allclose(np.concatenate([last.lo[row], last.hi[row]]), np.array(blender["edited"]) * SCALE,
                               rtol=0, atol=1e-4)
    assert "static objects changed: Send scene to update" in blender["state_stale"]

    # no editor listening: a state line and a cancelled operator, not a traceback
    assert blender["connect_absent"] == ["CANCELLED"]
    assert blender["state_absent"].startswith("not connected: cannot connect to 127.0.0.1:")
    assert "Traceback" not in done.stderr
