"""Coordinates beyond the supported range are refused by every backend, naming the row."""
from __future__ import annotations

import numpy as np
import pytest

from spatial.errors import GeometryError
from spatial.geometry import MAX_COORDINATE
from spatial.registry import default_registry

BACKENDS = sorted(default_registry().backends)


def _boxes(far: float):
    lo = np.array([[0.0, 0.0, 0.0], [5.0, 5.0, 5.0], [far, 0.0, 0.0]])
    return np.arange(3), lo, lo + 1.0


@pytest.mark.parametrize("name", BACKENDS)
def test_huge_finite_coordinates_are_refused_with_the_row(name):
    index = default_registry().backend(name)()
    ids, lo, hi = _boxes(1e308)
    with pytest.raises(GeometryError, match=r"\[2\]: coordinates must lie within ±1e\+12"):
        index.build(ids, lo, hi)
    index.build(ids[:2], lo[:2], hi[:2])
    with pytest.raises(GeometryError, match="must lie within"):
        index.insert([7], [[-1e300, 0, 0]], [[0, 0, 0]])
    index.validate()
    assert len(index) == 2


@pytest.mark.parametrize("name", BACKENDS)
def test_coordinates_at_the_edge_of_the_range_build_a_valid_index(name):
    index = default_registry().backend(name)()
    ids, lo, hi = _boxes(MAX_COORDINATE - 1.0)
    lo[0] = -MAX_COORDINATE
    index.build(ids, lo, hi)
    index.validate()
    assert sorted(index.query_box(lo[2], hi[2]).ids.tolist()) == [2]
    assert index.stats()["nodes"] >= 1


def test_non_finite_coordinates_keep_their_own_message():
    index = default_registry().backend("brute")()
    with pytest.raises(GeometryError, match="must be finite"):
        index.build([0], [[np.inf, 0, 0]], [[np.inf, 1, 1]])
