"""Batch ray queries shared by the backends whose trees the shared kernels read.

The BVH and the kd-tree both hand :mod:`spatial.kernels` a :class:`~spatial.kernels.TreeArrays`
view of their tree (``_tree()``); the closest hit of every ray then comes from one kernel.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import contract as C
from . import kernels as K

if TYPE_CHECKING:
    from .objects import ObjectTable


class ClosestRayQueries:
    """Mixin for a :class:`~spatial.contract.SpatialIndex` with a ``_tree()`` method returning
    :class:`~spatial.kernels.TreeArrays`: batched rays report their closest hit."""

    if TYPE_CHECKING:
        # What the SpatialIndex subclass this is mixed into provides (declared for the type
        # checker only: defining them here would shadow the backend's own in the MRO).
        objects: ObjectTable

        def _tree(self) -> K.TreeArrays: ...

    def _query_rays(self, origins, directions, max_t) -> C.RayBatchResult:
        slots, t, visited, tested = K.tree_query_rays_closest(self._tree(), self.objects.ids,
                                                              origins, directions, max_t)
        return C.RayBatchResult(K.slots_to_ids(self.objects.ids, slots), t, visited, tested)
