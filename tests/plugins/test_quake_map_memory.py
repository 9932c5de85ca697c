"""Memory of reading a big ``.map``: bytes per brush held and at the peak, counted by tracemalloc.

A level of 200,000 box brushes must load in at most 2 GB. What bounds that is the Python
objects made per face (numbers, tuples, texture names, the face objects) and the transient
arrays of the parse; these tests count the bytes (deterministic, unlike resident memory or
time) for a generated level and hold them per brush under bounds that one object per number,
one tuple per point and an instance dictionary per face exceeded (about 6,500 bytes a brush
held and 10,800 at the peak, against about 2,900 and 7,600 now).
"""
from __future__ import annotations

import gc
import tracemalloc

import pytest

from plugins.quake_map.convert import load_map
from plugins.quake_map.syntax import read_map

#: the six faces of a box brush, as TrenchBroom writes them
_FACES = (
    "( {x0} {y0} {z0} ) ( {x0} {y1} {z0} ) ( {x0} {y0} {z1} ) __TB_empty 0 0 0 1 1\n"
    "( {x1} {y0} {z0} ) ( {x1} {y0} {z1} ) ( {x1} {y1} {z0} ) __TB_empty 0 0 0 1 1\n"
    "( {x0} {y0} {z0} ) ( {x0} {y0} {z1} ) ( {x1} {y0} {z0} ) __TB_empty 0 0 0 1 1\n"
    "( {x0} {y1} {z0} ) ( {x1} {y1} {z0} ) ( {x0} {y1} {z1} ) __TB_empty 0 0 0 1 1\n"
    "( {x0} {y0} {z0} ) ( {x1} {y0} {z0} ) ( {x0} {y1} {z0} ) __TB_empty 0 0 0 1 1\n"
    "( {x0} {y0} {z1} ) ( {x0} {y1} {z1} ) ( {x1} {y0} {z1} ) __TB_empty 0 0 0 1 1\n")

BRUSHES = 3000
#: bytes per brush the loaded scene may hold, and may reach at the peak of the load
HELD_PER_BRUSH, PEAK_PER_BRUSH = 4000, 9000


@pytest.fixture(scope="module")
def box_map(tmp_path_factory):
    path = tmp_path_factory.mktemp("memory") / "boxes.map"
    parts = ['{\n"classname" "worldspawn"\n']
    for k in range(BRUSHES):
        x, y, z = 16 * (k % 50), 16 * (k // 50 % 50), 16 * (k // 2500)
        parts.append("{\n" + _FACES.format(x0=x, y0=y, z0=z, x1=x + 8, y1=y + 8 + k % 5,
                                           z1=z + 8 + k % 3) + "}\n")
    parts.append("}\n")
    path.write_text("".join(parts), encoding="ascii")
    load_map(path)  # kernels compiled or loaded from the cache before anything is counted
    return path


def _traced(load):
    """``(result, bytes held after, peak bytes)`` of ``load()`` above what was held before."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = load()
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, held - base, peak - base


def test_a_loaded_level_holds_few_bytes_per_brush(box_map):
    scene, held, peak = _traced(lambda: load_map(box_map))
    assert len(scene.brush_ids()) == BRUSHES
    assert held / BRUSHES <= HELD_PER_BRUSH, f"{held / BRUSHES:.0f} bytes held per brush"
    assert peak / BRUSHES <= PEAK_PER_BRUSH, f"{peak / BRUSHES:.0f} bytes at the peak per brush"


def test_equal_numbers_and_names_are_shared_objects(box_map):
    """What keeps the faces small: equal values are one object, and a face has no dictionary."""
    mapfile = read_map(box_map)
    faces = [face for brush in mapfile.entities[0].brushes for face in brush.faces]
    assert len({id(face.texture) for face in faces}) == 1
    assert len({id(face.offset) for face in faces}) == 1
    assert len({id(face.scale) for face in faces}) == 1
    corners = {id(point) for face in faces for point in face.points}
    distinct = {point for face in faces for point in face.points}
    assert len(corners) == len(distinct)
    scene = load_map(box_map)
    face = scene[scene.brush_ids()[0]].faces[0]
    assert not hasattr(face, "__dict__")
