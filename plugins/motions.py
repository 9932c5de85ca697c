"""Built-in motion behaviours: constant velocity, patrol, orbit and a projectile emitter.

Each behaviour reads its parameters from the entity's key/values (see
:mod:`editor.model.motion` for the full key table) and moves all its bodies at once with numpy.
They set velocities only; the simulation integrates, bounces or despawns at the world bounds
and runs the sleep test.
"""
from __future__ import annotations

import math

import numpy as np

from editor.model.motion import AT_BOUNDS_CHOICES, Behaviour, Bodies, StepContext


class ConstantVelocity(Behaviour):
    """Moves in a straight line at ``_ps_velocity``; bounces off (or leaves) the world bounds."""

    name = "velocity"
    description = "constant velocity (_ps_velocity), bouncing or despawning at the world bounds"
    keys = {"_ps_velocity": "velocity 'x y z' in units per second"}

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
    keys = {"_ps_points": "way points 'x y z; x y z; ...' after the origin",
            "_ps_speed": "walking speed (units per second, default 100)",
            "_ps_pause": "seconds standing at each way point (default 0)"}

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
    keys = {"_ps_center": "centre 'x y z' of the circle",
            "_ps_angular_speed": "degrees per second, counter-clockwise from +z (default 90)"}

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
    keys = {"_ps_direction": "firing direction 'x y z' (default '1 0 0')",
            "_ps_speed": "projectile speed (units per second, default 800)",
            "_ps_rate": "projectiles per second (default 10)",
            "_ps_lifetime": "seconds a projectile lives (default 2)",
            "_ps_bullet_size": "half extent of a projectile box (default 2)",
            "_ps_spread": "random cone half-angle in degrees (default 0)",
            "_ps_bullet_bounds": "projectiles 'despawn' (default) or 'bounce' at the world bounds"}
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


BUILTIN_BEHAVIOURS = (ConstantVelocity, Patrol, Orbit, Emitter)


def register(registry) -> None:
    for cls in BUILTIN_BEHAVIOURS:
        registry.add_motion(cls.name, cls, cls.description)
