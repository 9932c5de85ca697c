"""Moving bodies and the motion-behaviour interface of the simulation (Qt-free).

Every dynamic object of a simulated scene is a *body*: a row of :class:`Bodies`, a struct of
numpy arrays (centre, half extents, velocity, awake flag, timers...). Point entities are bodies
from frame 0; projectiles spawned by emitters are bodies too and reuse the rows of despawned
ones. Brushes are static: they never move and never take part in the sleep test.

Motion keys
-----------
An entity moves when its key/values name a behaviour; the parameters live in the same
key/values, so they save in the native format and in ``.map`` files unchanged. Vectors are
written ``"x y z"`` like ``origin``; speeds are in units per second, angles in degrees.

============================  ===========================================================
``_ps_motion``                behaviour name: ``velocity``, ``patrol``, ``orbit``,
                              ``emitter``, ``wander`` (built-in, :mod:`plugins.motions`), a
                              plugin's, or ``none`` (still, whatever the class default)
``_ps_at_bounds``             ``bounce`` (default) or ``despawn`` at the world bounds
``_ps_sleep``                 ``1`` (default) may fall asleep, ``0`` never sleeps
``_ps_velocity``              velocity: constant velocity (units/s)
``_ps_points``                patrol: way points ``"x y z; x y z; ..."`` (origin first)
``_ps_speed``                 patrol, wander: speed; emitter: projectile speed (units/s)
``_ps_pause``                 patrol: seconds at each way point; wander: longest stop
``_ps_center``                orbit: centre of the circle (vertical axis through it)
``_ps_angular_speed``         orbit: degrees per second (counter-clockwise seen from +z)
``_ps_direction``             emitter: firing direction
``_ps_rate``                  emitter: projectiles per second
``_ps_lifetime``              emitter: seconds a projectile lives
``_ps_bullet_size``           emitter: half extent of a projectile's box (units)
``_ps_spread``                emitter, wander: half-angle of random deviation (degrees)
``_ps_bullet_bounds``         emitter: ``despawn`` (default) or ``bounce`` for projectiles
``_ps_walk_time``             wander: longest walk between stops (seconds)
``_ps_fire_period``           wander: seconds between shots (0: never)
``_ps_projectile_*``          wander: ``speed``, ``size`` (half extent), ``lifetime`` of shots
============================  ===========================================================

An entity without ``_ps_motion`` is still a dynamic object (like the index sync treats every
point entity): it stands still and falls asleep after the sleep delay, unless its class has a
default motion and the simulation animates level entities (:mod:`.class_motion`).
``_ps_motion`` ``none`` keeps an entity still whatever its class default.

Behaviour plugins
-----------------
A behaviour is a class registered with ``registry.add_motion(name, cls, description)``. The
simulation calls ``cls(rows, entries, world)`` once with every body of that behaviour
(``rows`` into :class:`Bodies`, one :class:`MotionEntry` per row), then ``start(bodies)``
to initialise the rows' velocity and state columns, and then, each frame,
``behaviour.steer(ctx)`` with a :class:`StepContext`: the behaviour writes the velocity of
the awake rows it owns for this frame (``ctx.bodies.velocity[ctx.rows] = ...``) and may spawn
projectiles with ``ctx.spawn``. The simulation integrates every awake body with its velocity,
so the sleep test (speed below a threshold) works the same for every behaviour. Per-body state
that must survive a frame lives in the generic columns ``phase``, ``leg`` and ``timer`` of
:class:`Bodies` (they are part of every checkpoint, which makes seeking exact); constant
parameters parsed from the keys may live in the behaviour object. Randomness must come from
``ctx.rng`` only, which keeps a simulation reproducible for a given seed.

A behaviour that lets its bodies sleep through a planned pause sets their ``alarm`` (the
simulation time in seconds at which a sleeping body wakes by itself, like a game's think
timer); the simulation wakes sleepers whose alarm has passed. ``World.level`` answers ray casts
against the level's solid geometry (:class:`~.level_probe.LevelProbe`) for behaviours that
must stay inside their room. ``params`` (a tuple of :class:`MotionParam`) describes the keys
with types and bounds, for the GUI's motion editor.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from spatial.errors import PartitionStudioError

#: key naming an entity's behaviour
MOTION_KEY = "_ps_motion"
#: ``_ps_motion`` value that keeps an entity still whatever its class default
NO_MOTION = "none"
#: prefix of every motion key (class defaults apply to keys with it)
MOTION_PREFIX = "_ps_"
AT_BOUNDS_KEY = "_ps_at_bounds"
SLEEP_KEY = "_ps_sleep"
AT_BOUNDS_CHOICES = ("bounce", "despawn")


class MotionKeyError(PartitionStudioError, ValueError):
    """A motion key of an entity is missing or malformed; the message names entity and key."""


@dataclass(frozen=True)
class MotionEntry:
    """One moving entity as a behaviour sees it at construction.

    Attributes
    ----------
    entity_id : int
        The scene id (also the body's object id in the index).
    classname : str
    keys : Mapping[str, str]
        The entity's key/values (last value of a repeated key).
    center, half : ndarray (3,)
        Box centre and half extents at frame 0.
    origin : ndarray (3,)
        The ``origin`` key: way points and orbit centres are given for the origin, so a
        behaviour adds ``center - origin`` to place the box.
    """

    entity_id: int
    classname: str
    keys: Mapping[str, str]
    center: np.ndarray
    half: np.ndarray
    origin: np.ndarray

    def _fail(self, key: str, message: str) -> MotionKeyError:
        return MotionKeyError(f"entity {self.entity_id} ({self.classname}): key '{key}': {message}")

    def number(self, key: str, default: float | None = None, lo: float = -math.inf,
               hi: float = math.inf) -> float:
        """A finite number key in ``[lo, hi]``; ``default`` when absent (required if None)."""
        text = self.keys.get(key)
        if text is None:
            if default is None:
                raise self._fail(key, "is required")
            return float(default)
        try:
            value = float(text)
        except ValueError:
            raise self._fail(key, f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or not lo <= value <= hi:
            raise self._fail(key, f"expected a number in [{lo}, {hi}], got {text!r}")
        return value

    def vector(self, key: str, default=None) -> np.ndarray:
        """A ``"x y z"`` key as 3 floats; ``default`` when absent (required if None)."""
        text = self.keys.get(key)
        if text is None:
            if default is None:
                raise self._fail(key, "is required")
            return np.asarray(default, dtype=np.float64)
        return self._parse_vector(key, text)

    def vectors(self, key: str) -> np.ndarray:
        """A ``"x y z; x y z; ..."`` key as an ``(K, 3)`` array (at least one point)."""
        text = self.keys.get(key)
        if text is None:
            raise self._fail(key, "is required")
        parts = [p for p in text.split(";") if p.strip()]
        if not parts:
            raise self._fail(key, "needs at least one point 'x y z'")
        return np.array([self._parse_vector(key, p) for p in parts])

    def choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        text = self.keys.get(key, default).strip()
        if text not in choices:
            raise self._fail(key, f"expected one of {', '.join(choices)}, got {text!r}")
        return text

    def _parse_vector(self, key: str, text: str) -> np.ndarray:
        try:
            values = [float(v) for v in text.split()]
        except ValueError:
            values = []
        if len(values) != 3 or not all(math.isfinite(v) for v in values):
            raise self._fail(key, f"expected 3 finite numbers 'x y z', got {text.strip()!r}")
        return np.array(values)


@dataclass(frozen=True)
class MotionParam:
    """One key of a behaviour, typed for editors and documentation.

    Attributes
    ----------
    key : str
        The entity key (``_ps_speed``...).
    kind : {"number", "vector", "points", "choice"}
        A finite number, an ``"x y z"`` vector, a ``"x y z; x y z"`` list or one of ``choices``.
    default : str or None
        The value used when the key is absent (``None``: the key is required).
    help : str
        One line for tooltips.
    lo, hi : float
        Bounds of a number.
    unit : str
    choices : tuple of str
    """

    key: str
    kind: str
    default: str | None
    help: str
    lo: float = -math.inf
    hi: float = math.inf
    unit: str = ""
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class World:
    """Bounds of the simulated world (bodies bounce or despawn there), the frame time and the
    level's solid geometry (``None`` for a simulation without level geometry)."""

    lo: np.ndarray
    hi: np.ndarray
    dt: float
    level: object | None = None


class Bodies:
    """Every dynamic body as a struct of arrays; rows of despawned bodies are reused.

    Columns (all of length :attr:`capacity`; only rows with ``alive`` set mean anything):
    ``ids`` object id, ``center``/``half``/``velocity`` ``(n, 3)``, ``behaviour`` index into the
    simulation's behaviour list (``-1`` none, :data:`PROJECTILE` for spawned projectiles),
    ``awake``, ``can_sleep``, ``still`` (consecutive frames below the sleep speed), ``alive``,
    ``age``/``lifetime`` (seconds; ``inf`` lifetime never expires), ``despawn_at_bounds``,
    ``alarm`` (simulation time in seconds at which a sleeping body wakes by itself; ``inf`` never),
    and the behaviour-owned state ``phase`` (float), ``leg`` (int), ``timer`` and ``cooldown``
    (float).
    """

    FLOAT3 = ("center", "half", "velocity")
    COLUMNS = {
        "ids": (np.int64, -1), "behaviour": (np.int32, -1), "awake": (np.bool_, False),
        "can_sleep": (np.bool_, False), "still": (np.int32, 0), "alive": (np.bool_, False),
        "age": (np.float64, 0.0), "lifetime": (np.float64, np.inf),
        "despawn_at_bounds": (np.bool_, False), "phase": (np.float64, 0.0),
        "leg": (np.int32, 0), "timer": (np.float64, 0.0), "cooldown": (np.float64, 0.0),
        "alarm": (np.float64, np.inf),
    }
    # The columns above, declared for the type checker (``__init__`` and ``_grow`` make them
    # from FLOAT3 and COLUMNS; tests/model/test_bodies.py checks both lists agree).
    center: np.ndarray
    half: np.ndarray
    velocity: np.ndarray
    ids: np.ndarray
    behaviour: np.ndarray
    awake: np.ndarray
    can_sleep: np.ndarray
    still: np.ndarray
    alive: np.ndarray
    age: np.ndarray
    lifetime: np.ndarray
    despawn_at_bounds: np.ndarray
    phase: np.ndarray
    leg: np.ndarray
    timer: np.ndarray
    cooldown: np.ndarray
    alarm: np.ndarray

    def __init__(self, capacity: int = 0) -> None:
        self.capacity = 0
        for name in self.FLOAT3:
            setattr(self, name, np.zeros((0, 3)))
        for name, (dtype, _) in self.COLUMNS.items():
            setattr(self, name, np.zeros(0, dtype=dtype))
        self.free: list[int] = []
        self.used = 0  # rows below this have been handed out at least once
        self._grow(capacity)

    def _grow(self, needed: int) -> None:
        if needed <= self.capacity:
            return
        cap = max(needed, 2 * self.capacity, 16)
        for name in self.FLOAT3:
            old = getattr(self, name)
            new = np.zeros((cap, 3))
            new[: len(old)] = old
            setattr(self, name, new)
        for name, (dtype, fill) in self.COLUMNS.items():
            old = getattr(self, name)
            column: np.ndarray = np.full(cap, fill, dtype=dtype)
            column[: len(old)] = old
            setattr(self, name, column)
        self.capacity = cap

    def allocate(self, count: int) -> np.ndarray:
        """Rows for ``count`` new bodies (freed rows first, lowest first, for determinism)."""
        self.free.sort(reverse=True)
        reuse = min(count, len(self.free))
        picked = [self.free.pop() for _ in range(reuse)]
        fresh = count - reuse
        if fresh:
            self._grow(self.used + fresh)
            picked.extend(range(self.used, self.used + fresh))
            self.used += fresh
        rows = np.array(picked, dtype=np.int64)
        for name in self.FLOAT3:
            getattr(self, name)[rows] = 0.0
        for name, (_, fill) in self.COLUMNS.items():
            getattr(self, name)[rows] = fill
        return rows

    def release(self, rows: np.ndarray) -> None:
        """Despawn rows (their ids stay readable until the row is reused)."""
        self.alive[rows] = False
        self.awake[rows] = False
        self.free.extend(int(r) for r in rows)

    def alive_rows(self) -> np.ndarray:
        return np.flatnonzero(self.alive[: self.used])

    def bounds(self, rows) -> tuple[np.ndarray, np.ndarray]:
        """``(lo, hi)`` boxes of ``rows``."""
        return self.center[rows] - self.half[rows], self.center[rows] + self.half[rows]

    def snapshot(self) -> dict:
        """Every column (copied) plus the free list: enough to restore the bodies exactly."""
        state = {name: getattr(self, name)[: self.used].copy()
                 for name in self.FLOAT3 + tuple(self.COLUMNS)}
        state["free"] = list(self.free)
        return state

    @classmethod
    def from_snapshot(cls, state: dict) -> Bodies:
        used = len(state["ids"])
        bodies = cls(used)
        for name in cls.FLOAT3 + tuple(cls.COLUMNS):
            getattr(bodies, name)[:used] = state[name]
        bodies.used = used
        bodies.free = list(state["free"])
        return bodies


#: ``Bodies.behaviour`` value of spawned projectiles: they keep their velocity
PROJECTILE = -2


@dataclass
class Spawn:
    """A batch of projectiles requested by a behaviour during one frame."""

    center: np.ndarray
    half: np.ndarray
    velocity: np.ndarray
    lifetime: np.ndarray
    despawn_at_bounds: np.ndarray


@dataclass
class StepContext:
    """What a behaviour gets each frame.

    Attributes
    ----------
    bodies : Bodies
    rows : ndarray
        The awake, alive rows of this behaviour, ascending.
    dt : float
        Seconds per frame.
    frame : int
        The frame being computed (1 for the first step).
    rng : numpy.random.Generator
        The simulation's only random source (seeded).
    spawn : callable
        ``spawn(center, half, velocity, lifetime, despawn_at_bounds)`` with ``(k, 3)``, ``(k, 3)``,
        ``(k, 3)``, ``(k,)`` and ``(k,)`` arrays: projectiles appear at the end of the frame.
    """

    bodies: Bodies
    rows: np.ndarray
    dt: float
    frame: int
    rng: np.random.Generator
    spawn: Callable[..., None]


class Behaviour:
    """Base class of motion behaviours (see the module docstring).

    Subclasses set ``name``, ``description``, ``params`` (typed keys, see :class:`MotionParam`)
    and ``can_sleep``, parse their keys in ``__init__`` (raising
    :class:`MotionKeyError` through the :class:`MotionEntry` helpers) and implement
    :meth:`steer`.
    """

    name: str = ""
    description: str = ""
    params: tuple[MotionParam, ...] = ()
    can_sleep: bool = True

    @classmethod
    def keys(cls) -> dict[str, str]:
        """Key -> help of every parameter (documentation, property hints)."""
        return {p.key: p.help for p in cls.params}

    def __init__(self, rows: np.ndarray, entries: list[MotionEntry], world: World) -> None:
        self.rows = np.asarray(rows, dtype=np.int64)
        self.world = world

    def start(self, bodies: Bodies) -> None:
        """Initialise this behaviour's rows (velocity, ``phase``/``leg``/``timer``) at frame 0."""

    def position(self, rows: np.ndarray) -> np.ndarray:
        """Index into this behaviour's own per-row constant arrays for body ``rows``."""
        return np.searchsorted(self.rows, rows)

    def steer(self, ctx: StepContext) -> None:
        raise NotImplementedError
