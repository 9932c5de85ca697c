"""Generated maps mixing good and broken brushes: every broken one survives load and save.

For each example a worldspawn holds boxes, some made degenerate at random (flat, open, too few
faces, planes that do not meet); after opening and saving as ``.map`` and as native ``.json``
and opening again, the brushes kept as written are exactly the broken ones, text for text, and
the good ones are all indexed.
"""
from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from editor.model.invalid_brushes import invalid_brushes
from editor.model.loading import open_level, save_level
from tests.invalid_brush_maps import box_faces

FUZZ = settings(max_examples=60, deadline=timedelta(seconds=10),
                suppress_health_check=[HealthCheck.too_slow])

KINDS = ("good", "flat", "open", "three_faces", "empty")


def _brush(kind: str, k: int) -> list[str]:
    x = 64 * k
    if kind == "flat":
        return box_faces((x, 0, 0), (x + 16, 16, 0))
    if kind == "open":
        return box_faces((x, 0, 0), (x + 16, 16, 16), skip=(k % 6,))
    if kind == "three_faces":
        return box_faces((x, 0, 0), (x + 16, 16, 16))[:3]
    if kind == "empty":
        return box_faces((x + 16, 0, 0), (x, 16, 16))
    return box_faces((x, 0, 0), (x + 16, 16, 16))


@FUZZ
@given(st.lists(st.sampled_from(KINDS), min_size=1, max_size=8))
def test_broken_brushes_survive_map_and_native_round_trips(kinds):
    lines = ['{', '"classname" "worldspawn"']
    blocks = []
    for k, kind in enumerate(kinds):
        block = "\n".join(["{ // " + kind, *_brush(kind, k), "}"])
        blocks.append((kind, block))
        lines.append(block)
    lines.append("}")
    broken = [block for kind, block in blocks if kind != "good"]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "level.map"
        path.write_text("\n".join(lines) + "\n")
        loaded = open_level(path)
        assert [r["text"] for r in invalid_brushes(loaded.document)] == broken
        assert len(loaded.document.brush_ids()) == len(kinds) - len(broken)
        for name in ("again.map", "again.json", "third.map"):
            save_level(loaded.document, Path(folder) / name)
            loaded = open_level(Path(folder) / name)
            assert [r["text"] for r in invalid_brushes(loaded.document)] == broken
