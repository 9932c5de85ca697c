"""A streamed level (as the Blender add-on sends one) in the window: the game's names in the
hotspot list and the node inspector, and File ▸ Save game's boxes as level… round-tripping
through the loader."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from editor.qt.prompts import Prompts

REPO = Path(__file__).resolve().parents[2]

FLOOR = (1_000_000, -640.0, -640.0, 0.0, 640.0, 640.0, 0.0)  # a plane: no thickness
PILLARS = [(1_000_001 + k, 64.0 * k, 0.0, 0.0, 64.0 * k + 32.0, 32.0, 256.0) for k in range(6)]
NAMES = {1_000_000: "floor", **{1_000_001 + k: f"pillar.{k:03d}" for k in range(6)},
         **{k: f"crate {k}" for k in range(8)}}


def load_ps_link():
    spec = importlib.util.spec_from_file_location("ps_link_for_save_test", REPO / "clients" / "python" / "ps_link.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def movers(frame: int) -> list[tuple]:
    """Eight crates, all in the pillars' row, moving up a unit a frame."""
    return [(k, 48.0 * k, 8.0, float(frame), 48.0 * k + 40.0, 24.0, frame + 40.0, True) for k in range(8)]


class SavePrompts(Prompts):
    def __init__(self, parent, answer) -> None:
        super().__init__(parent)
        self.answer = answer

    def save_path(self, start, filters):
        self.filters = filters
        return self.answer


@pytest.fixture
def streamed(window, qtbot):
    """The window listening, and a game that sent its header and three frames."""
    window.live_link_ask = lambda parent, default: "127.0.0.1:0"
    window.act_connect_game.trigger()
    link = window.live_link
    ps_link = load_ps_link()
    game = ps_link.connect("127.0.0.1", int(link.address.rsplit(":", 1)[1]))
    game.set_static([FLOOR, *PILLARS])
    game.set_names(NAMES)
    game.set_meta({"game": "blender", "file": "arena.blend"})
    for frame in (1, 2, 3):
        game.send_frame(frame, movers(frame))
    game.flush(5)
    qtbot.waitUntil(lambda: link.session is not None and link.session.frames == 3, timeout=30_000)
    # the timeline shows the newest frame: the views draw its movers
    qtbot.waitUntil(lambda: window.timeline.frame == 3 and window.live_view.bodies_drawn == 8, timeout=30_000)
    yield window
    game.close(timeout=0)
    link.stop()


def test_the_games_names_show_in_the_hotspots_and_the_node_inspector(streamed, qtbot):
    w = streamed
    c = w.timeline
    tree = w.hotspot_panel.tree

    def rows():
        return [tree.topLevelItem(r).child(k).text(0) for r in range(tree.topLevelItemCount())
                for k in range(tree.topLevelItem(r).childCount())]

    w.hotspot_panel.refresh()  # while the game plays, the cells are found on a worker
    qtbot.waitUntil(lambda: any(text.startswith("crate ") for text in rows()), timeout=10_000)
    st = w.state
    st.flush()
    index = c.shown_index()
    row = next(r for r in range(len(st.node_table)) if len(index.node_objects(r)))
    st.inspect_node(row)
    listed = [w.inspector_panel.objects.item(i).text() for i in range(w.inspector_panel.objects.count())]
    expected = [f"{NAMES[int(oid)]} {int(oid)}" for oid in index.node_objects(row)]
    assert sorted(listed) == sorted(expected)


def test_save_the_games_boxes_as_a_level_and_open_it(streamed, qtbot, tmp_path):
    w = streamed
    c, link = w.timeline, w.live_link
    undo_before = len(w.document.stack)
    target = tmp_path / "from_blender"
    w.prompts = SavePrompts(w, (str(target), "whatever"))
    qtbot.waitUntil(lambda: w.act_save_live_level.isEnabled(), timeout=10_000)
    w.act_play.trigger()  # pause, then scrub back: frame 2 on screen
    w.timeline_panel.slider.setValue(w.timeline_panel.slider.value() - 1)
    assert c.frame == 2 and c.play_state == "paused"
    w.act_save_live_level.trigger()
    saved = tmp_path / "from_blender.json"  # no extension given: the native format
    assert saved.exists() and not w.errors
    assert len(w.document.stack) == undo_before and not w.document.is_dirty()  # nothing was edited
    assert link.session.frames == 3  # the live session goes on

    assert w.open_file(str(saved), background=False)
    scene = w.document.scene
    entities = {int(scene[e].get("_ps_live_id")): e for e in scene.entity_ids()
                if scene[e].classname == "func_wall"}
    assert sorted(entities) == sorted([FLOOR[0], *(p[0] for p in PILLARS), *range(8)])
    world = scene[scene.worldspawn_id()]
    assert world.get("message") == f"boxes of blender (arena.blend) streamed from {link.session.source}, frame 2"
    for oid, entity in entities.items():
        props = scene[entity]
        assert props.get("targetname") == NAMES[oid]
        (brush,) = scene.brushes_of(entity)
        lo, hi = (v.reshape(3) for v in scene.bounds_of([brush]))
        if oid == FLOOR[0]:  # a plane is thickened into a brush about its own height
            np.testing.assert_allclose(lo, [-640, -640, -1 / 128])
            np.testing.assert_allclose(hi, [640, 640, 1 / 128])
        elif oid >= 1_000_000:
            box = next(p for p in PILLARS if p[0] == oid)
            np.testing.assert_allclose(np.concatenate([lo, hi]), box[1:])
            assert props.get("_ps_live_role") == "static"
        else:  # a mover where frame 2 had it
            np.testing.assert_allclose(np.concatenate([lo, hi]), movers(2)[oid][1:7])
            assert props.get("_ps_live_role") == "moving"


def test_save_as_level_before_any_frame_says_so_in_one_line(window):
    from editor.qt.live.level_save import save_live_level

    window.live_link_ask = lambda parent, default: "127.0.0.1:0"
    window.act_connect_game.trigger()
    try:
        assert not window.act_save_live_level.isEnabled()
        assert not save_live_level(window)
        assert window.errors[-1] == "Save game's boxes as level: no game has sent a frame yet"
    finally:
        window.live_link.stop()
