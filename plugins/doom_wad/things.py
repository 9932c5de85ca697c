"""Readable class names for the thing types (editor numbers) of Doom, Doom II and Freedoom.

Freedoom reuses Doom's editor numbers (its monsters look different but behave the same), so one
table serves all three. Names follow the scene's ``category_name`` style (``monster_imp``,
``weapon_shotgun``); a type missing here (Hexen, Heretic, source ports) becomes
``doom_thing_<type>``, keeping the number readable. ``THING_FLAGS`` names the flag bits of the
Doom format.
"""
from __future__ import annotations

_TABLE = """
1 info_player_start
2 info_player2_start
3 info_player3_start
4 info_player4_start
11 info_player_deathmatch
14 info_teleport_destination
3004 monster_zombieman
9 monster_shotgun_guy
65 monster_heavy_weapon_dude
3001 monster_imp
3002 monster_demon
58 monster_spectre
3006 monster_lost_soul
3005 monster_cacodemon
69 monster_hell_knight
3003 monster_baron_of_hell
68 monster_arachnotron
71 monster_pain_elemental
66 monster_revenant
67 monster_mancubus
64 monster_arch_vile
7 monster_spiderdemon
16 monster_cyberdemon
84 monster_wolfenstein_ss
72 monster_commander_keen
88 monster_boss_brain
89 info_boss_shooter
87 info_boss_target
2005 weapon_chainsaw
2001 weapon_shotgun
82 weapon_super_shotgun
2002 weapon_chaingun
2003 weapon_rocket_launcher
2004 weapon_plasma_rifle
2006 weapon_bfg9000
2007 ammo_clip
2048 ammo_box_of_bullets
2008 ammo_shells
2049 ammo_box_of_shells
2010 ammo_rocket
2046 ammo_box_of_rockets
2047 ammo_cell
17 ammo_cell_pack
8 item_backpack
2011 item_stimpack
2012 item_medikit
2014 item_health_bonus
2015 item_armor_bonus
2018 item_green_armor
2019 item_blue_armor
2013 item_soulsphere
83 item_megasphere
2022 item_invulnerability
2023 item_berserk
2024 item_invisibility
2025 item_radiation_suit
2026 item_computer_map
2045 item_light_amplification
5 key_blue_keycard
40 key_blue_skull
13 key_red_keycard
38 key_red_skull
6 key_yellow_keycard
39 key_yellow_skull
2035 decoration_barrel
70 decoration_burning_barrel
43 decoration_burnt_tree
35 decoration_candelabra
34 decoration_candle
41 decoration_evil_eye
42 decoration_floating_skull
25 decoration_impaled_human
26 decoration_twitching_impaled_human
27 decoration_skull_on_pole
28 decoration_skull_kebab
29 decoration_pile_of_skulls
30 decoration_tall_green_pillar
31 decoration_short_green_pillar
32 decoration_tall_red_pillar
33 decoration_short_red_pillar
36 decoration_green_pillar_with_heart
37 decoration_red_pillar_with_skull
44 decoration_tall_blue_torch
45 decoration_tall_green_torch
46 decoration_tall_red_torch
47 decoration_brown_stump
48 decoration_tall_techno_column
54 decoration_large_brown_tree
55 decoration_short_blue_torch
56 decoration_short_green_torch
57 decoration_short_red_torch
2028 decoration_floor_lamp
85 decoration_tall_techno_lamp
86 decoration_short_techno_lamp
49 decoration_hanging_victim_twitching
50 decoration_hanging_victim_arms_out
51 decoration_hanging_victim_one_legged
52 decoration_hanging_legs
53 decoration_hanging_leg
59 decoration_hanging_victim_arms_out_2
60 decoration_hanging_legs_2
61 decoration_hanging_victim_one_legged_2
62 decoration_hanging_leg_2
63 decoration_hanging_victim_twitching_2
73 decoration_hanging_victim_guts_removed
74 decoration_hanging_victim_guts_and_brain_removed
75 decoration_hanging_torso_looking_down
76 decoration_hanging_torso_open_skull
77 decoration_hanging_torso_looking_up
78 decoration_hanging_torso_brain_removed
10 decoration_bloody_mess
12 decoration_bloody_mess_2
15 decoration_dead_player
18 decoration_dead_zombieman
19 decoration_dead_shotgun_guy
20 decoration_dead_imp
21 decoration_dead_demon
22 decoration_dead_cacodemon
23 decoration_dead_lost_soul
24 decoration_pool_of_blood_and_flesh
79 decoration_pool_of_blood
80 decoration_pool_of_blood_2
81 decoration_pool_of_brains
"""

#: Editor number -> class name.
THING_CLASSES: dict[int, str] = {int(num): name for num, name in
                                 (line.split() for line in _TABLE.strip().splitlines())}

#: Flag bits of a Doom-format thing.
THING_FLAGS = {0x0001: "easy", 0x0002: "medium", 0x0004: "hard", 0x0008: "ambush",
               0x0010: "not_single_player", 0x0020: "not_deathmatch", 0x0040: "not_coop"}


def thing_class(doomednum: int) -> str:
    """The class name of an editor number (``doom_thing_<n>`` when unknown)."""
    return THING_CLASSES.get(int(doomednum), f"doom_thing_{int(doomednum)}")


def flag_names(flags: int) -> list[str]:
    """Names of the set Doom flag bits, lowest first (unknown bits as ``bit<k>``)."""
    names = []
    for bit in range(16):
        if flags & (1 << bit):
            names.append(THING_FLAGS.get(1 << bit, f"bit{bit}"))
    return names
