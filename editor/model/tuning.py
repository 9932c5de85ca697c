"""Tuning a scene's spatial index: workloads from a scene or recording, and the tuned settings.

Qt-free. The measurement itself lives in :mod:`spatial.cost` and the search in
:mod:`spatial.tuner`; this module only turns a document into a :class:`~spatial.cost.Workload`:

* the objects are the scene's indexed objects (brushes static, point entities dynamic), with
  the brush face planes offered as split candidates and the exact segments/triangles offered
  to backends that use them;
* the frames are a loaded :class:`~.recording.Recording` when there is one, else a seeded
  synthetic motion: every dynamic object drifts in a random direction at
  ``speed_fraction`` of the world diagonal per frame and bounces off the world bounds;
* rays start at point entity centres (a seeded sample) in seeded random directions, up to the
  world diagonal (closest hit, as a game's traces);
* frusta look out of the player starts / cameras (``info_player_*``, ``info_intermission``,
  ``*camera*``), along their ``angle``/``mangle`` and around the compass, 90 degree field of
  view; a scene without any uses a seeded sample of entity positions (or the world centre).

Example
-------
>>> from editor.model.tuning import tune_scene            # doctest: +SKIP
>>> result = tune_scene(scene, "octree", budget_s=10, seed=0, on_trial=print)
>>> stack.push(tuned_settings_command(result))           # apply, undoable

Nothing here edits the scene: :func:`tune_scene` only reads it, and a cancelled search leaves
it exactly as it was. Applying the result is an explicit, undoable :class:`SetSettings`.
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from spatial.cost import MotionFrame, Workload
from spatial.geometry import frustum_planes_from_camera

from .entities import Entity
from .scene import Scene
from .work_budget import check_trial_frame

if TYPE_CHECKING:
    from spatial.contract import SpatialIndex

#: classnames (prefixes) whose position and angle make a representative camera
CAMERA_PREFIXES = ("info_player", "info_intermission", "info_teleport_destination")

DEFAULT_FRAMES = 30
DEFAULT_RAYS = 256
DEFAULT_FRUSTA = 16
DEFAULT_SPEED_FRACTION = 0.001


def scene_content_hash(scene: Scene) -> str:
    """``sha256:<hex>`` of the scene's native text (same content, same hash)."""
    from .native import dumps_scene

    return "sha256:" + hashlib.sha256(dumps_scene(scene).encode("utf-8")).hexdigest()


def _world(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if len(lo) == 0:
        return np.zeros(3), np.ones(3)
    return lo.min(axis=0), hi.max(axis=0)


def synthetic_motion(ids: np.ndarray, lo: np.ndarray, hi: np.ndarray, dynamic: np.ndarray,
                     frames: int, seed: int,
                     speed_fraction: float = DEFAULT_SPEED_FRACTION) -> list[MotionFrame]:
    """Seeded drift of every dynamic object, bouncing off the world bounds."""
    rng = np.random.default_rng([int(seed), 1])
    world_lo, world_hi = _world(lo, hi)
    movers = np.flatnonzero(dynamic)
    if len(movers) == 0 or frames <= 0:
        return [MotionFrame() for _ in range(max(frames, 0))]
    speed = speed_fraction * float(np.linalg.norm(world_hi - world_lo))
    direction = rng.normal(size=(len(movers), 3))
    direction /= np.maximum(np.linalg.norm(direction, axis=1, keepdims=True), 1e-12)
    velocity = direction * speed
    cur_lo, cur_hi = lo[movers].copy(), hi[movers].copy()
    out = []
    for _ in range(frames):
        cur_lo += velocity
        cur_hi += velocity
        # reflect at the world bounds so the movers stay in the level
        below, above = cur_lo < world_lo, cur_hi > world_hi
        velocity[below | above] *= -1
        shift = np.where(below, world_lo - cur_lo, 0.0) + np.where(above, world_hi - cur_hi, 0.0)
        cur_lo += shift
        cur_hi += shift
        out.append(MotionFrame(moved=ids[movers].copy(), moved_lo=cur_lo.copy(),
                               moved_hi=cur_hi.copy()))
    return out


def _angles(entity: Entity) -> tuple[float, float]:
    """(pitch, yaw) in degrees from ``mangle``/``angles`` (pitch yaw roll) or ``angle``."""
    for key in ("mangle", "angles"):
        raw = entity.get(key)
        if raw:
            try:
                parts = [float(v) for v in raw.split()]
            except ValueError:
                continue
            if len(parts) >= 2 and all(math.isfinite(p) for p in parts[:2]):
                return parts[0], parts[1]
    raw = entity.get("angle")
    try:
        yaw = float(raw) if raw else 0.0
    except ValueError:
        yaw = 0.0
    if yaw == -1:  # Quake's "up"
        return -89.0, 0.0
    if yaw == -2:
        return 89.0, 0.0
    return 0.0, yaw if math.isfinite(yaw) else 0.0


def _frustum(position, pitch: float, yaw: float, far: float) -> np.ndarray:
    # straight up or down has no "up" vector to build the frustum with; stay just short of it
    p, y = math.radians(min(max(pitch, -89.0), 89.0)), math.radians(yaw)
    forward = np.array([math.cos(p) * math.cos(y), math.cos(p) * math.sin(y), -math.sin(p)])
    return frustum_planes_from_camera(position, forward, (0.0, 0.0, 1.0), 90.0, 16 / 9, 1.0, far)


def sample_frusta(scene: Scene, count: int, seed: int, far: float,
                  world_lo: np.ndarray, world_hi: np.ndarray) -> np.ndarray:
    """Up to ``count`` view frusta from cameras / player starts (see the module docstring)."""
    rng = np.random.default_rng([int(seed), 3])
    entities = [scene.entity(i) for i in scene.point_entity_ids()]
    cameras = [e for e in entities
               if e.classname.startswith(CAMERA_PREFIXES) or "camera" in e.classname]
    views: list[tuple[np.ndarray, float, float]] = []
    if cameras:
        # each camera's own view first, then the compass around it
        for turn in range(0, 360, 90):
            for cam in cameras:
                pitch, yaw = _angles(cam)
                views.append((cam.origin, pitch if turn == 0 else 0.0, yaw + turn))
    else:
        points = [e.origin for e in entities]
        if not points:
            points = [(world_lo + world_hi) / 2]
        order = rng.permutation(len(points))
        for k in range(count):
            views.append((points[order[k % len(points)]], 0.0, float(rng.uniform(0, 360))))
    return np.array([_frustum(pos, pitch, yaw, far) for pos, pitch, yaw in views[:count]]
                    ).reshape(-1, 6, 4)


def sample_rays(ids, lo, hi, dynamic, count: int, seed: int):
    """``count`` rays from dynamic object centres (or the world) in seeded random directions."""
    rng = np.random.default_rng([int(seed), 2])
    world_lo, world_hi = _world(lo, hi)
    movers = np.flatnonzero(dynamic)
    if len(movers):
        pick = movers[rng.integers(0, len(movers), size=count)]
        origins = (lo[pick] + hi[pick]) / 2
    else:
        origins = rng.uniform(world_lo, world_hi, size=(count, 3))
    directions = rng.normal(size=(count, 3))
    directions /= np.maximum(np.linalg.norm(directions, axis=1, keepdims=True), 1e-12)
    return origins, directions


def recording_frames(recording) -> tuple[tuple, list[MotionFrame]]:
    """``((ids, lo, hi, dynamic, awake), frames)`` of a recording: its first frame and deltas."""
    first = recording.at(0)
    ids = np.concatenate([recording.static_ids, first.ids])
    lo = np.concatenate([recording.static_lo, first.lo])
    hi = np.concatenate([recording.static_hi, first.hi])
    dynamic = np.concatenate([np.zeros(len(recording.static_ids), bool), np.ones(len(first.ids), bool)])
    awake = np.concatenate([np.ones(len(recording.static_ids), bool), first.awake])
    frames = []
    before = first
    for position in range(1, len(recording)):
        after = recording.at(position)
        d = recording.delta(before, after)
        frames.append(MotionFrame(
            removed=d.despawned, inserted=d.spawned, inserted_lo=d.spawned_lo,
            inserted_hi=d.spawned_hi, moved=d.moved, moved_lo=d.moved_lo, moved_hi=d.moved_hi,
            awake_ids=np.concatenate([d.spawned, d.awake_ids]),
            awake_flags=np.concatenate([d.spawned_awake, d.awake_flags])))
        before = after
    return (ids, lo, hi, dynamic, awake), frames


def scene_workload(scene: Scene, seed: int = 0, *, recording=None, frames: int = DEFAULT_FRAMES,
                   rays: int = DEFAULT_RAYS, frusta: int = DEFAULT_FRUSTA,
                   speed_fraction: float = DEFAULT_SPEED_FRACTION,
                   source: str = "") -> Workload:
    """The workload the tuner measures on ``scene`` (see the module docstring).

    ``recording`` (a :class:`~.recording.Recording`), when given, replaces the synthetic
    motion and supplies the objects of its first frame; at most ``frames`` of it are played.
    """
    from .index_input import index_input

    record = index_input(scene)
    if recording is not None and len(recording):
        (ids, lo, hi, dynamic, awake), motion = recording_frames(recording)
        motion = motion[:frames]
        origin = "recording"
    else:
        ids, lo, hi, dynamic = record.ids, record.lo, record.hi, record.dynamic
        awake = None
        motion = synthetic_motion(ids, lo, hi, dynamic, frames, seed, speed_fraction)
        origin = f"synthetic motion seed={seed}"
    world_lo, world_hi = _world(lo, hi)
    diagonal = max(float(np.linalg.norm(world_hi - world_lo)), 1.0)
    origins, directions = sample_rays(ids, lo, hi, dynamic, rays, seed)
    views = sample_frusta(scene, frusta, seed, diagonal, world_lo, world_hi) if frusta else \
        np.empty((0, 6, 4))
    return Workload(ids, lo, hi, dynamic, awake, motion, origins, directions, diagonal, views,
                    record.split_planes, prepare=record.offer_exact_geometry,
                    description=f"{source or 'scene'}: {len(ids)} objects, {len(motion)} frames "
                                f"({origin}), {len(origins)} rays, {len(views)} frusta",
                    check_frame=check_trial_frame)


def scene_fixed_params(scene: Scene, cls: type[SpatialIndex]) -> dict:
    """The scene's own values of ``cls``'s non-tunable parameters (policies such as the plane
    of a quadtree), when the scene uses that backend; the tuner keeps them fixed."""
    from spatial.params import param_specs

    if scene.settings.backend != cls.name:
        return {}
    policies = {s.name for s in param_specs(cls.Params) if not s.tunable}
    return {k: v for k, v in scene.settings.params.items() if k in policies}


def tune_scene(scene: Scene, backend: str | None = None, options=None, *, recording=None,
               cancel=None, on_trial: Callable | None = None, registry=None, source: str = "",
               **settings):
    """Tune one backend (default: the scene's) on ``scene``; returns a :class:`TuneResult`.

    ``options`` (a :class:`spatial.tuner.TuneOptions`) and ``settings`` (its fields by name:
    ``budget_s``, ``seed``, ``weights``, ``max_trials``, ``isolation``, ``fixed``...) are those
    of :func:`spatial.tuner.tune`; ``isolation`` stays ``"none"`` (in-process trials, bounded
    between stages) because a GUI must not fork; the command line uses ``"process"``. The
    scene's values of non-tunable policies (see :func:`scene_fixed_params`) and ``fixed`` are
    held fixed. The scene is only read.
    """
    from spatial.backend_lookup import backend_class
    from spatial.tuner import TuneOptions, tune

    options = (options or TuneOptions()).with_settings(**settings)
    cls = backend_class(backend or scene.settings.backend, registry)
    workload = scene_workload(scene, options.seed, recording=recording, source=source)
    fixed = {**scene_fixed_params(scene, cls), **dict(options.fixed or {})}
    return tune(cls, workload, options, cancel=cancel, on_trial=on_trial, fixed=fixed)


def tuned_settings_command(result):
    """An undoable :class:`~.commands.SetSettings` applying a tune result's best parameters."""
    from .commands import SetSettings

    return SetSettings(backend=result.backend, params=dict(result.best.params))
