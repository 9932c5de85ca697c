"""Real levels in the window: geometry drawn, the map's shipped BSP, the query layer, placement.

Driven through the window's own actions, widgets, keys and mouse; levels from ../shared/data
and Freedoom (skipped with a reason when absent).
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from editor.model import Brush
from editor.model.loading import load_document
from plugins.doom_wad.shipped_bsp import load_shipped_bsp

from ..conftest import REPO, shared_file
from ..plugins.test_doom_wad import freedoom
from .conftest import click, drag

E1M1 = ("quake", "quake_id1_e1m1.map")
MESH = ("meshes", "oa_dm5_world.obj")


def _level(kind: str) -> str:
    if kind == "e1m1":
        return str(shared_file(*E1M1))
    if kind == "mesh":
        return str(shared_file(*MESH))
    return f"{freedoom('freedoom1.wad')}:{kind}"


def _open(window, path: str):
    assert window.open_file(path, background=False), window.errors[-1:]
    window.state.flush()
    window.frame_all()
    return window.document


def _scene_counts(scene) -> dict:
    return {"brushes": len(scene.brush_ids()), "wall_segments": len(scene.segment_ids()),
            "triangles": len(scene.triangle_ids()), "entities": len(scene.point_entity_ids())}


# --------------------------------------------------------------------------- geometry drawn
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["e1m1", "E1M1", "E1M2", "mesh"])
def test_every_level_is_drawn_with_the_overlay_off(window, kind):
    doc = _open(window, _level(kind))
    window.act_overlay.trigger()  # View → Tree overlay: off
    window.state.flush()
    assert not window.state.overlay_visible and not window.overlay_panel.visible.isChecked()
    want = _scene_counts(doc.scene)
    for name, view in window.views2d.items():
        assert view.drawn == want, name
        assert view.overlay.layer_count() == 0, "the overlay is off"
    top = window.views2d["Top"]
    if want["wall_segments"]:
        assert top.walls.layer_count() == 2, "one-sided and two-sided walls drawn apart"
    if want["triangles"]:
        assert top.mesh.layer_count() == 1
    assert sum(want.values()) > 0


@pytest.mark.gl
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["e1m1", "E1M1", "E1M2", "mesh"])
def test_screenshot_report_counts_what_the_scene_holds(kind, tmp_path):
    path = _level(kind)
    png, report = tmp_path / "shot.png", tmp_path / "report.json"
    run = subprocess.run([sys.executable, "app.py", path, "--screenshot", str(png), "--size", "1280x800",
                          "--overlay", "none", "--report", str(report)],
                         cwd=REPO, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    got = json.loads(report.read_text())
    scene = load_document(path)
    for key, value in _scene_counts(scene).items():
        assert got[key] == value, key
    assert got["overlay"] == "none" and got["nodes_drawn"] == got["boxes_drawn_3d"] == 0
    assert got["nodes"] > 0
    # the Statistics panel is filled in the picture, pair count included (it runs on a worker
    # in the window, which a screenshot does not wait for)
    assert got["statistics"] and all(text not in ("", "–") for text in got["statistics"].values()), \
        got["statistics"]
    assert png.stat().st_size > 10_000


@pytest.mark.gl
def test_3d_view_holds_walls_as_one_item_per_kind(gl_window):
    window = gl_window
    doc = _open(window, _level("E1M1"))
    view = window.view3d
    counts = view.drawn_counts()
    assert counts["wall_segments"] == len(doc.scene.segment_ids())
    assert view.wall_faces.visible() and view.wall_edges.visible()
    assert len(view.wall_faces.opts["meshdata"].vertexes()) == 6 * counts["wall_segments"]


# --------------------------------------------------------------------------- the shipped BSP
def _choose_in_combo(combo, name: str) -> None:
    index = combo.findData(name)
    assert index >= 0, f"{name} is not offered"
    combo.setCurrentIndex(index)


@pytest.mark.parametrize("member", ["E1M1", "E1M2"])
def test_shipped_bsp_is_offered_on_a_doom_map_and_shown_like_ours(window, member):
    wad = freedoom("freedoom1.wad")
    doc = _open(window, f"{wad}:{member}")
    st, combo = window.state, window.params_panel.backend_combo
    _choose_in_combo(combo, "shipped_bsp")
    st.flush()
    shipped = load_shipped_bsp(wad, member)
    assert doc.index.name == "shipped_bsp"
    assert st.overlay.total == len(shipped.record)
    window.stats_panel.refresh(force=True)
    assert window.stats_panel.values["nodes"].text() == str(len(shipped.record))
    # the node inspector: click a node with the Inspect tool
    window.tool_actions["inspect"].trigger()
    top = window.views2d["Top"]
    lo, hi = doc.scene.bounds()
    click(top, ((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2))
    row = st.inspected_node
    assert row >= 0 and "Node" in window.inspector_panel.info.text()
    listed = {window.inspector_panel.objects.item(i).data(Qt.UserRole)
              for i in range(window.inspector_panel.objects.count())}
    assert listed == set(doc.index.node_objects(row).tolist())
    # beside ours: switching back to the built BSP is one undoable step
    _choose_in_combo(combo, "bsp")
    st.flush()
    assert doc.index.name == "bsp"
    doc.stack.undo()
    st.flush()
    assert doc.index.name == "shipped_bsp"


def test_shipped_bsp_is_not_offered_on_a_quake_map(window):
    _open(window, _level("e1m1"))
    combo = window.params_panel.backend_combo
    assert combo.findData("shipped_bsp") < 0 and combo.findData("octree") >= 0


def test_split_lines_drawn_for_a_bsp(window):
    _open(window, _level("E1M1"))  # opens on the default octree
    st = window.state
    window.params_panel.choose_backend("bsp")
    st.flush()
    assert window.document.index.name == "bsp"
    window.overlay_panel.planes.setChecked(True)
    st.flush()
    geom = st.overlay
    inner = int((~st.node_table.is_leaf[geom.rows]).sum())
    assert len(geom.plane_lines3d) >= 2 * 4 * inner * 0.9, "about a rectangle per split node"
    top = window.views2d["Top"]
    assert top._plane_segments is not None and len(top._plane_segments) > 0
    window.overlay_panel.planes.setChecked(False)
    st.flush()
    assert len(st.overlay.plane_lines3d) == 0


# --------------------------------------------------------------------------- query layer
def _activate(window, qtbot):
    window.activateWindow()
    qtbot.waitActive(window)


def test_query_layer_toggles_and_clears(window, qtbot):
    doc = _open(window, _level("e1m1"))
    st, top = window.state, window.views2d["Top"]
    _activate(window, qtbot)
    window.overlay_panel.set_metric("own_count")
    window.tool_actions["ray"].trigger()
    lo, hi = doc.scene.bounds()
    y = (lo[1] + hi[1]) / 2
    drag(top, (lo[0] + 32, y), (hi[0] - 32, y))
    st.flush()
    assert st.ray is not None and len(st.ray.result.visited)
    assert top.query.layer_count() >= 2, "visited nodes and the ray"
    window.act_queries.trigger()  # View → Query results: off
    assert not st.query_layer_visible and not window.query_panel.layer_box.isChecked()
    assert top.query.layer_count() == 0
    window.act_queries.trigger()
    assert top.query.layer_count() >= 2
    QTest.keyClick(window, Qt.Key_Escape)
    st.flush()
    assert st.ray is None and top.query.layer_count() == 0
    assert st.overlay.metric == "own_count", "the heatmap stays"
    drag(top, (lo[0] + 32, y), (hi[0] - 32, y))
    assert st.ray is not None
    window.tool_actions["select"].trigger()  # another tool: the query layer empties
    assert st.ray is None and st.frustum is None and top.query.layer_count() == 0


def test_ray_height_is_shown_and_editable(window):
    doc = _open(window, _level("e1m1"))
    st, top, panel = window.state, window.views2d["Top"], window.query_panel
    start = doc.scene[[i for i in doc.scene.point_entity_ids()
                       if doc.scene[i].classname == "info_player_start"][0]].origin
    window.tool_actions["ray"].trigger()
    drag(top, (start[0], start[1]), (start[0] + 400, start[1]))
    ray = st.ray
    assert ray is not None and ray.direction[2] == 0
    assert panel.ray_height.value() == pytest.approx(ray.origin[2])
    assert panel.ray_height_auto.isChecked()
    panel.ray_height.setValue(ray.origin[2] + 64)  # typed into the box
    assert st.ray.origin[2] == pytest.approx(ray.origin[2] + 64), "the ray moved to the new height"
    assert not panel.ray_height_auto.isChecked()
    drag(top, (start[0], start[1]), (start[0], start[1] + 300))
    assert st.ray.origin[2] == pytest.approx(ray.origin[2] + 64), "new rays keep the fixed height"


def test_inspector_and_overlay_follow_a_parameter_change_during_a_replay(window, tmp_path):
    from editor.qt.timeline import install_timeline
    if getattr(window, "timeline", None) is None:
        install_timeline(window)
    st, c = window.state, window.timeline
    window.params_panel.choose_backend("octree")
    st.flush()
    c.step(10)
    path = str(tmp_path / "run.npz")
    assert c.save_recording(path) and c.load_recording(path)
    c.seek(5)
    st.flush()
    old_total = st.overlay.total
    st.inspect_node(old_total - 1)  # the deepest row of the replay's tree
    spin = window.params_panel.widgets["max_depth"]
    spin.setValue(1)
    st.flush()
    shown = c.shown_index()
    assert shown.params.max_depth == 1, "the replay follows the new parameters"
    assert st.overlay.total == len(shown.nodes()) < old_total
    st.inspect_node(st.overlay.total - 1)
    window.inspector_panel.show_node(old_total - 1)  # a row of the old tree: no IndexError
    assert "No node" in window.inspector_panel.info.text()


# --------------------------------------------------------------------------- placement
def _inside_solid(scene, point) -> bool:
    for oid in scene.brush_ids():
        normals, dists = scene[oid].planes()
        if (normals @ point <= dists + 1e-6).all():
            return True
    return False


def test_entity_placed_from_the_top_view_stands_on_the_floor(window):
    doc = _open(window, _level("e1m1"))
    scene = doc.scene
    start = scene[[i for i in scene.point_entity_ids()
                   if scene[i].classname == "info_player_start"][0]].origin
    window.tool_actions["entity"].trigger()
    before = set(scene.point_entity_ids())
    x, y = float(start[0]) + 32, float(start[1])
    click(window.views2d["Top"], (x, y))
    new = set(scene.point_entity_ids()) - before
    assert len(new) == 1
    ent = scene[new.pop()]
    feet = np.array([ent.origin[0], ent.origin[1], ent.lo[2]])
    assert _inside_solid(scene, feet - (0, 0, 1)), "a floor under the feet"
    assert not _inside_solid(scene, feet + (0, 0, 1)), "free space above it"
    assert not _inside_solid(scene, np.array([*feet[:2], ent.hi[2] - 1])), "head room"
    doc.stack.undo()
    assert set(scene.point_entity_ids()) == before


def test_new_brushes_take_the_last_brush_height_not_the_selection(window):
    doc = _open(window, _level("e1m1"))
    st, top, scene = window.state, window.views2d["Top"], doc.scene
    g = st.grid_size
    window.tool_actions["brush"].trigger()
    lo, hi = scene.bounds()
    drag(top, (lo[0] - 512, lo[1] - 512), (lo[0] - 256, lo[1] - 256))
    first = scene[max(scene.brush_ids())]
    assert isinstance(first, Brush)
    height = first.solid.vertices[:, 2].max() - first.solid.vertices[:, 2].min()
    assert height == max(4 * g, 64), "the grid's default height"
    monster = next(i for i in scene.point_entity_ids() if scene[i].classname.startswith("monster_"))
    window.tool_actions["select"].trigger()
    from editor.qt.tools.edit_ops import select
    select(doc, [monster])
    window.tool_actions["brush"].trigger()
    drag(top, (lo[0] - 1024, lo[1] - 512), (lo[0] - 768, lo[1] - 256))
    second = scene[max(scene.brush_ids())]
    z = second.solid.vertices[:, 2]
    np.testing.assert_allclose((z.min(), z.max()), (first.solid.vertices[:, 2].min(),
                                                    first.solid.vertices[:, 2].max()))
