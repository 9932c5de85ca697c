"""The scene's clock: moving entities, sleep, frame stepping, recording and seeking (Qt-free).

A :class:`Simulation` takes a *copy* of the scene's dynamic state when it is created and runs
on that: it never edits the scene, pushes no undo command and leaves the document clean.
It owns its own spatial index (any registered backend), built from the scene's objects:
brushes are static, point entities are dynamic bodies (moving when they carry motion keys,
see :mod:`.motion`), projectiles are spawned bodies. Stopping is just dropping the simulation
(or :meth:`Simulation.reset` to frame 0); the document and its :class:`IndexSync` were never
touched, so views switch back to ``sync.index`` and show the edited state.

One frame (:meth:`Simulation.step`):

1. behaviours set the velocity of their awake bodies (emitters queue projectiles);
2. awake bodies move by ``velocity * dt``; at the world bounds (the scene's bounds at frame 0)
   they bounce or despawn; projectiles past their lifetime despawn;
3. sleep test: a body that may sleep and moved slower than ``sleep_speed`` for
   ``sleep_frames`` frames in a row falls asleep (it stops being simulated);
4. the index is edited incrementally: ``remove`` despawned ids, ``insert`` spawned ones,
   ``update`` only the moved ids (:func:`.frame_step.apply_delta`);
5. wake test: a sleeping body whose box comes within ``wake_margin`` of an awake body's box
   (``0`` = contact) wakes up, found with one batch box query on the index; so does a sleeper
   whose behaviour's alarm has passed (the end of a planned stop);
6. ``set_awake`` for the flags that changed, ``step(1)`` the lifespans, ``pairs('active')``
   (:func:`.frame_step.settle_frame`): candidates (pair tests) and really overlapping pairs;
7. per-node pair tests go into the :class:`~.hotspots.HotspotWindow`; the frame's objects go
   into the :class:`~.recording.Recording` ring with its :class:`~.frame_step.FrameStats`.

API for a timeline (the GUI drives this; nothing here needs Qt):

* ``sim = Simulation(scene, backend="octree", params=None, seed=0, config=SimulationConfig())``
* ``sim.step(n=1) -> FrameStats`` (of the last frame), ``sim.frame``, ``sim.seek(frame)``
  (exact: restores the nearest checkpoint and re-simulates; the index is rebuilt there, so node
  lifespans restart at that checkpoint), ``sim.reset()`` (frame 0, the edited state)
* ``sim.index`` (show its ``nodes()`` while playing), ``sim.last_pairs`` (a ``PairResult``),
  ``sim.last_nodes`` (the node table of the last frame, when ``inspect_nodes``)
* ``sim.recording`` (ring of frames; ``recording.stats_arrays()`` gives per-frame columns for
  live plots), ``sim.hotspots.ranking(top)`` and ``sim.hotspots.totals_for(nodes)`` (heatmap)
* ``sim.bodies_bounds()`` -> ``(ids, lo, hi, awake)`` of every dynamic body now
* ``sim.changed`` signal ``callback(sim)`` after every step, seek or reset
* :class:`Timeline` — play/pause/stop state for a GUI timer: ``tick(elapsed_seconds)``.
"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from spatial.contract import NodeTable, PairResult, SpatialIndex
from spatial.errors import ParamError
from spatial.params import parse_params

from .class_motion import motion_keys, path_corners
from .events import Signal
from .frame_step import FrameDelta, FrameStats, apply_delta, settle_frame
from .hotspots import HotspotWindow
from .index_input import index_input
from .motion import (
    AT_BOUNDS_CHOICES,
    AT_BOUNDS_KEY,
    MOTION_KEY,
    NO_MOTION,
    PROJECTILE,
    SLEEP_KEY,
    Bodies,
    MotionEntry,
    MotionKeyError,
    Spawn,
    StepContext,
    World,
)
from .recording import DEFAULT_CAPACITY, FrameRecord, Recording
from .scene import Scene


@dataclass(frozen=True)
class SimulationConfig:
    """Clock, sleep and bookkeeping settings of a simulation.

    Attributes
    ----------
    dt : float
        Seconds per frame (1/60).
    sleep_frames : int
        Consecutive slow frames after which a body falls asleep.
    sleep_speed : float
        Speed (units per second) below which a frame counts as slow.
    wake_margin : float
        A sleeping body wakes when an awake body's box comes within this distance (per axis).
    recording_capacity : int
        Frames kept in the recording ring.
    checkpoint_every : int
        Frames between state checkpoints (seeking back re-simulates from the nearest one).
    checkpoints_kept : int
        Checkpoints kept besides frame 0's.
    hotspot_window : int
        Frames summed by the hotspot window.
    class_motion : bool
        Animate level entities: entities without their own ``_ps_motion`` move as their class
        does (monsters wander and shoot; see :mod:`.class_motion`). Off: only motion keys move.
    inspect_nodes : bool
        Read the node table every frame (node count, hotspots). Off for pure timing runs.
    record : bool
        Keep the recording ring.
    """

    dt: float = 1.0 / 60.0
    sleep_frames: int = 30
    sleep_speed: float = 1.0
    wake_margin: float = 8.0
    recording_capacity: int = DEFAULT_CAPACITY
    checkpoint_every: int = 30
    checkpoints_kept: int = 20
    hotspot_window: int = 60
    class_motion: bool = False
    inspect_nodes: bool = True
    record: bool = True

    def __post_init__(self) -> None:
        checks = {"dt": self.dt > 0 and math.isfinite(self.dt), "sleep_frames": self.sleep_frames >= 1,
                  "sleep_speed": self.sleep_speed >= 0, "wake_margin": self.wake_margin >= 0,
                  "recording_capacity": self.recording_capacity >= 1,
                  "checkpoint_every": self.checkpoint_every >= 1,
                  "checkpoints_kept": self.checkpoints_kept >= 0,
                  "hotspot_window": self.hotspot_window >= 1}
        for name, ok in checks.items():
            if not ok:
                raise ParamError(name, f"invalid simulation setting {getattr(self, name)!r}")


class Simulation:
    """Moving entities of a scene stepped frame by frame on a private spatial index.

    Parameters
    ----------
    scene : Scene
        Read once at construction (never modified).
    backend : str or SpatialIndex
        A registered backend name (default: the scene's setting) or an index instance to use.
    params : mapping, optional
        Backend parameters (for a name).
    seed : int
        Seed of the only random generator (emitter spread...): same seed, same run.
    config : SimulationConfig, optional
    registry : Registry, optional
        Where motion behaviours and backends are looked up (default registry).
    world : (lo, hi), optional
        World bounds; default: the bounds of the scene's indexed objects.
    """

    #: the statistics of the frame last stepped or recorded (set from construction on)
    last_stats: FrameStats

    def __init__(self, scene: Scene, backend: str | SpatialIndex | None = None,
                 params: Mapping[str, Any] | None = None, seed: int = 0,
                 config: SimulationConfig | None = None, registry=None, world=None) -> None:
        if registry is None:
            from spatial.registry import default_registry
            registry = default_registry()
        self.registry = registry
        self.config = config or SimulationConfig()
        self.seed = int(seed)
        self.changed = Signal()
        self.index = self._make_index(scene, backend, params)
        # the static level (brushes, wall segments, mesh triangles) and its exact geometry,
        # from the record every index builder uses
        record = index_input(scene)
        static = record.static_rows
        self.static_ids = record.ids[static]
        self.static_lo, self.static_hi = record.lo[static], record.hi[static]
        record.offer_geometry(self.index)
        if world is None:
            world = scene.bounds()
        wlo, whi = (np.asarray(w, dtype=np.float64).reshape(3) for w in world)
        from .level_probe import LevelProbe  # built lazily: only wandering bodies cast rays
        self.level = LevelProbe(scene, registry)
        self.world = World(wlo, whi, self.config.dt, self.level)
        self._first_id = scene.next_id
        self.behaviours, self.bodies = self._make_bodies(scene)
        self.hotspots = HotspotWindow(self.config.hotspot_window)
        self.recording = Recording(self.static_ids, self.static_lo, self.static_hi,
                                   capacity=self.config.recording_capacity,
                                   meta={"seed": self.seed, "dt": self.config.dt,
                                         "backend": self.index.name})
        self._start = self._snapshot_state(frame=0, rng=np.random.default_rng(self.seed),
                                           next_id=self._first_id)
        self._checkpoints: dict[int, dict] = {}
        self._restore(self._start)
        self._record(FrameStats(0), FrameDelta())

    # ------------------------------------------------------------------ construction
    def _make_index(self, scene: Scene, backend, params) -> SpatialIndex:
        if isinstance(backend, SpatialIndex):
            return backend
        name = backend or scene.settings.backend
        cls = self.registry.backend(name)
        if params is None and name == scene.settings.backend:
            params = scene.settings.params
        return cls(parse_params(cls.Params, dict(params or {})))

    def _make_bodies(self, scene: Scene):
        entities = [(oid, scene.entity(oid)) for oid in scene.point_entity_ids()]
        corners = path_corners(scene) if self.config.class_motion else {}
        bodies = Bodies(len(entities))
        rows = bodies.allocate(len(entities))
        groups: dict[str, list[int]] = {}
        entries: list[MotionEntry] = []
        for row, (oid, ent) in zip(rows, entities):
            keys = motion_keys(ent, self.config.class_motion, corners)
            lo, hi = ent.lo, ent.hi
            entry = MotionEntry(oid, ent.classname, keys, (lo + hi) / 2, (hi - lo) / 2, ent.origin)
            entries.append(entry)
            bodies.ids[row] = oid
            bodies.center[row] = entry.center
            bodies.half[row] = entry.half
            bodies.alive[row] = True
            bodies.awake[row] = True
            bodies.despawn_at_bounds[row] = entry.choice(AT_BOUNDS_KEY, AT_BOUNDS_CHOICES, "bounce") == "despawn"
            sleep = keys.get(SLEEP_KEY, "1").strip()
            if sleep not in ("0", "1"):
                raise MotionKeyError(f"entity {oid} ({ent.classname}): key '{SLEEP_KEY}': "
                                     f"expected 0 or 1, got {sleep!r}")
            bodies.can_sleep[row] = sleep == "1"
            name = keys.get(MOTION_KEY, "").strip()
            if name and name != NO_MOTION:
                if name not in self.registry.motions:
                    known = ", ".join(sorted(self.registry.motions)) or "none"
                    raise MotionKeyError(f"entity {oid} ({ent.classname}): key '{MOTION_KEY}': "
                                         f"unknown behaviour {name!r} (known: {known})")
                groups.setdefault(name, []).append(len(entries) - 1)
        behaviours = []
        for k, name in enumerate(sorted(groups)):
            members = groups[name]
            factory = self.registry.motions[name].factory
            behaviour = factory(rows[members], [entries[m] for m in members], self.world)
            bodies.behaviour[rows[members]] = k
            if not getattr(behaviour, "can_sleep", True):
                bodies.can_sleep[rows[members]] = False
            behaviour.start(bodies)
            behaviours.append(behaviour)
        return behaviours, bodies

    # ------------------------------------------------------------------ state
    def _snapshot_state(self, frame: int, rng: np.random.Generator, next_id: int) -> dict:
        return {"frame": frame, "bodies": self.bodies.snapshot(),
                "rng": rng.bit_generator.state, "next_id": next_id}

    def _restore(self, state: dict) -> None:
        self.frame = state["frame"]
        self.bodies = Bodies.from_snapshot(state["bodies"])
        self.rng = np.random.default_rng()
        self.rng.bit_generator.state = state["rng"]
        self.next_id = state["next_id"]
        self._rebuild_index()

    def _rebuild_index(self) -> None:
        b = self.bodies
        rows = b.alive_rows()
        lo, hi = b.bounds(rows)
        n_static = len(self.static_ids)
        self.index.build(np.concatenate([self.static_ids, b.ids[rows]]),
                         np.concatenate([self.static_lo, lo]), np.concatenate([self.static_hi, hi]),
                         dynamic=np.concatenate([np.zeros(n_static, bool), np.ones(len(rows), bool)]),
                         awake=np.concatenate([np.ones(n_static, bool), b.awake[rows]]))
        start = time.perf_counter()
        self.last_pairs: PairResult = self.index.pairs("active")
        self._initial_pairs_ms = (time.perf_counter() - start) * 1e3
        self.last_nodes: NodeTable | None = self.index.nodes() if self.config.inspect_nodes else None

    def reset(self) -> FrameStats:
        """Back to frame 0: the scene's edited state (recording and hotspots cleared)."""
        self._restore(self._start)
        self._checkpoints.clear()
        self.hotspots.clear()
        self.recording = Recording(self.static_ids, self.static_lo, self.static_hi,
                                   capacity=self.config.recording_capacity, meta=self.recording.meta)
        stats = FrameStats(0)
        self._record(stats, FrameDelta())
        self.changed.emit(self)
        return self.last_stats

    def seek(self, frame: int) -> FrameStats:
        """Go to ``frame`` (>= 0): forwards by stepping, backwards from the nearest checkpoint.

        Seeking is exact: motion, spawns and sleep are those of an uninterrupted run.
        """
        frame = int(frame)
        if frame < 0:
            raise ParamError("frame", f"must be >= 0, got {frame}")
        if frame < self.frame:
            usable = [f for f in self._checkpoints if f <= frame]
            state = self._checkpoints[max(usable)] if usable else self._start
            self._restore(state)
            self.hotspots.clear()
        while self.frame < frame:
            self._step_once()
        if self.last_stats.frame != self.frame:
            self.last_stats = self._current_stats()
        self.changed.emit(self)
        return self.last_stats

    def _current_stats(self) -> FrameStats:
        b = self.bodies
        rows = b.alive_rows()
        return FrameStats(self.frame, awake=int(b.awake[rows].sum()), dynamic=len(rows),
                          nodes=len(self.last_nodes) if self.last_nodes is not None else -1,
                          candidates=self.last_pairs.tests, overlapping=len(self.last_pairs.pairs))

    # ------------------------------------------------------------------ stepping
    def step(self, frames: int = 1) -> FrameStats:
        """Advance ``frames`` frames; returns the stats of the last one."""
        if int(frames) != frames or frames < 1:
            raise ParamError("frames", f"must be a whole number >= 1, got {frames!r}")
        for _ in range(int(frames)):
            self._step_once()
        self.changed.emit(self)
        return self.last_stats

    def _step_once(self) -> None:
        """One frame, in the order of the module docstring."""
        b, cfg = self.bodies, self.config
        frame = self.frame + 1
        alive = b.alive_rows()
        awake = alive[b.awake[alive]]
        spawns = self._steer(frame, awake)
        moved, gone = self._move(alive, awake)
        fell = self._sleep_test(awake[~np.isin(awake, gone)])

        delta = FrameDelta(despawned=np.sort(b.ids[gone]))
        b.release(gone)
        spawned = self._spawn(spawns)
        if len(spawned):
            delta.spawned = b.ids[spawned]
            delta.spawned_lo, delta.spawned_hi = b.bounds(spawned)
            delta.spawned_awake = np.ones(len(spawned), dtype=bool)
        if len(moved):
            delta.moved = b.ids[moved]
            delta.moved_lo, delta.moved_hi = b.bounds(moved)
        edit_ms = apply_delta(self.index, delta)

        start = time.perf_counter()
        woken = self._wake(frame)
        wake_ms = (time.perf_counter() - start) * 1e3
        b.awake[woken] = True
        b.still[woken] = 0
        # a body that fell asleep and was woken in the same frame did not change
        changed = np.setxor1d(fell, woken).astype(np.int64)
        delta.awake_ids, delta.awake_flags = b.ids[changed], b.awake[changed]
        settle_ms, result, pairs_ms = settle_frame(self.index, delta.awake_ids, delta.awake_flags)
        self.frame = frame
        self.last_pairs = result

        node_count = -1
        if cfg.inspect_nodes:
            self.last_nodes = nodes = self.index.nodes()
            self.hotspots.push(frame, nodes, result.node_tests, result.pairs)
            node_count = len(nodes)
        rows_now = b.alive_rows()
        stats = FrameStats(frame, moved=len(moved), spawned=len(spawned), despawned=len(gone),
                           awake=int(b.awake[rows_now].sum()), dynamic=len(rows_now),
                           nodes=node_count,
                           candidates=result.tests, overlapping=len(result.pairs),
                           update_ms=edit_ms + settle_ms, pairs_ms=pairs_ms,
                           frame_ms=edit_ms + wake_ms + settle_ms + pairs_ms)
        self._record(stats, delta)
        if frame % cfg.checkpoint_every == 0:
            self._checkpoints[frame] = self._snapshot_state(frame, self.rng, self.next_id)
            while len(self._checkpoints) > cfg.checkpoints_kept:
                del self._checkpoints[min(self._checkpoints)]

    def _steer(self, frame: int, awake: np.ndarray) -> list[Spawn]:
        """Let every behaviour set the velocity of its awake rows; returns queued spawns."""
        b, spawns = self.bodies, []

        def spawn(center, half, velocity, lifetime, despawn_at_bounds):
            spawns.append(Spawn(np.asarray(center, float).reshape(-1, 3), np.asarray(half, float).reshape(-1, 3),
                                np.asarray(velocity, float).reshape(-1, 3),
                                np.asarray(lifetime, float).reshape(-1),
                                np.asarray(despawn_at_bounds, bool).reshape(-1)))

        for k, behaviour in enumerate(self.behaviours):
            rows = awake[b.behaviour[awake] == k]
            if len(rows):
                behaviour.steer(StepContext(b, rows, self.config.dt, frame, self.rng, spawn))
        return spawns

    def _move(self, alive: np.ndarray, awake: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Integrate awake rows, apply world bounds and lifetimes; returns ``(moved, gone)``."""
        b, dt = self.bodies, self.config.dt
        before = b.center[awake].copy()
        b.center[awake] += b.velocity[awake] * dt
        b.age[alive] += dt
        gone = self._apply_world_bounds(awake)
        # a lifetime of a whole number of frames ends on time despite rounding of dt
        expired = alive[b.age[alive] >= b.lifetime[alive] - 1e-9 * dt]
        gone = np.union1d(gone, expired).astype(np.int64)
        moved = awake[np.any(b.center[awake] != before, axis=1) & ~np.isin(awake, gone)]
        return moved, gone

    def _sleep_test(self, awake: np.ndarray) -> np.ndarray:
        """Count slow frames of the awake rows that may sleep; returns the rows falling asleep."""
        b, cfg = self.bodies, self.config
        testing = awake[b.can_sleep[awake]]
        slow = np.linalg.norm(b.velocity[testing], axis=1) < cfg.sleep_speed
        b.still[testing] = np.where(slow, b.still[testing] + 1, 0)
        fell = testing[b.still[testing] >= cfg.sleep_frames]
        b.awake[fell] = False
        return fell

    def _apply_world_bounds(self, rows: np.ndarray) -> np.ndarray:
        """Bounce or despawn ``rows`` that left the world; returns the rows to despawn."""
        b, wlo, whi = self.bodies, self.world.lo, self.world.hi
        lo, hi = b.bounds(rows)
        below, above = lo < wlo, hi > whi
        outside = (below | above).any(axis=1)
        if not outside.any():
            return np.empty(0, dtype=np.int64)
        leaving = b.despawn_at_bounds[rows] & outside
        bounce = rows[outside & ~leaving]
        if len(bounce):
            c, h, v = b.center[bounce], b.half[bounce], b.velocity[bounce]
            lo_b, hi_b = c - h, c + h
            low, high = lo_b < wlo, hi_b > whi
            # mirror the overshoot back inside and turn the velocity inwards
            c = np.where(low, c + 2 * (wlo - lo_b), c)
            c = np.where(high, c - 2 * (hi_b - whi), c)
            v = np.where(low, np.abs(v), np.where(high, -np.abs(v), v))
            # a box wider than the world, or flying faster than it is wide, is put at the edge
            fits = (2 * h) <= (whi - wlo)
            c = np.where(fits, np.clip(c, wlo + h, np.maximum(whi - h, wlo + h)), (wlo + whi) / 2)
            b.center[bounce], b.velocity[bounce] = c, v
        return rows[leaving]

    def _spawn(self, spawns: list[Spawn]) -> np.ndarray:
        if not spawns:
            return np.empty(0, dtype=np.int64)
        center = np.concatenate([s.center for s in spawns])
        count = len(center)
        b = self.bodies
        rows = b.allocate(count)
        b.ids[rows] = np.arange(self.next_id, self.next_id + count)
        self.next_id += count
        b.center[rows] = center
        b.half[rows] = np.concatenate([s.half for s in spawns])
        b.velocity[rows] = np.concatenate([s.velocity for s in spawns])
        b.lifetime[rows] = np.concatenate([s.lifetime for s in spawns])
        b.despawn_at_bounds[rows] = np.concatenate([s.despawn_at_bounds for s in spawns])
        b.behaviour[rows] = PROJECTILE
        b.alive[rows] = True
        b.awake[rows] = True
        b.can_sleep[rows] = False
        return rows

    def _wake(self, frame: int | None = None) -> np.ndarray:
        """Rows of sleeping bodies whose alarm has passed at ``frame`` (default: the current
        one) or that lie within ``wake_margin`` of an awake body (one batch query)."""
        frame = self.frame if frame is None else frame
        b = self.bodies
        alive = b.alive_rows()
        sleeping = alive[~b.awake[alive]]
        alarmed = sleeping[b.alarm[sleeping] <= frame * self.config.dt + 1e-9 * self.config.dt]
        near = self._wake_near(alive, sleeping)
        return np.union1d(alarmed, near).astype(np.int64)

    def _wake_near(self, alive: np.ndarray, sleeping: np.ndarray) -> np.ndarray:
        """Rows of ``sleeping`` within ``wake_margin`` of an awake body.

        The query runs from whichever side is smaller: growing box A by the margin meets box B
        exactly when growing B meets A, so both directions find the same sleepers.
        """
        b, margin = self.bodies, self.config.wake_margin
        waking = alive[b.awake[alive]]
        if not len(sleeping) or not len(waking):
            return np.empty(0, dtype=np.int64)
        row_of = self._row_map(alive)
        query_rows = waking if len(waking) <= len(sleeping) else sleeping
        lo, hi = b.bounds(query_rows)
        hits = self.index.query_boxes(lo - margin, hi + margin)
        hit_ids = hits.ids
        inside = (hit_ids >= 0) & (hit_ids < len(row_of))
        hit_rows = np.full(len(hit_ids), -1, dtype=np.int64)
        hit_rows[inside] = row_of[hit_ids[inside]]
        is_body = hit_rows >= 0
        if query_rows is waking:
            found = hit_rows[is_body]
            return np.unique(found[~b.awake[found]])
        awake_hit = np.zeros(len(hit_ids), dtype=bool)
        awake_hit[is_body] = b.awake[hit_rows[is_body]]
        per_query = np.add.reduceat(awake_hit.astype(np.int64), hits.offsets[:-1]) \
            if len(hit_ids) else np.zeros(len(query_rows), dtype=np.int64)
        per_query[np.diff(hits.offsets) == 0] = 0  # reduceat repeats a value for empty ranges
        return query_rows[per_query > 0]

    def _row_map(self, rows: np.ndarray) -> np.ndarray:
        ids = self.bodies.ids[rows]
        row_of = np.full(int(ids.max()) + 1 if len(ids) else 0, -1, dtype=np.int64)
        row_of[ids] = rows
        return row_of

    def _record(self, stats: FrameStats, delta: FrameDelta) -> None:
        if self.frame == 0 and stats.frame == 0:
            stats = self._current_stats()
        self.last_stats = stats
        if not self.config.record or self.frame < self.recording.first_frame:
            return  # re-simulating frames older than the ring's window: nothing to keep
        b = self.bodies
        rows = b.alive_rows()
        lo, hi = b.bounds(rows)
        order = np.argsort(b.ids[rows], kind="stable")
        self.recording.append(FrameRecord(self.frame, b.ids[rows][order], lo[order], hi[order],
                                          b.awake[rows][order].copy(), np.sort(delta.spawned),
                                          np.sort(delta.despawned), stats))

    # ------------------------------------------------------------------ reading
    def bodies_bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(ids, lo, hi, awake)`` of every dynamic body now, ids ascending."""
        b = self.bodies
        rows = b.alive_rows()
        order = np.argsort(b.ids[rows], kind="stable")
        rows = rows[order]
        lo, hi = b.bounds(rows)
        return b.ids[rows], lo, hi, b.awake[rows].copy()

    def lifespan_histogram(self) -> dict:
        """Lifespans of the current node table (see :func:`lifespan_histogram`)."""
        return lifespan_histogram(self.index)


def lifespan_histogram(index: SpatialIndex) -> dict:
    """Counts of node lifespans in ``index.nodes()``.

    ``max``: ``{lifespan_max: nodes}`` over nodes that have a lifespan (non-root rows of trees
    that keep emptied nodes); ``counting_down``: ``{lifespan_left: nodes}`` over nodes whose
    countdown runs now. Both are empty for backends without lifespans.
    """
    nodes = index.nodes()
    with_max = nodes.lifespan_max[nodes.lifespan_max > 0]
    counting = nodes.lifespan_left[nodes.lifespan_left > 0]
    return {"max": {int(v): int(c) for v, c in zip(*np.unique(with_max, return_counts=True))},
            "counting_down": {int(v): int(c) for v, c in zip(*np.unique(counting, return_counts=True))}}


class Timeline:
    """Play/pause/stop state over a :class:`Simulation`, for a GUI timer to drive.

    ``tick(elapsed)`` converts wall-clock seconds into whole frames at ``speed`` times real
    time (``1/dt`` frames per second) and steps them, at most ``max_frames_per_tick`` at once so
    a slow backend lowers the frame rate instead of freezing the interface. ``stop()`` returns
    the simulation to frame 0, the edited state. ``state_changed`` fires ``callback(state)``.
    """

    STOPPED, PLAYING, PAUSED = "stopped", "playing", "paused"

    def __init__(self, simulation: Simulation, speed: float = 1.0, max_frames_per_tick: int = 4) -> None:
        self.simulation = simulation
        self.speed = float(speed)
        self.max_frames_per_tick = int(max_frames_per_tick)
        self.state = self.STOPPED
        self._owed = 0.0
        self.state_changed = Signal()

    def _set(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.state_changed.emit(state)

    def play(self) -> None:
        self._set(self.PLAYING)

    def pause(self) -> None:
        if self.state == self.PLAYING:
            self._set(self.PAUSED)

    def toggle(self) -> None:
        self.pause() if self.state == self.PLAYING else self.play()

    def stop(self) -> None:
        self._owed = 0.0
        self.simulation.reset()
        self._set(self.STOPPED)

    def step_once(self) -> FrameStats:
        """One frame while paused or stopped (single-stepping pauses playback)."""
        if self.state == self.PLAYING:
            self._set(self.PAUSED)
        elif self.state == self.STOPPED:
            self._set(self.PAUSED)
        return self.simulation.step()

    def tick(self, elapsed: float) -> int:
        """Advance by ``elapsed`` wall-clock seconds when playing; returns frames stepped."""
        if self.state != self.PLAYING or elapsed <= 0:
            return 0
        self._owed += elapsed * self.speed / self.simulation.config.dt
        frames = min(int(self._owed), self.max_frames_per_tick)
        self._owed = min(self._owed - frames, 1.0)  # never bank more than a frame of lag
        if frames:
            self.simulation.step(frames)
        return frames
