"""Counting distinct overlapping pairs over buckets that may hold an object more than once.

A backend that stores an object in every leaf it reaches (the triangle octree, the quadtree)
finds a pair once in each leaf the two objects share, and its ``pairs`` removes the repeats by
sorting the whole list. To *count* the pairs without that list, :func:`count_bucket_pairs`
keeps a pair only in the first bucket (lowest index) that holds both objects: every object's
buckets are listed in ascending order (one CSR array the size of the buckets' entries), and
the first common entry of two lists is found by merging them, which stops at the latest at the
bucket being scanned. Memory is that of the buckets, not of the ~10^8 pairs of a big mesh.
"""
from __future__ import annotations

import numba
import numpy as np

from .kernels import list_pairs


@numba.njit(cache=True, nogil=True)
def object_buckets(bucket_start, bucket_count, items, n_slots):
    """Every slot's buckets in ascending order, CSR: ``(offsets, buckets)`` with the buckets
    of slot ``s`` at ``buckets[offsets[s]:offsets[s + 1]]``."""
    offsets = np.zeros(n_slots + 1, dtype=np.int64)
    for k in range(len(bucket_start)):
        for i in range(bucket_start[k], bucket_start[k] + bucket_count[k]):
            offsets[items[i] + 1] += 1
    for s in range(n_slots):
        offsets[s + 1] += offsets[s]
    fill = offsets[:n_slots].copy()
    buckets = np.empty(offsets[n_slots], dtype=np.int64)
    for k in range(len(bucket_start)):  # buckets in ascending order: each list comes sorted
        for i in range(bucket_start[k], bucket_start[k] + bucket_count[k]):
            s = items[i]
            buckets[fill[s]] = k
            fill[s] += 1
    return offsets, buckets


@numba.njit(cache=True, nogil=True, inline="always")
def _first_common(buckets, a0, a1, b0, b1):
    """The smallest bucket in both ascending lists ``buckets[a0:a1]`` and ``buckets[b0:b1]``
    (-1 if none)."""
    while a0 < a1 and b0 < b1:
        x = buckets[a0]
        y = buckets[b0]
        if x == y:
            return x
        if x < y:
            a0 += 1
        else:
            b0 += 1
    return -1


@numba.njit(cache=True, nogil=True)
def count_bucket_pairs(bucket_start, bucket_count, items, lo, hi, active, only_active):
    """Distinct overlapping pairs (closed box test) among the items of each bucket.

    Parameters
    ----------
    bucket_start, bucket_count : ndarray of int64
        Bucket ``k`` holds ``items[bucket_start[k]: bucket_start[k] + bucket_count[k]]``.
    items : ndarray of int64
        Object slots; a slot may appear in several buckets, at most once in each.
    lo, hi : ndarray, shape (slots, 3)
        The objects' boxes.
    active : ndarray of bool
        Per slot, dynamic and awake; with ``only_active`` a pair needs an active object.

    Returns
    -------
    count : int
        Pairs that overlap, each counted once however many buckets the two share.
    tests : ndarray of int64
        Per bucket, the candidate box tests made (a candidate in two buckets is tested in
        both, as a listing backend does).
    """
    n_slots = lo.shape[0]
    offsets, buckets = object_buckets(bucket_start, bucket_count, items, n_slots)
    tests = np.zeros(len(bucket_start), dtype=np.int64)
    found = np.empty((64, 2), dtype=np.int64)  # one bucket's pairs at a time
    count = 0
    for k in range(len(bucket_start)):
        found, m, tests[k] = list_pairs(items, bucket_start[k], bucket_count[k], lo, hi, active,
                                        only_active, found, 0)
        for r in range(m):
            a = found[r, 0]
            b = found[r, 1]
            if _first_common(buckets, offsets[a], offsets[a + 1], offsets[b], offsets[b + 1]) == k:
                count += 1
    return count, tests
