"""Doom WAD import: counts against the lump directory, the shipped BSP, damaged files."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from editor.model.level_geometry import Segment
from editor.model.loading import load_document
from plugins.doom_wad import WadError, list_maps
from plugins.doom_wad.mapdata import open_map
from plugins.doom_wad.shipped_bsp import load_shipped_bsp
from plugins.doom_wad.things import thing_class

FREEDOOM = Path("/usr/share/games/doom")
RECORD_SIZE = {"THINGS": 10, "LINEDEFS": 14, "SIDEDEFS": 30, "VERTEXES": 4, "SECTORS": 26}


def freedoom(name: str) -> Path:
    path = FREEDOOM / name
    if not path.exists():
        pytest.skip(f"{path} is absent: install the Debian package 'freedoom'")
    return path


def directory(path: Path) -> list[tuple[str, int, int]]:
    """(name, offset, size) of every lump, read with struct alone (independent of the reader)."""
    raw = path.read_bytes()
    count, offset = struct.unpack_from("<ii", raw, 4)
    out = []
    for i in range(count):
        pos, size, name = struct.unpack_from("<ii8s", raw, offset + 16 * i)
        out.append((name.rstrip(b"\0").decode(), pos, size))
    return out


def lump_counts(path: Path, map_name: str) -> dict[str, int]:
    lumps = directory(path)
    start = [n for n, _, _ in lumps].index(map_name)
    return {name: size // RECORD_SIZE[name] for name, _, size in lumps[start + 1: start + 11]
            if name in RECORD_SIZE}


def test_e1m1_counts_match_the_lump_sizes():
    wad = freedoom("freedoom1.wad")
    expected = lump_counts(wad, "E1M1")
    data = open_map(wad, "E1M1")
    assert data.format == "doom"
    assert len(data.linedefs) == expected["LINEDEFS"]
    assert len(data.sidedefs) == expected["SIDEDEFS"]
    assert len(data.vertexes) == expected["VERTEXES"]
    assert len(data.sectors) == expected["SECTORS"]
    assert len(data.things) == expected["THINGS"]

    scene = load_document(f"{wad}:E1M1")
    segments = scene.segment_ids()
    assert len(segments) == expected["LINEDEFS"]
    assert len(scene.point_entity_ids()) == expected["THINGS"]
    world = scene[scene.worldspawn_id()]
    assert world.get("sectors") == str(expected["SECTORS"])
    assert world.get("sidedefs") == str(expected["SIDEDEFS"])
    two_sided = sum(scene[i].two_sided for i in segments)
    assert expected["LINEDEFS"] + two_sided == expected["SIDEDEFS"]  # E1M1 shares no sidedef


def test_segments_follow_their_linedefs_and_sector_heights():
    data = open_map(freedoom("freedoom1.wad"), "E1M1")
    scene = load_document(f"{freedoom('freedoom1.wad')}:E1M1")
    first = scene[scene.segment_ids()[0]]
    assert isinstance(first, Segment)
    line = data.linedefs[0]
    v1, v2 = data.vertexes[line["v1"]], data.vertexes[line["v2"]]
    assert first.a == (v1["x"], v1["y"]) and first.b == (v2["x"], v2["y"])
    sector = data.sectors[data.sidedefs[line["right"]]["sector"]]
    if line["left"] == 0xFFFF:
        assert (first.floor, first.ceiling) == (sector["floor"], sector["ceiling"])
    for oid in scene.segment_ids():
        seg = scene[oid]
        assert seg.lo[2] <= seg.hi[2]


def test_things_have_class_names_and_stand_on_floors():
    scene = load_document(f"{freedoom('freedoom1.wad')}:E1M1")
    classes = {scene[i].classname for i in scene.point_entity_ids()}
    assert "info_player_start" in classes
    assert any(c.startswith("monster_") for c in classes)
    start = scene[scene.find_entities(classname="info_player_start")[0]]
    assert start.get("doomednum") == "1"
    assert int(start.get("sector")) >= 0
    assert thing_class(3001) == "monster_imp" and thing_class(31999) == "doom_thing_31999"


def test_list_maps_and_first_map_by_default():
    wad = freedoom("freedoom2.wad")
    maps = list_maps(wad)
    assert maps[0] == "MAP01" and len(maps) >= 30
    plain = load_document(wad)
    assert plain.settings.metadata["map"] == "MAP01"


def test_shipped_bsp_validates_and_counts_every_seg_once():
    wad = freedoom("freedoom1.wad")
    bsp = load_shipped_bsp(wad, "E1M1")
    bsp.validate()
    table = bsp.nodes()
    stats = bsp.stats()
    lumps = {n: s for n, _, s in directory(wad)[[n for n, _, _ in directory(wad)].index("E1M1"):][:11]}
    assert stats["leaves"] == lumps["SSECTORS"] // 4
    assert stats["nodes"] == lumps["NODES"] // 28 + stats["leaves"]
    assert stats["references"] == lumps["SEGS"] // 12 == int(table.own_count.sum())
    assert table.subtree_count[0] == stats["references"]
    assert stats["splits"] > 0
    assert np.all(table.parent[1:] < np.arange(1, len(table)))


def _copy_with(tmp_path: Path, source: Path, patch) -> Path:
    raw = bytearray(source.read_bytes())
    patch(raw)
    out = tmp_path / "damaged.wad"
    out.write_bytes(bytes(raw))
    return out


def _entry(raw: bytearray, name: str, after: str = "E1M1") -> int:
    count, offset = struct.unpack_from("<ii", raw, 4)
    names = [struct.unpack_from("<ii8s", raw, offset + 16 * i)[2].rstrip(b"\0").decode()
             for i in range(count)]
    return offset + 16 * names.index(name, names.index(after))


def test_bad_lump_offset_names_the_lump(tmp_path):
    def patch(raw):
        struct.pack_into("<i", raw, _entry(raw, "SIDEDEFS"), len(raw) + 100)
    damaged = _copy_with(tmp_path, freedoom("freedoom1.wad"), patch)
    with pytest.raises(WadError, match="lump SIDEDEFS: .*beyond the end of the file"):
        load_document(f"{damaged}:E1M1")


def test_truncated_linedefs_names_the_lump(tmp_path):
    def patch(raw):
        pos = _entry(raw, "LINEDEFS")
        size = struct.unpack_from("<i", raw, pos + 4)[0]
        struct.pack_into("<i", raw, pos + 4, size - 5)
    damaged = _copy_with(tmp_path, freedoom("freedoom1.wad"), patch)
    with pytest.raises(WadError, match=r"lump E1M1/LINEDEFS: size \d+ is not a multiple"):
        load_document(f"{damaged}:E1M1")


def test_bad_vertex_index_names_lump_and_record(tmp_path):
    def patch(raw):
        offset = struct.unpack_from("<i", raw, _entry(raw, "LINEDEFS"))[0]
        struct.pack_into("<H", raw, offset + 14 * 3, 60000)  # linedef 3, v1
    damaged = _copy_with(tmp_path, freedoom("freedoom1.wad"), patch)
    with pytest.raises(WadError, match=r"E1M1/LINEDEFS: record 3: v1 60000 does not exist"):
        open_map(damaged, "E1M1")


def test_not_a_wad_and_unknown_map(tmp_path):
    bogus = tmp_path / "bogus.wad"
    bogus.write_bytes(b"PK\x03\x04" + bytes(20))
    with pytest.raises(WadError, match="not a WAD"):
        list_maps(bogus)
    with pytest.raises(WadError, match=r"no map 'MAP99' \(maps: E1M1"):
        open_map(freedoom("freedoom1.wad"), "MAP99")


def test_truncated_file_gives_a_named_error(tmp_path):
    wad = freedoom("freedoom1.wad")
    cut = tmp_path / "cut.wad"
    cut.write_bytes(wad.read_bytes()[:100_000])
    with pytest.raises(WadError, match="directory of .* lumps .* outside the file"):
        list_maps(cut)


def test_things_are_placed_in_the_sector_that_contains_them():
    """The sector found through the nodes contains the thing by an even-odd test on its lines."""
    from plugins.doom_wad.convert import point_sector

    data = open_map(freedoom("freedoom1.wad"), "E1M1")
    lines, sides, verts = data.linedefs, data.sidedefs, data.vertexes
    front = sides["sector"][lines["right"]].astype(int)
    back = np.where(lines["left"] != 0xFFFF, sides["sector"][np.minimum(lines["left"], len(sides) - 1)], -1)
    ax, ay = verts["x"][lines["v1"]].astype(float), verts["y"][lines["v1"]].astype(float)
    bx, by = verts["x"][lines["v2"]].astype(float), verts["y"][lines["v2"]].astype(float)
    checked = 0
    for thing in data.things:
        x, y = float(thing["x"]) + 0.25, float(thing["y"]) + 0.25  # off the integer grid of lines
        sector = point_sector(data, x, y)
        assert sector >= 0
        edges = (front == sector) ^ (back == sector)  # lines with the sector on one side only
        crosses = (ay[edges] > y) != (by[edges] > y)
        t = (y - ay[edges][crosses]) / (by[edges][crosses] - ay[edges][crosses])
        xs = ax[edges][crosses] + t * (bx[edges][crosses] - ax[edges][crosses])
        assert (xs > x).sum() % 2 == 1, f"thing at {x, y} is not inside sector {sector}"
        checked += 1
    assert checked == len(data.things)
