"""The level's bounds are walked once and kept until an edit changes objects."""
from __future__ import annotations

import numpy as np

from editor.model import SetSelection, Transform

from .helpers import small_scene


def test_bounds_are_kept_until_an_object_changes(monkeypatch):
    scene, stack, ids = small_scene()
    walks = []
    real = type(scene)._walk_bounds
    monkeypatch.setattr(type(scene), "_walk_bounds", lambda self: walks.append(1) or real(self))
    lo, hi = scene.bounds()
    lo[:] = 1e9  # a caller's copy: changing it changes nothing kept
    again_lo, again_hi = scene.bounds()
    assert len(walks) == 1 and again_lo.max() < 1e9
    stack.push(SetSelection([ids["floor"]]))  # a selection is not an object change
    scene.bounds()
    assert len(walks) == 1
    stack.push(Transform([ids["pillar"]], delta=(5000, 0, 0)))
    moved_lo, moved_hi = scene.bounds()
    assert len(walks) == 2 and moved_hi[0] > again_hi[0] + 4000
    stack.undo()
    np.testing.assert_array_equal(scene.bounds()[1], again_hi)
