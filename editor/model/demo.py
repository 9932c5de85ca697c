"""The demo level, built in code: a small arena that shows every feature of the model.

Floor, walls and a ceiling frame; octagonal and rotated (non-axial) pillars; ramps up to a
platform; a func_door in the south wall; a TrenchBroom layer holding the upper deck and a
TrenchBroom group of crates; player starts, monsters, lights, weapons and items; a patrol, an
orbit and a spike shooter for the simulation (motion keys ``_ps_*``). All faces
carry Valve 220 texture axes. The build is deterministic, and ``resources/demo_level.json`` is
its saved form (``python -m editor.model.demo`` regenerates it; a test keeps them equal).
"""
from __future__ import annotations

import sys
from pathlib import Path

from .entities import brush_entity, point_entity
from .native import save_scene
from .scene import Edit, Scene, Settings
from .shapes import box_brush, prism_brush, ramp_brush

DEMO_PATH = Path(__file__).resolve().parents[2] / "resources" / "demo_level.json"

HALF = 512      # the arena spans [-HALF, HALF] on x and y
HEIGHT = 256    # wall height
WALL = 16       # wall thickness


class _Builder:
    def __init__(self) -> None:
        self.scene = Scene()
        self.objects: dict = {}

    def add(self, obj) -> int:
        oid = self.scene.allocate_ids(1)[0]
        self.objects[oid] = obj
        return oid


def build_demo_scene() -> Scene:
    """Build the demo arena (same ids and values on every call)."""
    b = _Builder()
    tex = "city4_6"
    world = b.add(brush_entity("worldspawn", [("message", "Partition Studio demo arena"),
                                               ("wad", "quake.wad"), ("mapversion", "220")]))
    # floor and walls (a gap in the south wall holds the door)
    b.add(box_brush(world, (-HALF, -HALF, -WALL), (HALF, HALF, 0), "ground1_6", valve=True))
    b.add(box_brush(world, (-HALF, HALF - WALL, 0), (HALF, HALF, HEIGHT), tex, valve=True))
    b.add(box_brush(world, (-HALF, -HALF, 0), (-HALF + WALL, HALF - WALL, HEIGHT), tex, valve=True))
    b.add(box_brush(world, (HALF - WALL, -HALF, 0), (HALF, HALF - WALL, HEIGHT), tex, valve=True))
    b.add(box_brush(world, (-HALF + WALL, -HALF, 0), (-64, -HALF + WALL, HEIGHT), tex, valve=True))
    b.add(box_brush(world, (64, -HALF, 0), (HALF - WALL, -HALF + WALL, HEIGHT), tex, valve=True))
    b.add(box_brush(world, (-64, -HALF, 128), (64, -HALF + WALL, HEIGHT), tex, valve=True))
    # ceiling beams crossing the arena
    b.add(box_brush(world, (-HALF + WALL, -16, HEIGHT - 32), (HALF - WALL, 16, HEIGHT), "wood1_1", valve=True))
    b.add(box_brush(world, (-16, -HALF + WALL, HEIGHT - 64), (16, HALF - WALL, HEIGHT - 32), "wood1_1", valve=True))
    # pillars: four octagons and two rotated (non-axial) ones
    for x, y in ((-256, -256), (256, -256), (-256, 256), (256, 256)):
        b.add(prism_brush(world, (x, y), 32, (0, HEIGHT - 64), sides=8, angle_deg=22.5,
                          texture="metal1_2", valve=True))
    b.add(prism_brush(world, (0, 192), 40, (0, 96), sides=4, angle_deg=30, texture="metal2_4", valve=True))
    b.add(prism_brush(world, (-128, -96), 36, (0, 72), sides=3, angle_deg=10, texture="metal2_4", valve=True))
    # ramps up to the upper deck (the deck itself lives in a layer)
    b.add(ramp_brush(world, (160, 64, 0), (352, 160, 64), rise_axis=0, texture="ground1_7", valve=True))
    b.add(ramp_brush(world, (-448, 96, 0), (-352, 288, 64), rise_axis=1, texture="ground1_7", valve=True))

    # a TrenchBroom layer with the upper deck, and a group of crates inside it
    layer = b.add(brush_entity("func_group", [("_tb_type", "_tb_layer"), ("_tb_name", "Upper deck"),
                                              ("_tb_id", "1"), ("_tb_layer_sort_index", "0")]))
    b.add(box_brush(layer, (352, 32, 48), (HALF - WALL, 288, 64), "wood1_1", valve=True))
    b.add(box_brush(layer, (-HALF + WALL, 288, 48), (-352, HALF - WALL, 64), "wood1_1", valve=True))
    group = b.add(brush_entity("func_group", [("_tb_type", "_tb_group"), ("_tb_name", "Crates"),
                                              ("_tb_id", "2"), ("_tb_layer", "1")]))
    b.add(box_brush(group, (384, 192, 64), (432, 240, 112), "crate0_top", valve=True))
    b.add(box_brush(group, (440, 200, 64), (480, 240, 104), "crate0_top", valve=True))
    b.add(box_brush(group, (400, 200, 112), (440, 240, 144), "crate0_top", valve=True))

    door = b.add(brush_entity("func_door", [("angle", "-1"), ("speed", "100"), ("wait", "3"),
                                            ("targetname", "arena_gate")]))
    b.add(box_brush(door, (-64, -HALF + 4, 0), (64, -HALF + 12, 128), "door02_1", valve=True))
    trigger = b.add(brush_entity("trigger_once", [("target", "arena_gate")]))
    b.add(box_brush(trigger, (-64, -HALF + 32, 0), (64, -HALF + 96, 96), "trigger", valve=True))

    points = [
        ("info_player_start", (0, -384, 24), [("angle", "90")]),
        ("info_player_deathmatch", (-384, 384, 24), [("angle", "315")]),
        ("info_player_deathmatch", (384, -384, 24), [("angle", "135")]),
        ("info_player_deathmatch", (448, 96, 88), [("angle", "180"), ("_tb_layer", "1")]),
        # moving entities (keys of editor.model.motion): a patrol that falls asleep at its way
        # point until the orbiting dog passes by, and a machine-gun stream along the south side
        ("monster_army", (-192, 0, 24), [("angle", "0"), ("_ps_motion", "patrol"),
                                         ("_ps_points", "-320 -160 24"), ("_ps_speed", "100"),
                                         ("_ps_pause", "4")]),
        ("monster_ogre", (192, 320, 24), [("angle", "270"), ("spawnflags", "1"), ("_ps_motion", "patrol"),
                                          ("_ps_points", "192 96 24; -96 96 24"), ("_ps_speed", "90"),
                                          ("_ps_pause", "3")]),
        ("monster_shambler", (0, 384, 24), [("angle", "270")]),
        ("monster_dog", (320, -160, 24), [("angle", "180"), ("_ps_motion", "orbit"),
                                          ("_ps_center", "0 0 24"), ("_ps_angular_speed", "45")]),
        ("monster_knight", (-400, 400, 88), [("angle", "0"), ("_tb_layer", "1")]),
        ("light", (0, 0, 192), [("light", "300")]),
        ("light", (-320, -320, 160), [("light", "200")]),
        ("light", (320, 320, 160), [("light", "200"), ("_color", "1 0.8 0.6")]),
        ("light_torch_small_walltorch", (0, HALF - WALL - 12, 128), []),
        ("weapon_rocketlauncher", (0, 0, 8), []),
        ("weapon_supershotgun", (-300, 200, 8), []),
        ("item_health", (-160, -416, 8), [("spawnflags", "2")]),
        ("item_shells", (160, -416, 8), []),
        ("item_armor2", (464, 256, 72), [("_tb_group", "2")]),
        ("item_artifact_super_damage", (0, 192, 120), []),
        ("info_teleport_destination", (-416, -416, 40), [("targetname", "arena_back")]),
        ("misc_explobox", (224, -448, 0), []),
        ("trap_spikeshooter", (-480, -300, 48), [("_ps_motion", "emitter"), ("_ps_direction", "1 0 0"),
                                                 ("_ps_rate", "15"), ("_ps_speed", "700"),
                                                 ("_ps_lifetime", "2"), ("_ps_spread", "2")]),
    ]
    for classname, origin, extra in points:
        b.add(point_entity(classname, origin, extra))

    scene = b.scene
    scene.apply(Edit(b.objects, settings=Settings(
        backend="octree", params={},
        metadata={"map_format": "valve220", "map_header": ["// Game: Quake", "// Format: Valve"]})))
    return scene


def write_demo(path: str | Path = DEMO_PATH) -> None:
    """Save the demo level (the committed ``resources/demo_level.json``)."""
    save_scene(build_demo_scene(), path)


if __name__ == "__main__":
    write_demo(sys.argv[1] if len(sys.argv) > 1 else DEMO_PATH)
