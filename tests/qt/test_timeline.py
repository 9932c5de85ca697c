"""The simulation's GUI: timeline transport, scrubbing, live plots, heatmaps, hotspots."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model.commands import SetSelection


@pytest.fixture
def timeline_window(window):
    if getattr(window, "timeline", None) is None:
        from editor.qt.timeline import install_timeline
        install_timeline(window)
    return window


def test_play_advances_frames_and_plots_one_point_per_frame(timeline_window, qtbot):
    w = timeline_window
    c = w.timeline
    assert c.frame == -1 and not c.active
    c.play()
    qtbot.waitUntil(lambda: c.frame >= 12, timeout=10_000)
    c.pause()
    played = c.frame
    assert c.play_state == "paused"
    # the docks refresh for the still frame one per event-loop pass after the pause
    qtbot.waitUntil(lambda: w.timeline_panel.plots.point_count("candidates") == played,
                    timeout=5_000)
    assert w.timeline_panel.plots.point_count("update_ms") == played
    assert f"frame {played} " in w.timeline_panel.frame_label.text()
    cols = c.plot_columns()
    assert cols["frame"].tolist() == list(range(1, played + 1))


def test_plot_ranges_hold_still_while_frames_arrive_inside_them(timeline_window, qtbot):
    """The plots' ranges move in steps, not with every frame (a changed range draws every
    axis tick and grid line again): stepping on keeps the same ranges while the new points
    fall inside them, and the ranges always hold every point."""
    c = timeline_window.timeline
    plots = timeline_window.timeline_panel.plots
    c.step(20)
    seen: list[dict] = []
    changes = dict.fromkeys(plots.widgets, 0)
    for _ in range(40):
        c.step()  # a step refreshes the plots at once
        qtbot.wait(20)  # and they paint (a fitted range would be fitted then)
        ranges = {name: plot.getViewBox().viewRange() for name, plot in plots.widgets.items()}
        cols = c.plot_columns()
        (x0, x1), _ = ranges["pairs"]
        assert x0 <= cols["frame"][0] and cols["frame"][-1] <= x1
        for name, columns in (("pairs", ("candidates", "overlapping")), ("nodes", ("nodes", "awake"))):
            top = ranges[name][1][1]
            assert max(cols[col].max() for col in columns) <= top
        for name in changes:
            changes[name] += bool(seen) and ranges[name] != seen[-1][name]
        seen.append(ranges)
    # frames 21 to 60: the frame axis steps at 25, 30, 40, 50 and 60
    assert max(changes.values()) <= 10, f"ranges changed on these many of 40 frames: {changes}"


@pytest.mark.parametrize("first,last", [(1, 5), (1, 100), (300, 900), (7, 7), (0, 12345)])
def test_a_plots_frame_range_holds_its_frames_in_round_steps(first, last):
    from editor.qt.timeline.plots import frame_range, nice_ceil

    lo, hi = frame_range(first, last)
    assert lo <= first and last <= hi
    assert hi - lo <= 2.5 * max(last - first, 1) + 10  # not mostly empty
    assert [nice_ceil(v) for v in (0.0, 0.3, 1.0, 1.01, 7.0, 1234.0)] == [1.0, 0.3, 1.0, 1.2, 8.0, 1500.0]


def test_step_adds_exactly_one_frame_and_pause_holds(timeline_window, qtbot):
    c = timeline_window.timeline
    c.step(5)
    assert c.frame == 5 and c.play_state == "paused"
    qtbot.wait(100)
    assert c.frame == 5  # paused: the timer does not advance
    timeline_window.timeline_panel.step_button.click()
    assert c.frame == 6
    assert timeline_window.timeline_panel.plots.point_count() == 6


def test_scrubbing_back_replays_the_recorded_pairs(timeline_window, qtbot):
    c = timeline_window.timeline
    pairs_at, bodies_at = {}, {}
    for _ in range(40):
        c.step()
        pairs_at[c.frame] = c.shown_pairs().pairs.copy()
        bodies_at[c.frame] = c.shown_bodies()
    slider = timeline_window.timeline_panel.slider
    assert (slider.minimum(), slider.maximum()) == (0, 40)
    for frame in (12, 27, 3):
        slider.setValue(frame)
        assert c.frame == frame and not c.live
        np.testing.assert_array_equal(c.shown_pairs().pairs, pairs_at[frame])
        ids, lo, hi, awake = c.shown_bodies()
        np.testing.assert_array_equal(ids, bodies_at[frame][0])
        np.testing.assert_array_equal(lo, bodies_at[frame][1])
        np.testing.assert_array_equal(awake, bodies_at[frame][3])
    # playing from behind the edge replays the recorded frames, then reaches the live edge
    c.step(37)
    assert c.frame == 40 and c.live
    np.testing.assert_array_equal(c.shown_pairs().pairs, pairs_at[40])
    c.step()
    assert c.frame == 41 and c.live


def test_overlay_follows_the_displayed_frame_once_per_frame(timeline_window, qtbot):
    w = timeline_window
    c, st = w.timeline, w.state
    st.set_overlay_settings(metric="lifespan")
    st.flush()
    rebuilds = []
    st.overlay_changed.connect(lambda geom: rebuilds.append(geom))
    c.step(3)
    c.step(4)
    qtbot.waitUntil(lambda: len(rebuilds) >= 1)
    qtbot.wait(50)
    assert len(rebuilds) == 1  # two displayed frames in one event-loop turn: one rebuild
    assert st.node_table is c.simulation.last_nodes
    assert rebuilds[-1].metric == "lifespan"
    np.testing.assert_array_equal(rebuilds[-1].values,
                                  c.simulation.last_nodes.lifespan_left[rebuilds[-1].rows])
    # the views draw the moving bodies of the frame
    assert w.live_view.bodies_drawn == len(c.simulation.bodies_bounds()[0]) > 0
    c.stop()
    st.flush()
    assert len(st.node_table) == len(w.document.index.nodes())
    assert w.live_view.bodies_drawn == 0


def test_hotspots_rank_cells_and_select_their_objects(timeline_window, qtbot):
    w = timeline_window
    c, doc = w.timeline, w.document
    c.step(90)
    panel = w.hotspot_panel
    panel.refresh()
    assert panel.tree.topLevelItemCount() > 0
    tests = [int(panel.tree.topLevelItem(r).text(1)) for r in range(panel.tree.topLevelItemCount())]
    assert tests == sorted(tests, reverse=True) and tests[0] > 0
    row = next(r for r in range(panel.tree.topLevelItemCount())
               if any(i in doc.scene for i in panel.tree.topLevelItem(r).data(0, 256)))
    wanted = {i for i in panel.tree.topLevelItem(row).data(0, 256) if i in doc.scene}
    assert panel.select_row(row)
    assert set(doc.selection) == wanted
    assert not doc.is_dirty()
    assert isinstance(doc.stack.command(doc.stack.index - 1), SetSelection)
    doc.stack.undo()
    assert set(doc.selection) != wanted
    # the cell is framed in the top view
    spot = panel.hotspots[row]
    xr, yr = w.views2d["Top"].vb.viewRange()
    assert xr[0] <= spot.lo[0] and spot.hi[0] <= xr[1]


def test_document_stays_clean_while_playing_and_stop_returns_to_the_edit(timeline_window, qtbot):
    w = timeline_window
    c, doc = w.timeline, w.document
    history_before = (doc.stack.index, len(doc.stack))
    entity_before = {oid: (doc.scene[oid].lo.copy()) for oid in doc.scene.point_entity_ids()}
    c.play()
    qtbot.waitUntil(lambda: c.frame >= 20, timeout=10_000)
    assert not doc.is_dirty()
    assert (doc.stack.index, len(doc.stack)) == history_before
    assert "*" not in w.windowTitle()
    c.stop()
    assert c.frame == -1 and c.play_state == "stopped" and not c.active
    for oid, lo in entity_before.items():
        np.testing.assert_array_equal(doc.scene[oid].lo, lo)


def test_an_edit_stops_the_simulation(timeline_window):
    from editor.model.commands import SetProperties
    c, doc = timeline_window.timeline, timeline_window.document
    c.step(3)
    oid = doc.scene.point_entity_ids()[0]
    assert doc.push(SetProperties([oid], {"note": "edited"}))
    assert not c.active and c.frame == -1


def test_recording_saves_loads_and_plays_to_its_end(timeline_window, qtbot, tmp_path):
    c = timeline_window.timeline
    c.step(15)
    path = str(tmp_path / "run.npz")
    assert c.save_recording(path)
    pairs_live = c.shown_pairs().pairs.copy()
    assert c.load_recording(path)
    assert c.simulation is None and c.frame_range() == (0, 15)
    c.step(15)
    assert c.frame == 15
    np.testing.assert_array_equal(c.shown_pairs().pairs, pairs_live)
    c.step()  # the end of a loaded recording without loop: stays on the last frame
    assert c.frame == 15
    c.set_loop(True)
    c.step()
    assert c.frame == 0


def test_malformed_frame_lines_are_reported_and_nothing_changes(timeline_window, tmp_path):
    w = timeline_window
    c = w.timeline
    c.step(2)
    bad = tmp_path / "game.jsonl"
    bad.write_text('{"frame": 0, "objects": [[1, 0, 0, 0, 1, 1, 1, true]]}\n'
                   '{"frame": 1, "objects": [[1, 0, 0, 0, 1, 1]]}\n')
    errors = []
    c.error.connect(errors.append)
    assert not c.load_recording(str(bad))
    assert errors and ":2:" in errors[0]
    assert c.simulation is not None and c.frame == 2 and c.loaded is None


def test_frame_lines_from_a_game_replay_the_same_pairs(timeline_window, tmp_path):
    from editor.model.frame_format import write_frame_lines
    c = timeline_window.timeline
    pairs_at = {}
    for _ in range(12):
        c.step()
        pairs_at[c.frame] = c.shown_pairs().pairs.copy()
    path = tmp_path / "game.jsonl"
    write_frame_lines(c.recording, path)
    assert c.load_recording(str(path))
    assert c.frame_range() == (0, 12) and c.frame == 0
    c.step(6)
    assert c.frame == 6
    np.testing.assert_array_equal(c.shown_pairs().pairs, pairs_at[6])
    timeline_window.timeline_panel.slider.setValue(11)
    np.testing.assert_array_equal(c.shown_pairs().pairs, pairs_at[11])
    c.stop()
    assert not c.active and c.loaded is not None  # stop shows the level; the file stays loaded


def test_simulation_menu_drives_the_timeline_and_opens_its_dock(timeline_window, qtbot):
    w = timeline_window
    menus = {a.text().replace("&", ""): a.menu() for a in w.menuBar().actions()}
    assert w.act_play in menus["Simulation"].actions()
    assert w.docks["timeline"].isHidden()  # the views keep their height until a frame is shown
    w.act_play.trigger()
    assert w.timeline.play_state == "playing"
    # the simulation is made on a worker thread: the dock opens with its first frame
    qtbot.waitUntil(lambda: not w.docks["timeline"].isHidden(), timeout=10_000)
    w.act_play.trigger()
    assert w.timeline.play_state == "paused"
    w.act_stop.trigger()
    assert w.timeline.play_state == "stopped" and not w.timeline.active


def test_a_slow_frame_holds_the_window_for_one_frame_per_tick(timeline_window, qtbot, monkeypatch):
    """When each frame takes longer than a tick, Play steps one frame per tick (the simulation
    runs slower than real time) instead of the up to four a tick owes, which held the window
    four frames' time on a big level."""
    import time

    w = timeline_window
    c = w.timeline
    w.timeline_panel.step_button.click()  # the simulation is made on a worker, then stepped
    qtbot.waitUntil(lambda: c.frame == 1, timeout=60_000)
    simulation = c.simulation
    real_step = simulation.step

    def slow_step():
        time.sleep(0.05)  # a frame of a big level with many monsters
        return real_step()

    monkeypatch.setattr(simulation, "step", slow_step)
    per_tick: list[int] = []
    real_tick = c._on_tick

    def counted_tick():
        before = c.frame
        real_tick()
        per_tick.append(c.frame - before)

    monkeypatch.setattr(c, "_on_tick", counted_tick)
    c.timer.timeout.disconnect()
    c.timer.timeout.connect(counted_tick)
    w.act_play.trigger()
    qtbot.waitUntil(lambda: c.frame >= 8, timeout=20_000)
    w.act_play.trigger()
    assert c.play_state == "paused"
    assert per_tick and max(per_tick) == 1, per_tick


def test_the_first_play_makes_its_simulation_and_level_probe_off_the_window_thread(
        timeline_window, qtbot, monkeypatch):
    """Play's first frame on the window's thread neither makes the simulation (its index and
    record of the level) nor builds the level probe its walkers cast through: a worker does
    both, and the window only starts stepping once they are handed back."""
    import threading

    from editor.model.level_probe import LevelProbe
    from editor.model.simulation import Simulation

    w = timeline_window
    c = w.timeline
    made: list[tuple[str, str]] = []
    for cls, name in ((Simulation, "__init__"), (LevelProbe, "_build")):
        original = getattr(cls, name)

        def counted(self, *args, _what=f"{cls.__name__}.{name}", _original=original, **kwargs):
            made.append((_what, threading.current_thread().name))
            return _original(self, *args, **kwargs)
        monkeypatch.setattr(cls, name, counted)
    w.act_play.trigger()
    assert c.play_state == "playing" and c.simulation is None and c.preparing
    qtbot.waitUntil(lambda: c.frame >= 5, timeout=20_000)
    w.act_play.trigger()
    assert c.play_state == "paused"
    assert ("Simulation.__init__", threading.main_thread().name) not in made
    assert ("LevelProbe._build", threading.main_thread().name) not in made
    assert [what for what, _ in made] == ["Simulation.__init__", "LevelProbe._build"], made
    assert c.simulation.level.rays_cast > 0  # the walkers did cast through the probe


def _record_simulations_made(monkeypatch) -> list[str]:
    """The names of the threads that make a :class:`Simulation`, in order."""
    import threading

    from editor.model.simulation import Simulation

    made: list[str] = []
    original = Simulation.__init__

    def counted(self, *args, **kwargs):
        made.append(threading.current_thread().name)
        return original(self, *args, **kwargs)
    monkeypatch.setattr(Simulation, "__init__", counted)
    return made


def test_the_first_step_makes_its_simulation_off_the_window_thread(timeline_window, qtbot,
                                                                   monkeypatch):
    """Step (F10, the Simulation menu's and the timeline's button) with no simulation yet has
    a worker make it, as Play does, and steps once it is handed back; Steps pressed meanwhile
    add up. Then Stop, Step again (a new simulation, off the window's thread too) and a seek
    on the timeline's slider, which makes none."""
    import threading

    w = timeline_window
    c = w.timeline
    made = _record_simulations_made(monkeypatch)
    w.act_step.trigger()
    assert c.simulation is None and c.preparing and c.play_state == "paused"
    w.timeline_panel.step_button.click()  # pressed again while it is made
    qtbot.waitUntil(lambda: c.frame == 2, timeout=20_000)
    assert c.play_state == "paused" and not c.preparing
    qtbot.wait(100)
    assert c.frame == 2  # paused: nothing more stepped
    w.act_stop.trigger()
    w.act_step.trigger()
    qtbot.waitUntil(lambda: c.frame == 1, timeout=20_000)
    for _ in range(3):
        w.act_step.trigger()  # the simulation exists: each Step steps at once
    assert c.frame == 4
    slider = w.timeline_panel.slider
    slider.setValue(2)  # a drag of the slider seeks
    assert c.frame == 2 and not c.live
    assert len(made) == 2, made
    assert threading.main_thread().name not in made, made


@pytest.mark.parametrize("action", ["act_play", "act_step"])
def test_the_worker_that_makes_the_simulation_steps_its_first_frame(timeline_window, qtbot,
                                                                    monkeypatch, action):
    """A simulation's first frame costs several times a later one (60-110 ms on e3m4): the
    worker that makes it steps it too, and the window shows it; later frames step on the
    window's thread."""
    import threading

    from editor.model.simulation import Simulation

    w = timeline_window
    c = w.timeline
    stepped: list[tuple[int, str]] = []
    original = Simulation.step

    def counted(self, *args, **kwargs):
        stats = original(self, *args, **kwargs)
        stepped.append((stats.frame, threading.current_thread().name))
        return stats
    monkeypatch.setattr(Simulation, "step", counted)
    shown: list[int] = []
    c.frame_changed.connect(lambda stats: shown.append(stats.frame))
    getattr(w, action).trigger()
    qtbot.waitUntil(lambda: c.frame >= 1 and not c.preparing, timeout=20_000)
    if action == "act_play":
        qtbot.waitUntil(lambda: c.frame >= 3, timeout=20_000)
        w.act_play.trigger()
    else:
        w.act_step.trigger()
        w.act_step.trigger()
    main = threading.main_thread().name
    assert stepped[0][0] == 1 and stepped[0][1] != main, stepped
    assert all(name == main for _, name in stepped[1:]), stepped
    # the first frame is counted (plotted) like any other; Step shows each of its frames (a
    # tick of Play shows the last of the frames it owes)
    assert 1 in c.history
    if action == "act_step":
        assert shown == [1, 2, 3], shown


def test_an_edit_while_play_prepares_drops_the_stale_simulation(timeline_window, qtbot):
    """An edit that lands while the worker makes the simulation makes it stale: it is made
    again from the edited level before the first frame steps."""
    from editor.model import Transform

    w = timeline_window
    c, doc = w.timeline, w.document
    oid = doc.scene.brush_ids()[0]
    w.act_play.trigger()
    assert c.preparing
    doc.push(Transform([oid], delta=[16.0, 0.0, 0.0], text="Move"))
    moved = doc.scene.bounds_of([oid])[0].copy()
    qtbot.waitUntil(lambda: c.frame >= 2, timeout=20_000)
    w.act_play.trigger()
    static = dict(zip(c.simulation.static_ids.tolist(), c.simulation.static_lo.tolist()))
    assert static[oid] == moved[0].tolist()


def test_a_pause_refreshes_the_docks_one_per_event_loop_pass(timeline_window, qtbot, monkeypatch):
    """Pause does not refresh every timeline dock in the click's own pass (together with the
    paint they held the window over 200 ms on a real level): each refreshes in a pass of its
    own, and all of them do."""
    from PySide6.QtCore import QAbstractEventDispatcher

    w = timeline_window
    c = w.timeline
    w.act_play.trigger()
    qtbot.waitUntil(lambda: c.frame >= 3, timeout=20_000)
    passes = [0]
    # the dispatcher wakes once at the start of each pass, before it runs any timer or event
    dispatcher = QAbstractEventDispatcher.instance()
    count = lambda: passes.__setitem__(0, passes[0] + 1)  # noqa: E731
    dispatcher.awake.connect(count)
    refreshed: list[tuple[str, int]] = []
    panels = {"plots": w.timeline_panel.plots, "hotspots": w.hotspot_panel, "pairs": w.pair_panel}
    for name, panel in panels.items():
        real = panel.refresh
        monkeypatch.setattr(panel, "refresh",
                            lambda _n=name, _r=real: (refreshed.append((_n, passes[0])), _r()))
    w.act_play.trigger()  # pause
    assert c.play_state == "paused" and refreshed == []
    qtbot.waitUntil(lambda: {n for n, _ in refreshed} == set(panels), timeout=5_000)
    dispatcher.awake.disconnect(count)
    assert len({p for _, p in refreshed}) == len(refreshed), refreshed
