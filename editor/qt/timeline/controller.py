"""The timeline's playhead: a live simulation plus the replay of its recorded frames.

:class:`TimelineController` owns a :class:`~editor.model.simulation.Simulation` of the open
document (created on first play or step, on a *copy* of the scene's dynamic state: playing
never pushes an undo command nor dirties the document) and a :class:`~editor.model.recording.Replay`
of the recording into a fresh index of the **current** backend for scrubbing.

The playhead is either at the live edge (the simulation's own frame, shown from its own index)
or behind it (a recorded frame, rebuilt into the replay index). Playing from behind the edge
steps the replay through the recorded frames; at the end it wraps to the first recorded frame
when *loop* is on, otherwise it carries on simulating live. A loaded recording (``.npz`` or the
JSON frame-lines format) has no live simulation: its playback stops at the end or wraps.
``stop()`` drops the simulation and the views show the edited document again.

Play makes the simulation on a worker thread (:class:`~editor.qt.workers.CallWorker`): its
index, its record of the level and the level probe its walkers cast through take a real
level's first Play 100-200 ms, which held the window. The worker steps the first frame too (a
simulation's first frame costs several times a later one: 60-110 ms on e3m4, later frames
10-30 ms); the window shows it at the first tick. The playhead says *playing* at once; the
dock opens and the first frame steps once the simulation is handed back (opening the dock
meanwhile made the window's layout and paint share the interpreter with the worker). The worker reads the
scene while the window goes on: an edit meanwhile makes its result stale, and it is dropped
(and made again while Play is still on). The window's Step (:meth:`TimelineController.request_step`)
makes it the same way and steps once it is handed back; :meth:`TimelineController.step` makes it
on the calling thread (scripts, screenshot mode's ``--frames``). A seek never makes one: the
slider moves only over frames a simulation or a loaded recording already holds.

*Animate level entities* (:attr:`TimelineController.animate`, on by default like the command
line's ``simulate``) lets entities without motion keys move as their class does (monsters
wander and shoot, :mod:`editor.model.class_motion`); switching it drops the running simulation,
so the next frame starts from the edited level with the new choice. It is a view of the
simulation, not an edit: the document stays clean.

Per displayed frame the controller emits ``frame_changed(FrameStats)`` once; views and panels
redraw from :meth:`shown_index`, :meth:`shown_bodies` and :meth:`shown_nodes`.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal

from editor.model import ChangeKind
from editor.model.frame_format import load_frame_lines
from editor.model.frame_step import FrameStats
from editor.model.hotspots import HotspotWindow
from editor.model.live.session import parse_names
from editor.model.recording import Recording, Replay, load_recording, save_recording
from editor.model.simulation import Simulation
from editor.model.stats_history import StatsHistory
from editor.model.work_budget import WorkBudgetError

from ..workers import CallWorker

#: playback speeds offered (times real time)
SPEEDS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
#: timer period: one tick per displayed frame at 60 Hz
TICK_MS = 16


class TimelineController(QObject):
    """Play, pause, step, scrub and record the simulation of the open document.

    Parameters
    ----------
    state : EditorState
        The editor state (its document is simulated; its overlay follows the playhead).

    Signals
    -------
    frame_changed(FrameStats)
        The displayed frame changed (a step, a seek, a stop).
    state_changed(str)
        ``"stopped"``, ``"playing"`` or ``"paused"``.
    source_changed()
        A simulation started or ended, or a recording was loaded: the frame range changed.
    error(str)
        Something could not be done (a bad motion key, an unreadable file).
    """

    STOPPED, PLAYING, PAUSED = "stopped", "playing", "paused"

    frame_changed = Signal(object)
    state_changed = Signal(str)
    source_changed = Signal()
    error = Signal(str)

    def __init__(self, state, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.play_state = self.STOPPED
        self.speed = 1.0
        self.loop = False
        self.record = True
        self.animate = True
        self.simulation: Simulation | None = None
        self.loaded: Recording | None = None     # a recording opened from a file
        self.loaded_name = ""
        self.replay: Replay | None = None
        self.replay_frame = -1                   # -1: the playhead is at the live edge
        self.history = StatsHistory()  # stats of every frame shown, for the plots
        self.last_stats: FrameStats | None = None
        # a loaded recording has no simulation to keep hotspots: its replay feeds this window
        self.replay_hotspots = HotspotWindow()
        self._names_of: Recording | None = None  # the recording whose meta.names _names holds
        self._names: dict[int, str] = {}
        self._owed = 0.0
        self._last_tick = 0.0
        #: the worker making the simulation for Play or Step, while it runs
        self._preparing: CallWorker | None = None
        #: frames the window's Step asked for while the simulation was being made
        self._steps_owed = 0
        #: the first frame the worker stepped, until the window shows it
        self._stepped_ahead: FrameStats | None = None
        #: counts the edits of the document (and new documents): a simulation made from an
        #: older count is stale
        self._generation = 0
        self.timer = QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._on_tick)
        state.document_replaced.connect(self._on_document_replaced)
        if state.document is not None:
            self._on_document_replaced(state.document)

    # ------------------------------------------------------------------ document
    def _on_document_replaced(self, document) -> None:
        self._generation += 1
        self.stop()
        self.loaded = None
        document.scene_changed.connect(self._on_scene_changed)
        document.index_changed.connect(self._on_index_changed)

    def _on_scene_changed(self, ids, kind) -> None:
        # an edit (not a selection) makes the running simulation stale: back to the edited state
        if kind & ~ChangeKind.SELECTION:
            self._generation += 1
            if self.simulation is not None:
                self.stop()

    def _on_index_changed(self) -> None:
        """A backend or parameter change: replay the shown frame into the new kind of tree, so
        the overlay never stays on the replay's old one."""
        replay, doc = self.replay, self.state.document
        if replay is None or doc is None:
            return
        if type(replay.index) is type(doc.index) and replay.index.params == doc.index.params:
            return
        frame = self.replay_frame
        self.replay = None
        if frame >= 0:
            self.seek(frame)

    # ------------------------------------------------------------------ reading
    @property
    def active(self) -> bool:
        """True while a simulated or loaded frame is shown instead of the edited document."""
        return self.simulation is not None or self.replay is not None

    @property
    def preparing(self) -> bool:
        """True while Play makes the simulation on a worker thread."""
        return self._preparing is not None

    @property
    def recording(self) -> Recording | None:
        if self.loaded is not None:
            return self.loaded
        return self.simulation.recording if self.simulation is not None else None

    @property
    def frame(self) -> int:
        """The displayed frame number (-1 when stopped)."""
        if self.replay_frame >= 0:
            return self.replay_frame
        return self.simulation.frame if self.simulation is not None else -1

    @property
    def live(self) -> bool:
        """The playhead is at the live simulation's own frame."""
        return self.simulation is not None and self.replay_frame < 0

    def shown_index(self):
        """The spatial index of the displayed frame, or ``None`` (show the document's)."""
        sim = self.simulation
        if sim is not None and self.replay_frame < 0:  # live
            return sim.index
        if self.replay is not None and self.replay_frame >= 0:
            return self.replay.index
        return None

    def shows_frame_index(self) -> bool:
        """Whether :meth:`shown_index` gives a frame's index, told without reading it (a live
        game's frame brings its index over from the processing process when first read)."""
        sim = self.simulation
        if sim is not None and self.replay_frame < 0:
            return sim.has_index if hasattr(sim, "has_index") else sim.index is not None
        return self.replay is not None and self.replay_frame >= 0

    def shown_index_reader(self):
        """A callable giving :meth:`shown_index` of the frame displayed now, read only when
        called (see :meth:`shows_frame_index`)."""
        sim = self.simulation
        if sim is not None and self.replay_frame < 0 and hasattr(sim, "index_reader"):
            return sim.index_reader()
        index = self.shown_index()
        return lambda: index

    def shown_query_answers(self, ask):
        """The displayed live frame's answers to ``ask`` (a
        :class:`~editor.model.query_answers.QueryAsk`), made where its index lives; None
        when no live frame is shown or it came without them (then ask :meth:`shown_index`)."""
        sim = self.simulation
        if sim is not None and self.replay_frame < 0 and hasattr(sim, "query_answers"):
            return sim.query_answers(ask)
        return None

    def shown_nodes(self):
        """Node table of the displayed frame (the live one is read once per frame already)."""
        sim = self.simulation
        if sim is not None and self.replay_frame < 0 and sim.last_nodes is not None:  # live
            return sim.last_nodes
        index = self.shown_index()
        return None if index is None else index.nodes()

    def shown_pairs(self):
        sim = self.simulation
        if sim is not None and self.replay_frame < 0:  # live
            return sim.last_pairs
        return self.replay.last_pairs if self.replay is not None else None

    def shown_bodies(self):
        """``(ids, lo, hi, awake)`` of the dynamic objects of the displayed frame, or ``None``."""
        sim = self.simulation
        if sim is not None and self.replay_frame < 0:  # live
            return sim.bodies_bounds()
        if self.replay is not None and self.replay_frame >= 0:
            rec = self.replay.recording.get(self.replay_frame)
            return rec.ids, rec.lo, rec.hi, rec.awake
        return None

    def shown_names(self) -> dict[int, str]:
        """The names a game sent for its objects (``meta.names``): the live session's, else
        those of the recording shown; empty for a simulation of the level."""
        names = getattr(self.simulation, "names", None)
        if names:
            return names
        rec = self.recording
        if rec is None or "names" not in rec.meta:
            return {}
        if self._names_of is not rec:  # parsed once per recording
            self._names_of, self._names = rec, parse_names(rec.meta.get("names"))
        return self._names

    @property
    def hotspots(self) -> HotspotWindow | None:
        """Pair tests per cell over the sliding window of the running source."""
        if self.simulation is not None:
            return self.simulation.hotspots
        return self.replay_hotspots if self.loaded is not None else None

    def frame_range(self) -> tuple[int, int]:
        """First and last recorded frame (``(-1, -1)`` when nothing is recorded)."""
        rec = self.recording
        if rec is None or not len(rec):
            return -1, -1
        return rec.first_frame, rec.last_frame

    def plot_columns(self) -> dict[str, np.ndarray]:
        """Per-frame stats of every stepped frame shown (frame 0, the edited state, excluded)."""
        return self.history.columns(after=self._first_plotted())

    def _first_plotted(self) -> int:
        return 0 if self.loaded is None else self.loaded.first_frame - 1

    # ------------------------------------------------------------------ source
    def _index_like_document(self):
        index = self.state.document.index
        return type(index)(index.params)

    def _ensure_source(self) -> bool:
        if self.simulation is not None or self.loaded is not None:
            return True
        doc = self.state.document
        if doc is None:
            return False
        self._cancel_preparing()
        config = _default_config(self.record, self.animate)
        try:
            simulation = Simulation(doc.scene, backend=self._index_like_document(), config=config)
        except Exception as exc:  # a bad motion key names the entity and key
            self.error.emit(f"cannot simulate: {exc}")
            return False
        self._adopt(simulation)
        return True

    def _adopt(self, simulation: Simulation) -> None:
        """Show ``simulation`` as the source, from its first frame."""
        if simulation.config.record != self.record:  # switched while it was made
            simulation.config = dataclasses.replace(simulation.config, record=self.record)
        self.simulation = simulation
        self.history.clear()
        self.replay = None
        self.replay_frame = -1
        self._stepped_ahead = None
        self.source_changed.emit()

    def load_recording(self, path: str) -> bool:
        """Open a ``.npz`` recording or a JSON frame-lines file and show its first frame."""
        try:
            if path.lower().endswith(".npz"):
                rec = load_recording(path)
            else:
                rec = load_frame_lines(path)
        except Exception as exc:
            self.error.emit(str(exc))
            return False
        if not len(rec):
            self.error.emit(f"{path}: the recording holds no frames")
            return False
        self.stop()
        self.loaded = rec
        self.loaded_name = path
        self.history.clear()
        self.replay_hotspots.clear()
        self.source_changed.emit()
        self.seek(rec.first_frame)
        return True

    def save_recording(self, path: str) -> bool:
        rec = self.recording
        if rec is None or not len(rec):
            self.error.emit("nothing recorded yet: play or step the simulation first")
            return False
        try:
            save_recording(rec, path)
        except Exception as exc:
            self.error.emit(f"{path}: could not save the recording: {exc}")
            return False
        return True

    # ------------------------------------------------------------------ transport
    def _set_state(self, value: str) -> None:
        if value != self.play_state:
            self.play_state = value
            self.state_changed.emit(value)

    def play(self) -> None:
        """Play: at once when there is a source; else the simulation is made on a worker
        thread first (see the module docstring) and the playhead says *playing* meanwhile."""
        if self.simulation is None and self.loaded is None:
            if self.state.document is None:
                return
            self._set_state(self.PLAYING)
            self._prepare_simulation()
            return
        self._start_timer()

    def _wants_simulation(self) -> bool:
        """Play or a Step waits for the simulation being made."""
        return self.play_state == self.PLAYING or self._steps_owed > 0

    def _start_timer(self) -> None:
        self._owed = 0.0
        self._last_tick = time.perf_counter()
        self.timer.start()
        self._set_state(self.PLAYING)

    def _prepare_simulation(self) -> None:
        """Make the simulation of the open document on a worker thread, with the level probe
        its walkers cast through built too; :meth:`_on_prepared` takes it on the window's
        thread."""
        if self._preparing is not None:
            return
        doc = self.state.document
        if doc is None:
            return
        scene, backend = doc.scene, self._index_like_document()
        config = _default_config(self.record, self.animate)

        def make() -> tuple[Simulation, FrameStats | WorkBudgetError | None]:
            simulation = Simulation(scene, backend=backend, config=config)
            if simulation.behaviours:  # only moving bodies cast rays through the level
                simulation.level.prepare()
            try:  # the simulation is this thread's until it is handed back
                first: FrameStats | WorkBudgetError | None = simulation.step()
            except WorkBudgetError as exc:  # reported on the window's thread, as a step's is
                first = exc
            return simulation, first

        worker = CallWorker(make)
        generation = self._generation
        worker.result.connect(lambda made, ms: self._on_prepared(worker, made[0], made[1],
                                                                 generation))
        worker.failed.connect(lambda message: self._on_prepare_failed(worker, message,
                                                                      generation))
        self._preparing = worker
        worker.start()

    def _cancel_preparing(self) -> None:
        self._steps_owed = 0
        if self._preparing is not None:
            self._preparing.cancel()
            self._preparing = None

    def _on_prepared(self, worker, simulation: Simulation,
                     first: FrameStats | WorkBudgetError | None, generation: int) -> None:
        if worker is not self._preparing:
            return  # cancelled (stopped, another document)
        self._preparing = None
        if self.simulation is not None or self.loaded is not None:
            return  # Step made one on the window's thread meanwhile
        if generation != self._generation:  # an edit came in while it was made: stale
            if self._wants_simulation():
                self._prepare_simulation()
            return
        self._adopt(simulation)
        owed, self._steps_owed = self._steps_owed, 0
        if isinstance(first, WorkBudgetError):  # stop, as a step on this thread does
            self.pause()
            self.error.emit(str(first.located(self._source_name(), self._next_frame())))
            return
        self._stepped_ahead = first
        if self.play_state == self.PLAYING:
            self._start_timer()
        elif owed:
            self._advance(owed)

    def _on_prepare_failed(self, worker, message: str, generation: int) -> None:
        if worker is not self._preparing:
            return
        self._preparing = None
        if generation != self._generation:  # the scene changed under the read: try again
            if self._wants_simulation():
                self._prepare_simulation()
            return
        self._steps_owed = 0
        self._set_state(self.STOPPED)
        self.error.emit(f"cannot simulate: {message}")

    def pause(self) -> None:
        self.timer.stop()
        if self.play_state == self.PLAYING:
            self._set_state(self.PAUSED)

    def toggle(self) -> None:
        self.pause() if self.play_state == self.PLAYING else self.play()

    def stop(self) -> None:
        """Drop the simulation (or unload nothing: a loaded recording rewinds) and show the
        edited document again."""
        self.timer.stop()
        self._cancel_preparing()
        was_active = self.active
        self.simulation = None
        self._stepped_ahead = None
        self.replay = None
        self.replay_frame = -1
        self.history.clear()
        self.last_stats = None
        self._set_state(self.STOPPED)
        if was_active:
            self.source_changed.emit()
            self._show(None)

    def request_step(self, frames: int = 1) -> None:
        """The window's Step: advance ``frames`` frames (pauses playback). With no simulation
        yet it is made on a worker thread first, as for Play, and the frames are stepped once
        it is handed back (the playhead says *paused* meanwhile; Steps asked for meanwhile
        add up)."""
        if self.simulation is not None or self.loaded is not None:
            self.step(frames)
            return
        if self.state.document is None:
            return
        self.timer.stop()
        self._set_state(self.PAUSED)
        self._steps_owed += max(int(frames), 0)
        self._prepare_simulation()

    def step(self, frames: int = 1) -> FrameStats | None:
        """Advance ``frames`` frames (pauses playback); with no simulation yet it is made on
        the calling thread (the window's Step uses :meth:`request_step`)."""
        if not self._ensure_source():
            return None
        if self.play_state != self.PAUSED:
            self.timer.stop()
            self._set_state(self.PAUSED)
        return self._advance(frames)

    def set_speed(self, speed: float) -> None:
        if not speed > 0:
            raise ValueError(f"playback speed must be positive, got {speed}")
        self.speed = float(speed)

    def set_animate(self, on: bool) -> None:
        """Animate level entities by class (or only those with motion keys) from now on."""
        on = bool(on)
        if on == self.animate:
            return
        self.animate = on
        if self.simulation is not None or self.preparing:
            self.stop()  # the running simulation was made with the other choice

    def set_loop(self, on: bool) -> None:
        self.loop = bool(on)

    def set_record(self, on: bool) -> None:
        """Keep recording frames (off: the ring stops growing, scrubbing keeps what it has)."""
        self.record = bool(on)
        if self.simulation is not None:
            self.simulation.config = dataclasses.replace(self.simulation.config, record=self.record)

    def seek(self, frame: int) -> FrameStats | None:
        """Show recorded ``frame``: replayed into a fresh index of the current backend."""
        stats = self._seek(frame)
        if stats is not None:
            self._show(stats)
        return stats

    def _seek(self, frame: int) -> FrameStats | None:
        rec = self.recording
        if rec is None or rec.index_of(frame) < 0:
            return None
        if self.simulation is not None and frame == self.simulation.frame:
            self.replay_frame = -1  # back at the live edge
            stats = self.simulation.last_stats
        else:
            if self.replay is None or self.replay.recording is not rec:
                self.replay = Replay(rec, self._index_like_document())
            stats = self.replay.seek(frame)
            self.replay_frame = frame
            self.history.setdefault(frame, stats)
        if self.play_state == self.STOPPED:
            self._set_state(self.PAUSED)
        return stats

    # ------------------------------------------------------------------ stepping
    def _on_tick(self) -> None:
        now = time.perf_counter()
        elapsed, self._last_tick = now - self._last_tick, now
        dt = self.simulation.config.dt if self.simulation is not None else float(
            self.loaded.meta.get("dt", 1 / 60)) if self.loaded is not None else 1 / 60
        self._owed += elapsed * self.speed / dt
        frames = min(int(self._owed), 4)  # a slow backend lowers the frame rate, not the UI
        self._owed = min(self._owed - frames, 1.0)
        if frames:
            self._advance(frames, until=now + TICK_MS / 1000)

    def show_arrived(self) -> FrameStats | None:
        """While playing at the live edge, show a frame the source was just handed now rather
        than at the next tick (a live game's frame waits for no timer); else nothing."""
        if self.play_state != self.PLAYING or not self.live:
            return None
        self._last_tick = time.perf_counter()
        self._owed = 0.0  # this frame is the one the next tick would have owed
        return self._advance(1)

    def _advance(self, frames: int, until: float | None = None) -> FrameStats | None:
        """Step up to ``frames`` frames and show the last; with ``until`` (a
        ``time.perf_counter()`` value) stop stepping once it has passed, so a tick owing
        several slow frames (a level whose frames take 100 ms) holds the window for one frame's
        work, not four: the simulation then runs slower than real time, the window does not."""
        stats = None
        for k in range(frames):
            if k and until is not None and time.perf_counter() > until:
                break
            try:
                stepped = self._advance_one()
            except WorkBudgetError as exc:  # stop, as the command line does, in one line
                self.pause()
                self.error.emit(str(exc.located(self._source_name(), self._next_frame())))
                stepped = None
            if stepped is None:
                break
            stats = stepped
        # the last frame stepped is shown even when the source ran out before the tick's
        # count: a live game's frame is handed out once, and a game that sent one and then
        # waits (an edit in Blender) would otherwise never be seen
        if stats is not None:
            self._show(stats)
        return stats

    def _advance_one(self) -> FrameStats | None:
        ahead, self._stepped_ahead = self._stepped_ahead, None
        if ahead is not None and self.live and self.simulation is not None and \
                ahead.frame == self.simulation.frame:  # stepped by the worker that made it
            self.history[ahead.frame] = ahead
            return ahead
        rec = self.recording
        if rec is None:
            return None  # nothing runs or was loaded: there is no next frame
        if self.replay_frame >= 0:
            pos = rec.index_of(self.replay_frame)
            if pos + 1 < len(rec):
                nxt = rec.at(pos + 1).frame
                if self.simulation is not None and nxt == self.simulation.frame:
                    self.replay_frame = -1  # caught up with the live edge
                    return self.simulation.last_stats
                replay = self.replay
                assert replay is not None, "a replay frame is shown only through a replay"
                stats = replay.step()
                self.replay_frame = replay.frame
                pairs = replay.last_pairs
                if self.simulation is None and pairs is not None:
                    self.replay_hotspots.push(self.replay_frame, replay.index.nodes(), pairs.node_tests,
                                             pairs.pairs)
                self.history.setdefault(self.replay_frame, stats)
                return stats
            if self.loop:
                return self._wrap()
            if self.simulation is None:
                self.pause()
                return None
            self.replay_frame = -1
        if self.simulation is None:  # a loaded recording, before its first seek
            return self._seek(rec.first_frame)
        if self.loop and self.record and len(rec) >= rec.capacity and \
                self.simulation.frame >= rec.last_frame:
            return self._wrap()
        stats = self.simulation.step()
        if stats is not None:  # a live game's source has no new frame until the game sends one
            self.history[stats.frame] = stats
        return stats

    def _source_name(self) -> str:
        if self.simulation is None and self.loaded_name:
            return self.loaded_name
        document = self.state.document
        return document.path if document is not None and document.path else "demo level"

    def _next_frame(self) -> int:
        if self.replay_frame >= 0 or self.simulation is None:
            return self.replay_frame + 1
        return self.simulation.frame + 1

    def _wrap(self) -> FrameStats | None:
        rec = self.recording
        if rec is None:
            return None
        self.replay = None  # a fresh index, so lifespans restart like the first pass
        first = rec.first_frame
        if self.simulation is not None and first == 0:
            first = rec.at(min(1, len(rec) - 1)).frame
        return self._seek(first)

    # ------------------------------------------------------------------ display
    def _show(self, stats: FrameStats | None) -> None:
        self.last_stats = stats
        self.frame_changed.emit(stats)


def _default_config(record: bool = True, animate: bool = True):
    from editor.model.simulation import SimulationConfig
    return SimulationConfig(record=record, class_motion=animate)
