"""Checks shared by the transforms of brushes and entities."""
from __future__ import annotations

import numpy as np

from spatial.errors import GeometryError


def checked_translation(delta) -> np.ndarray:
    """``delta`` as a float64 3-vector; raises ``GeometryError`` unless it is finite."""
    delta = np.asarray(delta, dtype=np.float64).reshape(3)
    if not np.isfinite(delta).all():
        raise GeometryError(f"translation must be finite, got {delta.tolist()}")
    return delta
