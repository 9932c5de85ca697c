"""Bounding boxes of Quake point entities, by class name.

Sizes are the hulls the game gives each class (``setsize`` in the QuakeC sources, as listed by
the ``size(...)`` of the usual ``quake.fgd``), relative to the entity's origin. A class missing
from the table takes the box of the longest matching prefix (``monster_`` ...) or the default.
"""
from __future__ import annotations

Box = tuple[tuple[float, float, float], tuple[float, float, float]]

PLAYER_HULL: Box = ((-16, -16, -24), (16, 16, 32))
LARGE_HULL: Box = ((-32, -32, -24), (32, 32, 64))
MONSTER_HULL: Box = ((-16, -16, -24), (16, 16, 40))
WEAPON_BOX: Box = ((-16, -16, 0), (16, 16, 32))
AMMO_BOX: Box = ((0, 0, 0), (32, 32, 32))
ARTIFACT_BOX: Box = ((-16, -16, -24), (16, 16, 32))
LIGHT_BOX: Box = ((-8, -8, -8), (8, 8, 8))
#: for classes nobody told us about: a small marker cube, like editors draw them
DEFAULT_BOX: Box = ((-8, -8, -8), (8, 8, 8))

CLASS_SIZES: dict[str, Box] = {
    "info_player_start": PLAYER_HULL,
    "info_player_start2": PLAYER_HULL,
    "info_player_deathmatch": PLAYER_HULL,
    "info_player_coop": PLAYER_HULL,
    "info_teleport_destination": ((-8, -8, -8), (8, 8, 32)),
    "info_intermission": ((-16, -16, -16), (16, 16, 16)),
    "info_null": ((-4, -4, -4), (4, 4, 4)),
    "info_notnull": ((-4, -4, -4), (4, 4, 4)),
    "path_corner": ((-8, -8, -8), (8, 8, 8)),
    "monster_army": MONSTER_HULL,
    "monster_enforcer": MONSTER_HULL,
    "monster_knight": MONSTER_HULL,
    "monster_hell_knight": MONSTER_HULL,
    "monster_wizard": MONSTER_HULL,
    "monster_zombie": ((-16, -16, -24), (16, 16, 32)),
    "monster_tarbaby": ((-16, -16, -24), (16, 16, 24)),
    "monster_fish": ((-16, -16, -24), (16, 16, 24)),
    "monster_dog": ((-32, -32, -24), (32, 32, 40)),
    "monster_ogre": LARGE_HULL,
    "monster_ogre_marksman": LARGE_HULL,
    "monster_demon1": LARGE_HULL,
    "monster_shambler": LARGE_HULL,
    "monster_shalrath": ((-32, -32, -24), (32, 32, 48)),
    "monster_boss": ((-128, -128, -24), (128, 128, 256)),
    "monster_oldone": ((-160, -128, -24), (160, 128, 256)),
    "light": LIGHT_BOX,
    "light_fluoro": LIGHT_BOX,
    "light_fluorospark": LIGHT_BOX,
    "light_globe": LIGHT_BOX,
    "light_torch_small_walltorch": ((-10, -10, -20), (10, 10, 20)),
    "light_flame_large_yellow": ((-10, -10, -12), (12, 12, 18)),
    "light_flame_small_yellow": LIGHT_BOX,
    "light_flame_small_white": LIGHT_BOX,
    "weapon_supershotgun": WEAPON_BOX,
    "weapon_nailgun": WEAPON_BOX,
    "weapon_supernailgun": WEAPON_BOX,
    "weapon_grenadelauncher": WEAPON_BOX,
    "weapon_rocketlauncher": WEAPON_BOX,
    "weapon_lightning": WEAPON_BOX,
    "item_health": AMMO_BOX,
    "item_shells": AMMO_BOX,
    "item_spikes": AMMO_BOX,
    "item_rockets": AMMO_BOX,
    "item_cells": AMMO_BOX,
    "item_armor1": WEAPON_BOX,
    "item_armor2": WEAPON_BOX,
    "item_armorInv": WEAPON_BOX,
    "item_artifact_super_damage": ARTIFACT_BOX,
    "item_artifact_invulnerability": ARTIFACT_BOX,
    "item_artifact_invisibility": ARTIFACT_BOX,
    "item_artifact_envirosuit": ARTIFACT_BOX,
    "item_key1": ARTIFACT_BOX,
    "item_key2": ARTIFACT_BOX,
    "item_sigil": ARTIFACT_BOX,
    "misc_explobox": ((0, 0, 0), (32, 32, 64)),
    "misc_explobox2": ((0, 0, 0), (32, 32, 32)),
    "misc_fireball": LIGHT_BOX,
    "misc_teleporttrain": LIGHT_BOX,
    "air_bubbles": LIGHT_BOX,
    "trap_spikeshooter": LIGHT_BOX,
    "trap_shooter": LIGHT_BOX,
    "event_lightning": ((-16, -16, -16), (16, 16, 16)),
    "ambient_suck_wind": ((-10, -10, -8), (10, 10, 8)),
    "ambient_drone": ((-10, -10, -8), (10, 10, 8)),
    "ambient_flouro_buzz": ((-10, -10, -8), (10, 10, 8)),
    "ambient_drip": ((-10, -10, -8), (10, 10, 8)),
    "ambient_comp_hum": ((-10, -10, -8), (10, 10, 8)),
    "ambient_thunder": ((-10, -10, -8), (10, 10, 8)),
    "ambient_light_buzz": ((-10, -10, -8), (10, 10, 8)),
    "ambient_swamp1": ((-10, -10, -8), (10, 10, 8)),
    "ambient_swamp2": ((-10, -10, -8), (10, 10, 8)),
}

#: fallbacks for classes of a known family (mods add monsters, weapons and items freely)
PREFIX_SIZES: tuple[tuple[str, Box], ...] = (
    ("info_player_", PLAYER_HULL),
    ("monster_", MONSTER_HULL),
    ("weapon_", WEAPON_BOX),
    ("item_artifact_", ARTIFACT_BOX),
    ("item_", AMMO_BOX),
    ("light", LIGHT_BOX),
    ("ambient_", ((-10, -10, -8), (10, 10, 8))),
)


def class_box(classname: str) -> Box:
    """The ``(mins, maxs)`` of a point entity class relative to its origin."""
    box = CLASS_SIZES.get(classname)
    if box is not None:
        return box
    for prefix, box in PREFIX_SIZES:  # ordered longest-first within a family
        if classname.startswith(prefix):
            return box
    return DEFAULT_BOX
