"""A ``.map`` holding one good brush and one of each kind of brush that bounds no solid."""
from __future__ import annotations


def box_faces(lo, hi, *, skip: tuple[int, ...] = ()) -> list[str]:
    """The six faces of the box ``lo``..``hi`` in Quake's standard form (minus ``skip``)."""
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    faces = [
        f"( {x0} {y0} {z0} ) ( {x0} {y0 + 1} {z0} ) ( {x0} {y0} {z0 + 1} ) rock 0 0 0 1 1",
        f"( {x0} {y0} {z0} ) ( {x0} {y0} {z0 + 1} ) ( {x0 + 1} {y0} {z0} ) rock 0 0 0 1 1",
        f"( {x0} {y0} {z0} ) ( {x0 + 1} {y0} {z0} ) ( {x0} {y0 + 1} {z0} ) rock 0 0 0 1 1",
        f"( {x1} {y1} {z1} ) ( {x1} {y1 + 1} {z1} ) ( {x1 + 1} {y1} {z1} ) rock 0 0 0 1 1",
        f"( {x1} {y1} {z1} ) ( {x1 + 1} {y1} {z1} ) ( {x1} {y1} {z1 + 1} ) rock 0 0 0 1 1",
        f"( {x1} {y1} {z1} ) ( {x1} {y1} {z1 + 1} ) ( {x1} {y1 + 1} {z1} ) rock 0 0 0 1 1",
    ]
    return [f for k, f in enumerate(faces) if k not in skip]


#: name -> faces of a brush bounding no solid
BROKEN = {
    "flat": box_faces((0, 0, 32), (16, 16, 32)),
    "open": box_faces((32, 0, 0), (48, 16, 16), skip=(3,)),
    "three_faces": box_faces((64, 0, 0), (80, 16, 16))[:3],
    "empty": box_faces((112, 0, 0), (96, 16, 16)),  # x >= 112 and x <= 96: no point in both
}


def broken_map_text() -> str:
    """Worldspawn with a good brush and the four broken ones, then a point entity; the broken
    brushes carry comments and odd spacing a writer would not produce."""
    lines = ["// Game: Quake", "// Format: Standard", "{", '"classname" "worldspawn"']
    lines += ["{", *box_faces((-64, -64, -16), (64, 64, 0)), "}"]
    for name, faces in BROKEN.items():
        lines += ["{  // " + name, *("  " + f for f in faces), "}"]
    lines += ["}", "{", '"classname" "info_player_start"', '"origin" "0 0 24"', "}"]
    return "\n".join(lines) + "\n"
