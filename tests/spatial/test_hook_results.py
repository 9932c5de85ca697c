"""Every built-in backend's hooks return the named result tuples of :mod:`spatial.contract`."""
from __future__ import annotations

import numpy as np
import pytest

from spatial.contract import FrustumHits, PairHits, RayHits, SlotHits
from spatial.geometry import frustum_planes_from_camera
from spatial.registry import default_registry
from spatial.scenegen import random_boxes

BACKENDS = sorted(default_registry().backends)


@pytest.mark.parametrize("name", BACKENDS)
def test_hooks_return_named_tuples(name):
    index = default_registry().backend(name)()
    ids, lo, hi = random_boxes(40, seed=3, world=50.0)
    index.build(ids, lo, hi, dynamic=np.arange(40) % 2 == 0)
    index._flush()
    for mode in ("all", "active"):
        found = index._pairs(mode)
        assert isinstance(found, PairHits)
        assert found.pairs.shape[1] == 2 and found.tests >= len(found.pairs)
    assert isinstance(index._query_box(lo[0], hi[0], False), SlotHits)
    assert isinstance(index._query_ray(lo[0] - 5.0, np.array([1.0, 0.0, 0.0]), np.inf, False), RayHits)
    planes = frustum_planes_from_camera((25.0, 25.0, -50.0), (0.0, 0.0, 1.0), (0.0, 1.0, 0.0),
                                        60.0, 1.0, 1.0, 200.0)
    assert isinstance(index._query_frustum(planes, False), FrustumHits)
