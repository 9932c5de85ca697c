"""The libraries a user would otherwise pick, behind the benchmark's :class:`Adapter` face.

Each peer is used the way its documentation suggests for the job, single-threaded:

* ``ckdtree`` — ``scipy.spatial.cKDTree`` over box centres. It indexes points, so box overlap
  becomes a Chebyshev (``p=inf``) radius search plus an exact filter; see :class:`CKDTreePeer`.
* ``rtree`` — libspatialindex R*-tree through ``rtree.index.Index``, bulk-loaded from numpy
  arrays (its stream/bulk loader), batch queries with ``intersection_v``.
* ``boostree`` — Boost.Geometry R*-tree through ``boostree.RTree`` (the package's native batched
  API; its ``boostree.index`` module is the rtree-compatible subset over the same tree).
* ``fcl`` — python-fcl's ``DynamicAABBTreeCollisionManager``: one ``CollisionObject`` (a ``Box``)
  per object, ``setup()``, ``collide`` with a callback for pairs, ``update`` after moving.
* ``open3d`` — ``open3d.t.geometry.RaycastingScene`` (Embree) for rays only, each box as 12
  triangles.

A peer whose import fails is reported as unavailable with the import error.
"""
from __future__ import annotations

import numpy as np

from .adapters import Adapter, NotSupported


def _self_join_pairs(ids: np.ndarray, counts: np.ndarray, query_ids: np.ndarray) -> np.ndarray:
    """Pairs ``(a, b)``, ``a < b``, from a batch query of every object against the index.

    Each overlapping pair is found from both sides and every object finds itself; keeping
    ``a < b`` leaves each pair once.
    """
    a = np.repeat(query_ids, counts.astype(np.int64))
    keep = a < ids
    return np.stack([a[keep], ids[keep]], axis=1)


class CKDTreePeer(Adapter):
    """scipy's cKDTree over box centres (a point index used for boxes, the common workaround).

    Boxes ``a`` and ``b`` overlap only if ``|c_a - c_b|`` on every axis is at most
    ``h_a + h_b`` (centres ``c``, half-extents ``h``), so within Chebyshev distance
    ``2 * max(H_a, H_b)`` with ``H`` the largest half-extent of a box. Each box therefore searches
    radius ``2 * H_a`` and keeps partners no larger than itself (ties by index): every
    overlapping pair is found once, from its larger box, then the exact closed test filters the
    candidates. Box queries search ``H_q + H_max`` around the query centre and filter the same
    way. ``query_pairs`` with one radius ``2 * H_max`` would be simpler but returns far more
    candidates with mixed sizes. The tree is static: there is no update, a frame rebuilds it.
    """

    label = "ckdtree"
    rebuilds_per_frame = True

    def __init__(self):
        from scipy.spatial import cKDTree
        self._cKDTree = cKDTree
        self.tree = None

    def build(self, ids, lo, hi):
        self.ids, self.lo, self.hi = ids, lo, hi
        self.centres = (lo + hi) * 0.5
        self.half = (hi - lo).max(axis=1) * 0.5
        self.tree = self._cKDTree(self.centres)

    def pairs(self):
        neighbours = self.tree.query_ball_point(self.centres, 2.0 * self.half, p=np.inf,
                                                return_sorted=False)
        counts = np.fromiter((len(x) for x in neighbours), dtype=np.int64, count=len(neighbours))
        b = np.fromiter((j for x in neighbours for j in x), dtype=np.int64, count=int(counts.sum()))
        a = np.repeat(np.arange(len(neighbours), dtype=np.int64), counts)
        # The larger box of a pair finds it; equal sizes by index, so each pair once.
        owner = (self.half[b] < self.half[a]) | ((self.half[b] == self.half[a]) & (b > a))
        a, b = a[owner], b[owner]
        exact = ((self.lo[a] <= self.hi[b]) & (self.lo[b] <= self.hi[a])).all(axis=1)
        a, b = self.ids[a[exact]], self.ids[b[exact]]
        return np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1)

    def query_boxes(self, lo, hi):
        centres = (lo + hi) * 0.5
        radius = (hi - lo).max(axis=1) * 0.5 + self.half.max()
        neighbours = self.tree.query_ball_point(centres, radius, p=np.inf, return_sorted=False)
        counts = np.fromiter((len(x) for x in neighbours), dtype=np.int64, count=len(neighbours))
        b = np.fromiter((j for x in neighbours for j in x), dtype=np.int64, count=int(counts.sum()))
        q = np.repeat(np.arange(len(neighbours), dtype=np.int64), counts)
        exact = ((lo[q] <= self.hi[b]) & (self.lo[b] <= hi[q])).all(axis=1)
        return self.ids[b[exact]], np.bincount(q[exact], minlength=len(lo))

    def update(self, index, lo, hi):
        raise NotSupported("static tree: no incremental update (a frame rebuilds it)")

    def frame(self, index, lo, hi, origins=None, directions=None):
        new_lo, new_hi = self.lo.copy(), self.hi.copy()
        new_lo[index], new_hi[index] = lo, hi
        self.build(self.ids, new_lo, new_hi)
        pairs = self.pairs()
        self._frame_rays(origins, directions)
        return pairs

    def close(self):
        self.tree = None


class RtreePeer(Adapter):
    """libspatialindex's R*-tree via ``rtree``: bulk load from arrays, batch ``intersection_v``.

    Its intersection test is closed (touching boxes intersect), so no adjustment is needed.
    Moving an object is ``delete`` with its old box plus ``insert`` with the new one, one call
    each per object (the library has no batch update).
    """

    label = "rtree"

    def __init__(self):
        from rtree import index
        self._index = index
        self.tree = None

    def _properties(self):
        props = self._index.Property()
        props.dimension = 3
        return props

    def build(self, ids, lo, hi):
        self.ids = ids
        self.lo, self.hi = lo.copy(), hi.copy()
        # A tuple of arrays selects libspatialindex's bulk (STR packed) loader.
        self.tree = self._index.Index((ids, lo, hi), properties=self._properties())

    def pairs(self):
        found, counts = self.tree.intersection_v(self.lo, self.hi)
        return _self_join_pairs(found, counts, self.ids)

    def query_boxes(self, lo, hi):
        return self.tree.intersection_v(lo, hi)

    def update(self, index, lo, hi):
        tree, ids, old_lo, old_hi = self.tree, self.ids, self.lo, self.hi
        for k, i in enumerate(index.tolist()):
            tree.delete(int(ids[i]), (*old_lo[i], *old_hi[i]))
            tree.insert(int(ids[i]), (*lo[k], *hi[k]))
        old_lo[index], old_hi[index] = lo, hi

    def close(self):
        if self.tree is not None:
            self.tree.close()
        self.tree = None


class BoostreePeer(Adapter):
    """Boost.Geometry's R*-tree via ``boostree.RTree`` (packed build, batched queries).

    ``intersect`` uses Boost.Geometry's ``intersects``, closed for boxes. ``update`` is the
    package's batched upsert by id.
    """

    label = "boostree"

    def __init__(self):
        import boostree
        self._RTree = boostree.RTree
        self.tree = None

    def build(self, ids, lo, hi):
        self.ids = ids
        self.lo, self.hi = lo.copy(), hi.copy()
        self.tree = self._RTree.from_boxes(lo, hi, ids=ids)

    def pairs(self):
        found, counts = self.tree.intersect(self.lo, self.hi)
        return _self_join_pairs(found, counts, self.ids)

    def query_boxes(self, lo, hi):
        return self.tree.intersect(lo, hi)

    def update(self, index, lo, hi):
        self.tree.update(self.ids[index], lo, maxs=hi)
        self.lo[index], self.hi[index] = lo, hi

    def close(self):
        self.tree = None


class FclPeer(Adapter):
    """python-fcl's dynamic AABB tree broad phase (``DynamicAABBTreeCollisionManager``).

    Each object is a ``Box`` with its centre as translation, so FCL's AABB is the box itself and
    its (closed) AABB overlap test is ours. The collide callback receives fresh wrapper objects
    whose only identifying state is the translation, so the callback records translations and
    they are mapped back to ids by exact lookup after the traversal (the pair list a user
    needs). Every candidate costs one Python callback: that is python-fcl's API. Where two
    objects share a centre (real levels hold coincident things and walls) the lookup cannot
    tell them apart: ``ids_ambiguous`` is then set and its answers are checked by count only.
    """

    label = "fcl"
    ids_ambiguous = False

    def __init__(self):
        import fcl
        self._fcl = fcl
        self.manager = None

    def build(self, ids, lo, hi):
        fcl = self._fcl
        self.ids = ids
        self.centres = (lo + hi) * 0.5
        keys = np.ascontiguousarray(self.centres).view(np.dtype((np.void, 24))).ravel()
        self.ids_ambiguous = len(np.unique(keys)) < len(keys)
        sizes = hi - lo
        self.objects = [fcl.CollisionObject(fcl.Box(*s), fcl.Transform(c))
                        for s, c in zip(sizes.tolist(), self.centres.tolist())]
        self.manager = fcl.DynamicAABBTreeCollisionManager()
        self.manager.registerObjects(self.objects)
        self.manager.setup()

    def _lookup(self, translations: list) -> np.ndarray:
        """Indices of objects by exact centre (byte-wise key; each centre is a unique triple)."""
        keys = np.ascontiguousarray(self.centres).view(np.dtype((np.void, 24))).ravel()
        order = np.argsort(keys)
        wanted = np.ascontiguousarray(np.asarray(translations, dtype=np.float64).reshape(-1, 3))
        pos = np.searchsorted(keys[order], wanted.view(np.dtype((np.void, 24))).ravel())
        return order[np.minimum(pos, len(order) - 1)]

    def pairs(self):
        found: list = []

        def record(o1, o2, out):
            out.append(o1.getTranslation())
            out.append(o2.getTranslation())
            return False  # keep going: we want every pair

        self.manager.collide(found, record)
        if not found:
            return np.empty((0, 2), dtype=np.int64)
        idx = self.ids[self._lookup(found)].reshape(-1, 2)
        return np.sort(idx, axis=1)

    def query_boxes(self, lo, hi):
        fcl = self._fcl
        found_ids, counts = [], np.zeros(len(lo), dtype=np.int64)
        centres, sizes = ((lo + hi) * 0.5).tolist(), (hi - lo).tolist()
        for q in range(len(lo)):
            probe = fcl.CollisionObject(fcl.Box(*sizes[q]), fcl.Transform(centres[q]))
            hits: list = []
            self.manager.collide(probe, hits, _record_tree_side)
            counts[q] = len(hits)
            found_ids.extend(hits)
        if not found_ids:
            return np.empty(0, dtype=np.int64), counts
        return self.ids[self._lookup(found_ids)], counts

    def update(self, index, lo, hi):
        centres = (lo + hi) * 0.5
        moved = []
        for k, i in enumerate(index.tolist()):
            obj = self.objects[i]
            obj.setTranslation(centres[k])
            moved.append(obj)
        self.centres[index] = centres
        self.manager.update(moved)

    def close(self):
        self.manager = None
        self.objects = None


def _record_tree_side(o1, o2, out):
    """Collide-with-object callback: FCL passes the tree's object first, the probe second."""
    out.append(o1.getTranslation())
    return False


class Open3dPeer(Adapter):
    """Open3D's ``RaycastingScene`` (Embree BVH over triangles) for closest-hit rays only.

    Every box becomes 12 triangles in one mesh; the primitive id // 12 is the box. Embree works
    in float32 and reports the exit face when a ray starts inside a box (our ``t`` is then 0),
    so answers are compared only on rays whose origin lies outside every box. The scene commits
    its BVH lazily, at the first cast: ``ready`` (the end of ``build``) casts one ray.
    """

    label = "open3d"
    exact = False

    _CORNERS = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                         [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=bool)
    _TRIANGLES = np.array([[0, 2, 1], [0, 3, 2], [4, 5, 6], [4, 6, 7], [0, 1, 5], [0, 5, 4],
                           [2, 3, 7], [2, 7, 6], [1, 2, 6], [1, 6, 5], [0, 4, 7], [0, 7, 3]],
                          dtype=np.uint32)

    def __init__(self):
        import open3d
        self._o3d = open3d
        self.scene = None

    def build(self, ids, lo, hi):
        o3d = self._o3d
        self.ids = ids
        n = len(lo)
        vertices = np.where(self._CORNERS[None], hi[:, None, :], lo[:, None, :])
        triangles = self._TRIANGLES[None] + (8 * np.arange(n, dtype=np.uint32))[:, None, None]
        self.scene = o3d.t.geometry.RaycastingScene(nthreads=1)
        self.scene.add_triangles(
            o3d.core.Tensor(vertices.reshape(-1, 3).astype(np.float32)),
            o3d.core.Tensor(triangles.reshape(-1, 3)))

    def ready(self, lo, hi):
        """Cast one ray from the probe's centre: the scene commits its BVH at the first cast."""
        ray = np.zeros((1, 6), dtype=np.float32)
        ray[0, :3] = (lo[0] + hi[0]) * 0.5
        ray[0, 3] = 1.0
        self.scene.cast_rays(self._o3d.core.Tensor(ray), nthreads=1)

    def query_rays(self, origins, directions):
        o3d = self._o3d
        rays = np.concatenate([origins, directions], axis=1).astype(np.float32)
        answer = self.scene.cast_rays(o3d.core.Tensor(rays), nthreads=1)
        t = answer["t_hit"].numpy().astype(np.float64)
        prim = answer["primitive_ids"].numpy().astype(np.int64)
        hit = np.isfinite(t)
        ids = np.full(len(t), -1, dtype=np.int64)
        ids[hit] = self.ids[prim[hit] // 12]
        t[~hit] = np.inf
        return ids, t

    def close(self):
        self.scene = None


PEERS = {
    "ckdtree": CKDTreePeer,
    "rtree": RtreePeer,
    "boostree": BoostreePeer,
    "fcl": FclPeer,
    "open3d": Open3dPeer,
}


def peer_adapters(names) -> tuple[list[Adapter], dict[str, str]]:
    """Instantiate the named peers; those whose library cannot be imported go in the second
    dict with the reason (the report lists them as unavailable)."""
    adapters, unavailable = [], {}
    for name in names:
        if name not in PEERS:
            raise SystemExit(f"unknown peer '{name}' (known: {', '.join(PEERS)})")
        try:
            adapters.append(PEERS[name]())
        except Exception as exc:  # a missing optional library must not stop the run
            unavailable[name] = f"{type(exc).__name__}: {exc}"
    return adapters, unavailable
