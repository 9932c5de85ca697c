"""Doom and Hexen binary formats on small WADs written here, record by record."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from editor.model.loading import load_document
from plugins.doom_wad import WadError, list_maps
from plugins.doom_wad.mapdata import open_map

SQUARE = [(0, 0), (0, 128), (128, 128), (128, 0)]  # clockwise: the sidedefs face inwards


def name8(text: str) -> bytes:
    return text.encode("ascii").ljust(8, b"\0")


def write_wad(path, lumps: list[tuple[str, bytes]]) -> None:
    data = b""
    entries = []
    offset = 12
    for name, payload in lumps:
        entries.append(struct.pack("<ii8s", offset, len(payload), name8(name)))
        data += payload
        offset += len(payload)
    header = struct.pack("<4sii", b"PWAD", len(lumps), offset)
    path.write_bytes(header + data + b"".join(entries))


def square_room(hexen: bool, map_name: str = "MAP01") -> list[tuple[str, bytes]]:
    vertexes = b"".join(struct.pack("<hh", x, y) for x, y in SQUARE)
    if hexen:
        linedefs = b"".join(struct.pack("<HHHB5BHH", k, (k + 1) % 4, 1, 0, 0, 0, 0, 0, 0, k, 0xFFFF)
                            for k in range(4))
        things = struct.pack("<hhhhhHHB5B", 5, 64, 64, 16, 90, 3001, 7, 0, 1, 2, 3, 4, 5)
    else:
        linedefs = b"".join(struct.pack("<HHHHHHH", k, (k + 1) % 4, 1, 0, 0, k, 0xFFFF)
                            for k in range(4))
        things = struct.pack("<hhhHH", 64, 64, 90, 1, 7)
    sidedefs = b"".join(struct.pack("<hh8s8s8sH", 0, 0, name8("-"), name8("-"), name8("WALL"), 0)
                        for _ in range(4))
    sectors = struct.pack("<hh8s8shHH", 8, 136, name8("FLOOR"), name8("CEIL"), 160, 0, 0)
    lumps = [(map_name, b""), ("THINGS", things), ("LINEDEFS", linedefs), ("SIDEDEFS", sidedefs),
             ("VERTEXES", vertexes), ("SECTORS", sectors)]
    if hexen:
        lumps.append(("BEHAVIOR", b"ACS\0" + bytes(12)))
    return lumps


@pytest.mark.parametrize("hexen", [False, True])
def test_square_room_reads_in_both_formats(tmp_path, hexen):
    path = tmp_path / "room.wad"
    write_wad(path, square_room(hexen))
    data = open_map(path, "MAP01")
    assert data.format == ("hexen" if hexen else "doom")
    assert len(data.linedefs) == 4 and len(data.things) == 1 and data.nodes is None
    scene = load_document(f"{path}:map01")
    segments = [scene[i] for i in scene.segment_ids()]
    assert [s.a for s in segments] == [tuple(map(float, v)) for v in SQUARE]
    assert all((s.floor, s.ceiling) == (8.0, 136.0) for s in segments)
    assert not any(s.two_sided for s in segments)
    thing = scene[scene.point_entity_ids()[0]]
    if hexen:
        assert thing.classname == "monster_imp"
        assert thing.get("tid") == "5" and thing.get("args") == "1 2 3 4 5"
        np.testing.assert_array_equal(thing.origin, [64, 64, 16])  # no nodes: z from the thing
    else:
        assert thing.classname == "info_player_start"
        assert thing.get("angle") == "90" and thing.get("flag_names") == "easy medium hard"


def test_maps_are_listed_in_order(tmp_path):
    path = tmp_path / "two.wad"
    write_wad(path, square_room(False, "E1M1") + square_room(False, "E1M2"))
    assert list_maps(path) == ["E1M1", "E1M2"]
    assert load_document(f"{path}:E1M2").settings.metadata["map"] == "E1M2"


def test_missing_lump_and_bad_sector_are_named(tmp_path):
    lumps = [lump for lump in square_room(False) if lump[0] != "SECTORS"]
    path = tmp_path / "nosectors.wad"
    write_wad(path, lumps)
    with pytest.raises(WadError, match="lump MAP01/SECTORS: missing"):
        open_map(path, "MAP01")
    lumps = square_room(False)
    sides = bytearray(lumps[3][1])
    struct.pack_into("<H", sides, 30 * 2 + 28, 9)  # sidedef 2 -> sector 9
    lumps[3] = ("SIDEDEFS", bytes(sides))
    write_wad(path, lumps)
    with pytest.raises(WadError, match=r"MAP01/SIDEDEFS: record 2: sector 9 does not exist"):
        load_document(f"{path}:MAP01")


def test_udmf_maps_are_refused_clearly(tmp_path):
    path = tmp_path / "udmf.wad"
    write_wad(path, [("MAP01", b""), ("TEXTMAP", b"namespace = \"zdoom\";"), ("ENDMAP", b"")])
    assert list_maps(path) == ["MAP01"]
    with pytest.raises(WadError, match="UDMF"):
        open_map(path, "MAP01")
