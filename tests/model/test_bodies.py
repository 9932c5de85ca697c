"""The bodies table: its declared columns are the ones it makes, rows are reused."""
from __future__ import annotations

import numpy as np

from editor.model.motion import Bodies


def test_declared_columns_are_exactly_the_columns_made():
    declared = {name for name, kind in Bodies.__annotations__.items() if kind == "np.ndarray"}
    assert declared == set(Bodies.FLOAT3) | set(Bodies.COLUMNS)
    bodies = Bodies(4)
    for name in declared:
        assert len(getattr(bodies, name)) == bodies.capacity


def test_released_rows_are_handed_out_again_lowest_first():
    bodies = Bodies()
    rows = bodies.allocate(3)
    assert rows.tolist() == [0, 1, 2] and rows.dtype == np.int64
    bodies.alive[rows] = True
    bodies.release(np.array([2, 0]))
    assert bodies.alive_rows().tolist() == [1]
    assert bodies.allocate(3).tolist() == [0, 2, 3]
