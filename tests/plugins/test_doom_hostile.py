"""Damaged node builds and directories: refused with the lump and record named, never a loop."""
from __future__ import annotations

import struct

import pytest

from editor.model.loading import load_document
from plugins.doom_wad import WadError, wad
from plugins.doom_wad.convert import point_sector
from plugins.doom_wad.mapdata import open_map
from tests.plugins.test_doom_formats import square_room, write_wad


def _node(right: int, left: int) -> bytes:
    box = (128, 0, 0, 128)  # top, bottom, left, right
    return struct.pack("<hhhh4h4hHH", 64, 0, 0, 128, *box, *box, right, left)


def _room_with_nodes(nodes: list[bytes], subsectors=((4, 0),)) -> list[tuple[str, bytes]]:
    segs = b"".join(struct.pack("<HHhHhh", k, (k + 1) % 4, 0, k, 0, 0) for k in range(4))
    ssectors = b"".join(struct.pack("<HH", count, first) for count, first in subsectors)
    return square_room(False) + [("SEGS", segs), ("SSECTORS", ssectors),
                                 ("NODES", b"".join(nodes))]


SUB0 = 0x8000  # subsector 0


def test_a_well_formed_node_tree_places_the_thing(tmp_path):
    path = tmp_path / "ok.wad"
    write_wad(path, _room_with_nodes([_node(SUB0, SUB0), _node(0, SUB0)]))
    data = open_map(path)
    assert point_sector(data, 64.0, 64.0) == 0


@pytest.mark.parametrize("nodes, record, child, kind", [
    ([_node(0, SUB0)], 0, 0, "a cycle"),                                   # root is its own child
    ([_node(1, SUB0), _node(0, SUB0)], 0, 1, "a cycle"),                   # 1 -> 0 -> 1
    ([_node(SUB0, SUB0), _node(0, SUB0), _node(1, 0)], 1, 0, "shared child"),  # 0 under 1 and 2
])
def test_nodes_that_are_not_a_tree_are_refused_naming_lump_and_record(tmp_path, nodes, record,
                                                                      child, kind):
    path = tmp_path / "cycle.wad"
    write_wad(path, _room_with_nodes(nodes))
    with pytest.raises(WadError) as caught:
        load_document(f"{path}:MAP01")
    message = str(caught.value)
    assert message.startswith(f"{path}: lump MAP01/NODES: record {record}: child node {child} "
                              "is reached twice")
    assert kind in message and "\n" not in message


def test_a_subsector_without_segs_is_refused(tmp_path):
    path = tmp_path / "empty.wad"
    write_wad(path, _room_with_nodes([_node(SUB0, 0x8001)], subsectors=((4, 0), (0, 4))))
    with pytest.raises(WadError, match=r"lump MAP01/SSECTORS: record 1: a subsector needs at "
                                       "least one seg"):
        open_map(path)


def test_point_sector_is_bounded_even_on_an_unchecked_cycle(tmp_path):
    path = tmp_path / "ok.wad"
    write_wad(path, _room_with_nodes([_node(SUB0, SUB0), _node(0, SUB0)]))
    data = open_map(path)
    data.nodes["right"][0] = 1  # bypass the reader's check: 1 -> 0 -> 1 on the right side
    data.nodes["right"][1] = 0
    data.nodes["x"][:] = 0
    data.nodes["dx"][:] = 0
    data.nodes["dy"][:] = 1  # every point with x > 0 lies on the right
    with pytest.raises(WadError, match="MAP01/NODES: the walk from the root passes more than 2"):
        point_sector(data, 64.0, 64.0)


def test_a_directory_over_the_lump_limit_is_refused_before_reading_it(tmp_path, monkeypatch):
    path = tmp_path / "many.wad"
    write_wad(path, square_room(False))
    monkeypatch.setattr(wad, "MAX_LUMPS", 3)
    with pytest.raises(WadError, match=r"many.wad: directory of 6 lumps is more than the limit "
                                       "of 3"):
        open_map(path)


def test_a_declared_count_beyond_the_file_is_refused(tmp_path):
    path = tmp_path / "huge.wad"
    write_wad(path, square_room(False))
    raw = bytearray(path.read_bytes())
    struct.pack_into("<i", raw, 4, 2**31 - 1)
    path.write_bytes(bytes(raw))
    with pytest.raises(WadError, match="directory of 2147483647 lumps at offset .* lies outside "
                                       "the file"):
        open_map(path)
