"""Default motion of level entities by class, so a real level comes alive without typed keys.

When a simulation *animates level entities* (:attr:`~.simulation.SimulationConfig.class_motion`),
an entity without its own ``_ps_motion`` key moves as its class does in the game, roughly:

* **monsters** (Quake ``monster_*`` classes; Doom things, told apart by their ``doomednum`` key)
  **wander** inside their room: walk a few seconds in a random direction that the level's walls
  leave open (ray casts through our own index, :mod:`.level_probe`), stop a moment (long stops
  let them fall asleep; they wake when the stop ends or something comes close), walk again.
  Those that **shoot** in the game fire every few seconds along their heading; a projectile
  flies straight and despawns at the first wall or after its lifetime. Instant (hitscan)
  attacks — Quake's grunt and shambler, Doom's former humans and spider mastermind — fire
  *tracers*: tiny boxes at :data:`TRACER_SPEED`, the path of the game's ray made visible to
  the broad phase. Monsters that only bite or claw do not fire. A ``monster_`` class nobody
  told us about wanders at :data:`DEFAULT_WALK_SPEED` without firing;
* a Quake monster whose ``target`` names a ``path_corner`` **patrols** the chain of corners
  (each corner's ``target`` names the next) at its walking speed, as in the game, and walks back
  to its start after the last corner; it keeps its height above the first corner, so it follows
  the chain up and down stairs.
  The designer laid that path out, so it is not checked against the walls;
* Quake's ``trap_shooter`` fires spikes along its ``angle`` every ``wait`` seconds;
* everything else (items, weapons, lights, player starts, decorations...) stays where it is and
  falls asleep; moving bodies passing by wake it.

Explicit keys win: an entity's own ``_ps_*`` keys override its class's values one by one, a
``_ps_motion`` naming another behaviour replaces the class default entirely, and
``_ps_motion`` ``none`` keeps the entity still. :func:`motion_keys` is the one place that
decides; the simulation, the command line and the editor's motion panel all ask it.

Speeds are in units per second (Doom speeds converted from map units per tic at 35 tics a
second), periods in seconds; they follow the games' own values where they have one and are
rounded, since the point is realistic churn in the spatial index, not a faithful game.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from .entities import Entity
from .motion import MOTION_KEY, MOTION_PREFIX, NO_MOTION

#: walking speed of monster classes missing from the tables (units per second)
DEFAULT_WALK_SPEED = 80.0
#: the behaviour monsters get
WANDER = "wander"
#: speed of the tracers standing for instant (hitscan) attacks (units per second)
TRACER_SPEED = 1500.0
#: the behaviour of monsters following path corners
PATROL = "patrol"
#: longest path_corner chain followed
MAX_PATH_CORNERS = 64


def _wander(speed: float, fire_period: float = 0.0, projectile_speed: float = 600.0,
            projectile_size: float = 4.0) -> dict[str, str]:
    keys = {MOTION_KEY: WANDER, "_ps_speed": f"{speed:g}"}
    if fire_period > 0:
        keys.update({"_ps_fire_period": f"{fire_period:g}",
                     "_ps_projectile_speed": f"{projectile_speed:g}",
                     "_ps_projectile_size": f"{projectile_size:g}"})
    return keys


#: Quake monsters: walking speed, and for those firing projectiles the period, speed and size
QUAKE_MONSTERS: dict[str, dict[str, str]] = {
    "monster_army": _wander(80, 2.5, TRACER_SPEED, 1),  # shotgun: hitscan
    "monster_dog": _wander(160),
    "monster_ogre": _wander(70, 2.5, 600, 4),           # grenades
    "monster_ogre_marksman": _wander(70, 2.5, 600, 4),
    "monster_knight": _wander(90),
    "monster_hell_knight": _wander(90, 2.5, 300, 4),    # magic missiles
    "monster_wizard": _wander(110, 1.5, 600, 4),        # scrag spit
    "monster_zombie": _wander(40, 3.0, 600, 4),         # thrown flesh
    "monster_enforcer": _wander(80, 2.0, 600, 2),       # laser bolts
    "monster_demon1": _wander(140),
    "monster_shambler": _wander(80, 3.0, TRACER_SPEED, 2),  # lightning: hitscan
    "monster_shalrath": _wander(50, 3.0, 400, 6),       # homing vore balls, flown straight here
    "monster_tarbaby": _wander(100),
    "monster_fish": _wander(100),
    "monster_boss": _wander(0, 2.0, 300, 8),            # Chthon stands in the lava, throws lava balls
    "monster_oldone": {MOTION_KEY: NO_MOTION},
}

#: Doom, Doom II and Freedoom monsters (class names of ``plugins.doom_wad.things``)
DOOM_MONSTERS: dict[str, dict[str, str]] = {
    "monster_zombieman": _wander(70, 2.5, TRACER_SPEED, 1),  # hitscan
    "monster_shotgun_guy": _wander(70, 2.5, TRACER_SPEED, 1),
    "monster_heavy_weapon_dude": _wander(70, 1.0, TRACER_SPEED, 1),
    "monster_wolfenstein_ss": _wander(70, 1.5, TRACER_SPEED, 1),
    "monster_imp": _wander(70, 2.0, 350, 6),             # fireballs, 10 units per tic
    "monster_demon": _wander(175),
    "monster_spectre": _wander(175),
    "monster_lost_soul": _wander(280),
    "monster_cacodemon": _wander(70, 2.5, 350, 8),
    "monster_hell_knight": _wander(70, 2.5, 525, 6),
    "monster_baron_of_hell": _wander(70, 2.5, 525, 6),
    "monster_arachnotron": _wander(105, 1.0, 875, 6),    # plasma
    "monster_pain_elemental": _wander(70),
    "monster_revenant": _wander(175, 2.5, 350, 6),       # rockets, 10 units per tic
    "monster_mancubus": _wander(70, 3.0, 700, 8),
    "monster_arch_vile": _wander(265),
    "monster_spiderdemon": _wander(105, 1.0, TRACER_SPEED, 1),  # hitscan
    "monster_cyberdemon": _wander(140, 1.5, 700, 6),     # rockets, 20 units per tic
    "monster_commander_keen": {MOTION_KEY: NO_MOTION},   # hangs from the ceiling
    "monster_boss_brain": {MOTION_KEY: NO_MOTION},       # a wall texture that spawns cubes
}


def _yaw_direction(angle_text: str | None) -> str:
    """Quake's ``angle`` key as a direction: yaw in degrees, ``-1`` up, ``-2`` down."""
    try:
        angle = float(angle_text) if angle_text is not None else 0.0
    except ValueError:
        angle = 0.0
    if angle == -1:
        return "0 0 1"
    if angle == -2:
        return "0 0 -1"
    rad = math.radians(angle)
    return f"{math.cos(rad):.6g} {math.sin(rad):.6g} 0"


def _trap_shooter(entity: Entity) -> dict[str, str]:
    try:
        wait = float(entity.get("wait", "1") or 1)
    except ValueError:
        wait = 1.0
    rate = 1.0 / wait if wait > 0 else 1.0
    return {MOTION_KEY: "emitter", "_ps_direction": _yaw_direction(entity.get("angle")),
            "_ps_rate": f"{rate:g}", "_ps_speed": "500", "_ps_lifetime": "3", "_ps_bullet_size": "2"}


def path_corners(scene) -> dict[str, Entity]:
    """The scene's ``path_corner`` entities by ``targetname`` (what monsters' ``target`` names)."""
    out: dict[str, Entity] = {}
    for oid in scene.point_entity_ids():
        ent = scene[oid]
        name = ent.get("targetname")
        if ent.classname == "path_corner" and name and name not in out:
            out[name] = ent
    return out


def _corner_chain(entity: Entity, corners: Mapping[str, Entity]) -> list[np.ndarray]:
    points: list[np.ndarray] = []
    seen: set[str] = set()
    name = entity.get("target")
    while name and name in corners and name not in seen and len(points) < MAX_PATH_CORNERS:
        seen.add(name)
        corner = corners[name]
        points.append(corner.origin)
        name = corner.get("target")
    return points


def _patrol(entity: Entity, corners: Mapping[str, Entity], speed: str) -> dict[str, str] | None:
    chain = _corner_chain(entity, corners)
    if not chain:
        return None
    # corners sit below a walker's origin (designers place them near the floor): keep the
    # monster's height above the first one, and follow the chain up and down stairs from there
    lift = entity.origin[2] - chain[0][2]
    points = "; ".join(f"{p[0]:g} {p[1]:g} {p[2] + lift:g}" for p in chain)
    return {MOTION_KEY: PATROL, "_ps_points": points, "_ps_speed": speed}


def is_doom_thing(entity: Entity) -> bool:
    """True for a thing read from a Doom-format map (it carries its editor number)."""
    return "doomednum" in entity


def class_default(entity: Entity, corners: Mapping[str, Entity] | None = None) -> dict[str, str] | None:
    """The motion keys an entity's class gives it, or ``None`` (it stays still).

    Parameters
    ----------
    entity : Entity
        A point entity; its class name (and for some classes its keys, e.g. a shooter's
        ``angle``) decide.
    corners : mapping, optional
        :func:`path_corners` of the scene: a Quake monster targeting one patrols the chain.
    """
    name = entity.classname
    table = DOOM_MONSTERS if is_doom_thing(entity) else QUAKE_MONSTERS
    if name in table:
        keys = table[name]
    elif name == "trap_shooter" and not is_doom_thing(entity):
        keys = _trap_shooter(entity)
    elif name.startswith("monster_"):
        keys = _wander(DEFAULT_WALK_SPEED)
    else:
        return None
    if keys.get(MOTION_KEY) == NO_MOTION:
        return None
    if keys[MOTION_KEY] == WANDER and corners and not is_doom_thing(entity):
        patrol = _patrol(entity, corners, keys["_ps_speed"])
        if patrol is not None:
            return patrol
    return dict(keys)


def family(entity: Entity, corners: Mapping[str, Entity] | None = None) -> str:
    """A short name of the entity's motion family, for panels and reports."""
    default = class_default(entity, corners)
    if default is None:
        return "static"
    if default[MOTION_KEY] == PATROL:
        return "Quake monster (patrols its path_corner chain)"
    if default[MOTION_KEY] == WANDER:
        shooter = "_ps_fire_period" in default
        game = "Doom" if is_doom_thing(entity) else "Quake"
        return f"{game} monster ({'wanders and shoots' if shooter else 'wanders'})"
    return f"{default[MOTION_KEY]}"


def motion_keys(entity: Entity, class_motion: bool,
                corners: Mapping[str, Entity] | None = None) -> dict[str, str]:
    """The key/values a simulation reads for ``entity``: its own, over its class default.

    Parameters
    ----------
    entity : Entity
    class_motion : bool
        Whether class defaults apply (the simulation animates level entities).
    corners : mapping, optional
        :func:`path_corners` of the scene (monsters targeting one patrol).

    Returns
    -------
    dict
        Every key of the entity (the last of a repeated key wins), with the class default's
        motion keys under them when ``class_motion`` is on, the class has a default and the
        entity does not name another behaviour.
    """
    own = dict(entity.properties)
    if not class_motion:
        return own
    default = class_default(entity, corners)
    if default is None:
        return own
    named = own.get(MOTION_KEY, "").strip()
    if named and named != default[MOTION_KEY]:
        return own
    merged = dict(default)
    # an empty _ps_motion (a key cleared in an editor) names nothing: the class default stays
    merged.update({k: v for k, v in own.items() if k != MOTION_KEY or v.strip()})
    return merged


def explicit_motion_keys(properties: Mapping[str, str]) -> dict[str, str]:
    """The motion keys (``_ps_*``) among ``properties``."""
    return {k: v for k, v in properties.items() if k.startswith(MOTION_PREFIX)}
