"""The floor an all-pairs answer is measured against: producing the sorted pair list itself.

Every implementation must at least hand over the overlapping pairs as sorted ``(a, b)`` rows,
``a < b``. The floor is the time ``np.sort`` takes over the ``int64`` keys ``a * N + b`` of the
already-known pair list, shuffled: putting the output in order with no search at all. Finding
the pairs can only add to it, so "within 10× of the floor" bounds how much an implementation
spends beyond writing its answer. The list is already free of duplicates, so ``np.unique``
would do the same work; numpy 2.x's ``np.unique`` takes a hashing path for integers that is
more than a hundred times slower than the sort here, which would make the floor meaningless.
"""
from __future__ import annotations

import numpy as np

from .timing import Cell, time_op


def pair_floor(pairs: np.ndarray, n: int, repeats: int, time_limit: float, seed: int = 0) -> Cell:
    """Time ``np.sort`` over the shuffled keys of ``pairs`` (an exact all-pairs answer)."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    keys = pairs[:, 0] * np.int64(n) + pairs[:, 1]
    np.random.default_rng(seed).shuffle(keys)
    cell = time_op(lambda _r: np.sort(keys), repeats, time_limit)
    cell.check = {"count": int(len(keys))}
    return cell
