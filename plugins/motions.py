"""Built-in motion behaviours: constant velocity, patrol, orbit, a projectile emitter and the
wandering (and shooting) of level monsters.

Each behaviour reads its parameters from the entity's key/values (see
:mod:`editor.model.motion` for the full key table, and ``params`` of each class for types and
bounds) and moves all its bodies at once with numpy. They set velocities only; the simulation
integrates, bounces or despawns at the world bounds and runs the sleep test.
"""
from __future__ import annotations

import math

import numpy as np

from editor.model.motion import AT_BOUNDS_CHOICES, Behaviour, Bodies, MotionParam, StepContext


class ConstantVelocity(Behaviour):
    """Moves in a straight line at ``_ps_velocity``; bounces off (or leaves) the world bounds."""

    name = "velocity"
    description = "constant velocity (_ps_velocity), bouncing or despawning at the world bounds"
    params = (MotionParam("_ps_velocity", "vector", None, "velocity 'x y z'", unit="units/s"),)

    def __init__(self, rows, entries, world):
        super().__init__(rows, entries, world)
        self.initial = np.array([e.vector("_ps_velocity") for e in entries]).reshape(-1, 3)

    def start(self, bodies: Bodies) -> None:
        bodies.velocity[self.rows] = self.initial

    def steer(self, ctx: StepContext) -> None:
        """Nothing to steer: the velocity persists (bounces flip it)."""


class Patrol(Behaviour):
    """Walks from its origin through ``_ps_points`` and back, pausing ``_ps_pause`` at each.

    A patroller standing at a way point is below the sleep speed, so it falls asleep there if
    the pause is longer than the sleep delay, and resumes its round when something wakes it.
    """

    name = "patrol"
    description = "walk a loop of way points (_ps_points) at _ps_speed, pausing _ps_pause seconds"
    params = (MotionParam("_ps_points", "points", None, "way points 'x y z; x y z; ...' after the origin"),
              MotionParam("_ps_speed", "number", "100", "walking speed", lo=0.0, unit="units/s"),
              MotionParam("_ps_pause", "number", "0", "seconds standing at each way point", lo=0.0,
                          unit="s"))

    def __init__(self, rows, entries, world):
        super().__init__(rows, entries, world)
        loops = []
        for e in entries:
            offset = e.center - e.origin
            loops.append(np.vstack([e.origin, e.vectors("_ps_points")]) + offset)
        self.count = np.array([len(p) for p in loops], dtype=np.int64)
        width = int(self.count.max()) if len(loops) else 1
        self.points = np.zeros((len(loops), width, 3))
        for k, p in enumerate(loops):
            self.points[k, : len(p)] = p
        self.speed = np.array([e.number("_ps_speed", 100.0, lo=0.0) for e in entries])
        self.pause = np.array([e.number("_ps_pause", 0.0, lo=0.0) for e in entries])

    def start(self, bodies: Bodies) -> None:
        bodies.leg[self.rows] = 1 % np.maximum(self.count, 1)
        bodies.timer[self.rows] = 0.0

    def steer(self, ctx: StepContext) -> None:
        b, rows, dt = ctx.bodies, ctx.rows, ctx.dt
        k = self.position(rows)
        pausing = b.timer[rows] > 0
        left = b.timer[rows[pausing]] - dt
        # a pause of a whole number of frames ends on time despite rounding of dt
        b.timer[rows[pausing]] = np.where(left > 1e-9 * dt, left, 0.0)
        b.velocity[rows[pausing]] = 0.0
        walk, kw = rows[~pausing], k[~pausing]
        target = self.points[kw, b.leg[walk]]
        delta = target - b.center[walk]
        dist = np.linalg.norm(delta, axis=1)
        reach = self.speed[kw] * dt
        arrive = dist <= reach
        with np.errstate(invalid="ignore", divide="ignore"):
            heading = np.where(dist[:, None] > 0, delta / dist[:, None], 0.0)
        b.velocity[walk] = np.where(arrive[:, None], delta / dt, heading * self.speed[kw][:, None])
        there, kt = walk[arrive], kw[arrive]
        b.leg[there] = (b.leg[there] + 1) % self.count[kt]
        b.timer[there] = self.pause[kt]


class Orbit(Behaviour):
    """Circles ``_ps_center`` about the vertical axis at ``_ps_angular_speed`` degrees/second.

    The radius and the starting angle come from the origin's place relative to the centre.
    """

    name = "orbit"
    description = "circle _ps_center about the vertical axis at _ps_angular_speed degrees per second"
    params = (MotionParam("_ps_center", "vector", None, "centre 'x y z' of the circle"),
              MotionParam("_ps_angular_speed", "number", "90",
                          "degrees per second, counter-clockwise seen from +z", unit="°/s"))

    def __init__(self, rows, entries, world):
        super().__init__(rows, entries, world)
        self.center = np.array([e.vector("_ps_center") + (e.center - e.origin) for e in entries])
        self.center = self.center.reshape(-1, 3)
        self.omega = np.radians([e.number("_ps_angular_speed", 90.0) for e in entries])
        start = np.array([e.center for e in entries]).reshape(-1, 3)
        rel = start[:, :2] - self.center[:, :2]
        self.radius = np.hypot(rel[:, 0], rel[:, 1])
        self.angle0 = np.arctan2(rel[:, 1], rel[:, 0])

    def start(self, bodies: Bodies) -> None:
        bodies.phase[self.rows] = self.angle0

    def steer(self, ctx: StepContext) -> None:
        b, rows, dt = ctx.bodies, ctx.rows, ctx.dt
        k = self.position(rows)
        b.phase[rows] = np.mod(b.phase[rows] + self.omega[k] * dt, 2 * math.pi)
        goal = b.center[rows].copy()
        goal[:, 0] = self.center[k, 0] + self.radius[k] * np.cos(b.phase[rows])
        goal[:, 1] = self.center[k, 1] + self.radius[k] * np.sin(b.phase[rows])
        b.velocity[rows] = (goal - b.center[rows]) / dt


class Emitter(Behaviour):
    """Fires projectiles at ``_ps_rate`` per second along ``_ps_direction`` (a machine gun).

    The emitter itself stands still and never sleeps. Projectiles are boxes of half extent
    ``_ps_bullet_size`` flying at ``_ps_speed``; they despawn after ``_ps_lifetime`` seconds and,
    following ``_ps_bullet_bounds``, at the world bounds (or bounce there). ``_ps_spread`` tilts
    each shot by a random angle up to that many degrees (from the seeded generator).
    A stream like this keeps emptying and refilling the same octree cells, which is what the
    octree's growing lifespans are for.
    """

    name = "emitter"
    description = "fire projectiles at _ps_rate per second along _ps_direction (machine-gun stream)"
    params = (MotionParam("_ps_direction", "vector", "1 0 0", "firing direction 'x y z'"),
              MotionParam("_ps_speed", "number", "800", "projectile speed", lo=0.0, unit="units/s"),
              MotionParam("_ps_rate", "number", "10", "projectiles per second", lo=0.0, hi=1e4,
                          unit="1/s"),
              MotionParam("_ps_lifetime", "number", "2", "seconds a projectile lives", lo=0.0, unit="s"),
              MotionParam("_ps_bullet_size", "number", "2", "half extent of a projectile box",
                          lo=1e-6, unit="units"),
              MotionParam("_ps_spread", "number", "0", "random cone half-angle", lo=0.0, hi=90.0,
                          unit="°"),
              MotionParam("_ps_bullet_bounds", "choice", "despawn",
                          "projectiles despawn or bounce at the world bounds",
                          choices=AT_BOUNDS_CHOICES))
    can_sleep = False

    def __init__(self, rows, entries, world):
        super().__init__(rows, entries, world)
        direction = np.array([e.vector("_ps_direction", (1.0, 0.0, 0.0)) for e in entries]).reshape(-1, 3)
        norms = np.linalg.norm(direction, axis=1)
        for e, n in zip(entries, norms):
            if n == 0:
                raise e._fail("_ps_direction", "must not be the zero vector")
        self.direction = direction / np.where(norms > 0, norms, 1.0)[:, None]
        self.speed = np.array([e.number("_ps_speed", 800.0, lo=0.0) for e in entries])
        self.rate = np.array([e.number("_ps_rate", 10.0, lo=0.0, hi=1e4) for e in entries])
        self.lifetime = np.array([e.number("_ps_lifetime", 2.0, lo=0.0) for e in entries])
        self.size = np.array([e.number("_ps_bullet_size", 2.0, lo=1e-6) for e in entries])
        self.spread = np.radians([e.number("_ps_spread", 0.0, lo=0.0, hi=90.0) for e in entries])
        self.despawn = np.array([e.choice("_ps_bullet_bounds", AT_BOUNDS_CHOICES, "despawn") == "despawn"
                                 for e in entries], dtype=bool)

    def start(self, bodies: Bodies) -> None:
        bodies.velocity[self.rows] = 0.0
        bodies.timer[self.rows] = 0.0

    def steer(self, ctx: StepContext) -> None:
        b, rows, dt = ctx.bodies, ctx.rows, ctx.dt
        k = self.position(rows)
        b.velocity[rows] = 0.0
        b.timer[rows] += self.rate[k] * dt
        shots = np.floor(b.timer[rows]).astype(np.int64)
        b.timer[rows] -= shots
        firing = shots > 0
        if not firing.any():
            return
        src = np.repeat(k[firing], shots[firing])
        origin = np.repeat(b.center[rows[firing]], shots[firing], axis=0)
        # shots of one frame leave one firing interval apart along the barrel, not stacked
        rank = np.concatenate([np.arange(n) for n in shots[firing]])
        direction = self._aim(src, ctx.rng)
        interval = np.where(self.rate[src] > 0, 1.0 / np.maximum(self.rate[src], 1e-12), 0.0)
        centre = origin + direction * (self.speed[src] * interval * rank)[:, None]
        half = np.repeat(self.size[src][:, None], 3, axis=1)
        ctx.spawn(centre, half, direction * self.speed[src][:, None], self.lifetime[src], self.despawn[src])

    def _aim(self, src: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        direction = self.direction[src].copy()
        tilted = self.spread[src] > 0
        if not tilted.any():
            return direction
        d = direction[tilted]
        side = rng.normal(size=d.shape)
        side -= d * np.sum(side * d, axis=1)[:, None]
        side /= np.maximum(np.linalg.norm(side, axis=1), 1e-12)[:, None]
        angle = self.spread[src][tilted] * rng.random(len(d))
        direction[tilted] = np.cos(angle)[:, None] * d + np.sin(angle)[:, None] * side
        return direction


class Wander(Behaviour):
    """Walks a few seconds at a time in directions the level leaves open; stops; may shoot.

    A new walk draws :data:`CANDIDATES` random headings and casts rays from the body's box
    (feet and head height, centre and both sides) through the level probe
    (:class:`~editor.model.level_probe.LevelProbe`): the first heading with at least
    :data:`MIN_WALK` units of free floor wins, and the walk ends short of the wall it would
    meet. Where the level has floors (brushes, meshes), a downward ray at the walk's end makes
    sure there is ground within a step, so monsters keep off ledges. Without a level probe
    (a scene without geometry) the world bounds are the only walls.

    Between walks the body stops for up to ``_ps_pause`` seconds; a stop longer than the sleep
    delay lets it fall asleep, and its alarm wakes it when the stop ends. With
    ``_ps_fire_period`` above 0 it fires a projectile along its heading about that often
    (jittered by a quarter either way, from the seeded generator) while awake; the projectile
    flies straight and despawns at the first wall (one ray at launch) or after
    ``_ps_projectile_lifetime`` seconds, and it is not fired when a wall is right in front.
    """

    name = "wander"
    description = "walk in random open directions inside the room (rays against the level), stop, shoot"
    params = (MotionParam("_ps_speed", "number", "80", "walking speed", lo=0.0, unit="units/s"),
              MotionParam("_ps_walk_time", "number", "3", "longest walk between stops", lo=0.01,
                          unit="s"),
              MotionParam("_ps_pause", "number", "2", "longest stop between walks", lo=0.0, unit="s"),
              MotionParam("_ps_fire_period", "number", "0",
                          "seconds between projectiles (0: never fires)", lo=0.0, unit="s"),
              MotionParam("_ps_projectile_speed", "number", "600", "projectile speed", lo=1e-6,
                          unit="units/s"),
              MotionParam("_ps_projectile_size", "number", "4", "half extent of a projectile box",
                          lo=1e-6, unit="units"),
              MotionParam("_ps_projectile_lifetime", "number", "5",
                          "longest flight of a projectile", lo=1e-6, unit="s"),
              MotionParam("_ps_spread", "number", "3", "random cone half-angle of a shot",
                          lo=0.0, hi=90.0, unit="°"))

    #: headings tried per new walk
    CANDIDATES = 4
    #: shortest walk worth starting (units)
    MIN_WALK = 16.0
    #: distance kept from walls (units)
    CLEARANCE = 4.0
    #: a walker's feet clear steps this high, and it keeps off drops deeper than this
    STEP = 18.0
    #: stop after a failed search for an open heading (seconds)
    RETRY = 0.5

    def __init__(self, rows, entries, world):
        super().__init__(rows, entries, world)
        self.speed = np.array([e.number("_ps_speed", 80.0, lo=0.0) for e in entries])
        self.walk_time = np.array([e.number("_ps_walk_time", 3.0, lo=0.01) for e in entries])
        self.pause = np.array([e.number("_ps_pause", 2.0, lo=0.0) for e in entries])
        self.fire_period = np.array([e.number("_ps_fire_period", 0.0, lo=0.0) for e in entries])
        self.shot_speed = np.array([e.number("_ps_projectile_speed", 600.0, lo=1e-6) for e in entries])
        self.shot_size = np.array([e.number("_ps_projectile_size", 4.0, lo=1e-6) for e in entries])
        self.shot_life = np.array([e.number("_ps_projectile_lifetime", 5.0, lo=1e-6) for e in entries])
        self.spread = np.radians([e.number("_ps_spread", 3.0, lo=0.0, hi=90.0) for e in entries])
        self.level = world.level

    def start(self, bodies: Bodies) -> None:
        # Start times spread by the golden ratio, not drawn: a level's monsters must not all
        # search for a heading in the same frame, and start() gets no random generator.
        spread = np.mod(np.arange(len(self.rows)) * 0.6180339887, 1.0)
        bodies.velocity[self.rows] = 0.0
        bodies.leg[self.rows] = 0
        bodies.timer[self.rows] = spread * np.maximum(self.pause, self.world.dt)
        bodies.alarm[self.rows] = bodies.timer[self.rows]
        bodies.phase[self.rows] = 2 * math.pi * spread
        bodies.cooldown[self.rows] = np.mod(spread + 0.5, 1.0) * self.fire_period

    def steer(self, ctx: StepContext) -> None:
        b, rows, dt = ctx.bodies, ctx.rows, ctx.dt
        now = ctx.frame * dt
        ended = rows[b.timer[rows] <= now + 1e-9 * dt]
        stopping = ended[b.leg[ended] == 1]
        starting = ended[b.leg[ended] == 0]
        if len(stopping):
            self._stop(b, stopping, now, ctx.rng)
        if len(starting):
            self._start_walks(b, starting, now, ctx.rng)
        k = self.position(rows)
        walking = b.leg[rows] == 1
        heading = np.column_stack([np.cos(b.phase[rows]), np.sin(b.phase[rows]), np.zeros(len(rows))])
        b.velocity[rows] = np.where(walking[:, None], heading * self.speed[k][:, None], 0.0)
        self._fire(ctx, rows, now)

    def _stop(self, b: Bodies, rows: np.ndarray, now: float, rng: np.random.Generator) -> None:
        k = self.position(rows)
        length = self.pause[k] * (0.25 + 0.75 * rng.random(len(rows)))
        b.leg[rows] = 0
        b.timer[rows] = now + length
        b.alarm[rows] = now + length  # asleep by then: the end of the stop wakes it

    def _start_walks(self, b: Bodies, rows: np.ndarray, now: float, rng: np.random.Generator) -> None:
        k = self.position(rows)
        n, c = len(rows), self.CANDIDATES
        angles = rng.random((n, c)) * 2 * math.pi
        wanted = self.speed[k] * self.walk_time[k] * (0.3 + 0.7 * rng.random(n))
        moving = self.speed[k] > 0
        free = self._free_distance(b, rows, angles, wanted)
        good = (free >= self.MIN_WALK) & moving[:, None]
        length = np.minimum(free, wanted[:, None])
        if self.level is not None and self.level.has_floors:
            good &= self._ground_at(b, rows, angles, length)
        pick = np.argmax(good, axis=1)
        found = good[np.arange(n), pick]
        walk, kw = rows[found], k[found]
        b.leg[walk] = 1
        b.phase[walk] = angles[found, pick[found]]
        b.timer[walk] = now + length[found, pick[found]] / self.speed[kw]
        b.alarm[walk] = np.inf
        stay = rows[~found]
        b.timer[stay] = now + np.where(moving[~found], self.RETRY, np.maximum(self.pause[k[~found]],
                                                                              self.RETRY))
        b.alarm[stay] = b.timer[stay]

    def _free_distance(self, b: Bodies, rows, angles, wanted) -> np.ndarray:
        """Units each ``(row, heading)`` may walk before its box comes near a wall."""
        n, c = angles.shape
        cos, sin = np.cos(angles), np.sin(angles)
        hx, hy = b.half[rows, 0][:, None], b.half[rows, 1][:, None]
        ahead = np.abs(cos) * hx + np.abs(sin) * hy          # box extent along the heading
        side = np.abs(sin) * hx + np.abs(cos) * hy           # and across it
        margin = ahead + self.CLEARANCE
        if self.level is None:
            return np.broadcast_to(wanted[:, None], (n, c)).copy()
        center, half = b.center[rows], b.half[rows]
        feet = np.minimum(center[:, 2] - half[:, 2] + self.STEP, center[:, 2])
        head = np.maximum(center[:, 2] + half[:, 2] - 1.0, center[:, 2])
        origins, dirs = [], []
        for z in (feet, head):
            for lateral in (-0.9, 0.0, 0.9):
                o = np.empty((n, c, 3))
                o[..., 0] = center[:, 0][:, None] - sin * side * lateral
                o[..., 1] = center[:, 1][:, None] + cos * side * lateral
                o[..., 2] = z[:, None]
                origins.append(o.reshape(-1, 3))
                dirs.append(np.stack([cos, sin, np.zeros_like(cos)], axis=-1).reshape(-1, 3))
        reach = float((wanted[:, None] + margin).max())
        t = self.level.cast(np.concatenate(origins), np.concatenate(dirs), reach)
        nearest = t.reshape(len(origins), n, c).min(axis=0)
        return np.minimum(nearest - margin, wanted[:, None])

    def _ground_at(self, b: Bodies, rows, angles, length) -> np.ndarray:
        """Whether there is floor within a step below each walk's end."""
        n, c = angles.shape
        center, half = b.center[rows], b.half[rows]
        ends = np.empty((n, c, 3))
        ends[..., 0] = center[:, 0][:, None] + np.cos(angles) * np.maximum(length, 0)
        ends[..., 1] = center[:, 1][:, None] + np.sin(angles) * np.maximum(length, 0)
        ends[..., 2] = center[:, 2][:, None]
        depth = np.broadcast_to((half[:, 2] + self.STEP)[:, None], (n, c))
        down = np.broadcast_to(np.array([0.0, 0.0, -1.0]), (n * c, 3))
        t = self.level.cast(ends.reshape(-1, 3), down, float(depth.max()))
        return t.reshape(n, c) <= depth

    def _fire(self, ctx: StepContext, rows: np.ndarray, now: float) -> None:
        b = ctx.bodies
        k = self.position(rows)
        due = (self.fire_period[k] > 0) & (b.cooldown[rows] <= now + 1e-9 * ctx.dt)
        if not due.any():
            return
        shooters, ks = rows[due], k[due]
        b.cooldown[shooters] = now + self.fire_period[ks] * (0.75 + 0.5 * ctx.rng.random(len(ks)))
        yaw = b.phase[shooters] + self.spread[ks] * (2 * ctx.rng.random(len(ks)) - 1)
        aim = np.column_stack([np.cos(yaw), np.sin(yaw), np.zeros(len(ks))])
        half = b.half[shooters]
        longest = self.shot_speed[ks] * self.shot_life[ks]
        center = b.center[shooters]
        size = self.shot_size[ks]
        reach = (np.abs(aim[:, 0]) + np.abs(aim[:, 1])) * size  # box extent along a slanted aim
        muzzle = np.abs(aim[:, 0]) * half[:, 0] + np.abs(aim[:, 1]) * half[:, 1] + reach + 1
        if self.level is not None:
            # the shot's box swept from the shooter's centre: rays from its four side corners
            corners = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]], dtype=np.float64)
            starts = np.repeat(center, 4, axis=0)
            starts[:, :2] += np.tile(corners, (len(ks), 1)) * np.repeat(size, 4)[:, None]
            wall = self.level.cast(starts, np.repeat(aim, 4, axis=0),
                                   float((muzzle + longest).max())).reshape(-1, 4).min(axis=1)
        else:
            wall = np.full(len(ks), np.inf)
        flight = np.minimum(wall - muzzle - self.CLEARANCE / 8, longest)
        clear = flight > 0
        if not clear.any():
            return
        ks, aim, muzzle, center, flight = ks[clear], aim[clear], muzzle[clear], center[clear], flight[clear]
        box = np.repeat(self.shot_size[ks][:, None], 3, axis=1)
        ctx.spawn(center + aim * muzzle[:, None], box, aim * self.shot_speed[ks][:, None],
                  flight / self.shot_speed[ks], np.ones(len(ks), dtype=bool))


BUILTIN_BEHAVIOURS = (ConstantVelocity, Patrol, Orbit, Emitter, Wander)


def register(registry) -> None:
    for cls in BUILTIN_BEHAVIOURS:
        registry.add_motion(cls.name, cls, cls.description)
