"""Query tools: cast a ray, place a frustum, inspect a node. They query the live index with
``trace=True`` so the views can show which nodes the query visited (and, for a frustum, culled)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from spatial.geometry import ray_box

from ..views.camera import CameraShot


class RayTool:
    """Drag in a 2D view (from the origin toward the direction) or click in the 3D view."""

    #: kernel families its gestures wait for (the index's traced queries)
    KERNELS = ("pick",)

    def __init__(self, state) -> None:
        self.state = state
        self.start: np.ndarray | None = None

    def drag_start(self, view, point, modifiers) -> None:
        start = view.to_world(point)
        if view.depth_axis == 2:  # drawn from above: at the ray height (shown in the panel)
            start[2] = self.state.top_view_ray_height(start[0], start[1])
        self.start = start

    def drag_move(self, view, point, modifiers) -> None:
        if self.start is None:
            return
        end = view.to_world(point, depth=self.start[view.depth_axis])
        view.set_preview(view.project(np.array([self.start, end])))

    def drag_end(self, view, point, modifiers) -> None:
        view.set_preview(None)
        if self.start is None:
            return
        start, self.start = self.start, None
        end = view.to_world(point, depth=start[view.depth_axis])
        if np.allclose(end, start):
            return
        self.state.cast_ray(start, end - start)

    def pick3d(self, origin, direction, modifiers) -> None:
        self.state.cast_ray(origin, direction)


class FrustumTool:
    """Drag from the eye toward what it looks at; the drag length is the far distance.
    In the 3D view a click takes the current camera."""

    #: kernel families its gestures wait for (the index's traced queries)
    KERNELS = ("pick",)

    def __init__(self, state, fov_y_deg: float = 60.0, aspect: float = 16 / 9) -> None:
        self.state = state
        self.start: np.ndarray | None = None
        self.fov_y_deg = fov_y_deg
        self.aspect = aspect
        self.camera_source: Callable[[], CameraShot] | None = None  # the 3D view's camera

    def drag_start(self, view, point, modifiers) -> None:
        start = view.to_world(point)
        if view.depth_axis == 2:  # the eye of a camera placed from above: at the ray height
            start[2] = self.state.top_view_ray_height(start[0], start[1])
        self.start = start

    def _shot(self, view, point):
        start = self.start
        if start is None:
            return None
        end = view.to_world(point, depth=start[view.depth_axis])
        forward = end - start
        far = float(np.linalg.norm(forward))
        if far < 1e-6:
            return None
        return CameraShot(start, forward, np.array([0.0, 0.0, 1.0]), self.fov_y_deg, self.aspect,
                          near=min(4.0, far / 4), far=far)

    def drag_move(self, view, point, modifiers) -> None:
        if self.start is None:
            return
        shot = self._shot(view, point)
        if shot is not None:
            view.set_preview(view.project(shot.edge_lines()), colour=(0.4, 1.0, 0.6))

    def drag_end(self, view, point, modifiers) -> None:
        view.set_preview(None)
        if self.start is None:
            return
        shot = self._shot(view, point)
        self.start = None
        if shot is not None:
            self.state.set_frustum(shot)

    def pick3d(self, origin, direction, modifiers) -> None:
        if self.camera_source is not None:
            self.state.set_frustum(self.camera_source())


class InspectTool:
    """Click a node (2D: the deepest drawn node under the cursor; 3D: the deepest drawn node the
    pick ray enters) to show it in the node inspector."""

    #: kernel families its gestures wait for (the index's traced queries)
    KERNELS = ("pick",)

    def __init__(self, state) -> None:
        self.state = state

    def click(self, view, point, modifiers) -> None:
        self.state.inspect_node(view.node_at(point))

    def pick3d(self, origin, direction, modifiers) -> None:
        geom, table = self.state.overlay, self.state.node_table
        if geom is None or geom.count == 0:
            self.state.inspect_node(-1)
            return
        hit, t = ray_box(np.asarray(origin), np.asarray(direction), geom.lo, geom.hi)
        idx = np.flatnonzero(hit)
        if not len(idx):
            self.state.inspect_node(-1)
            return
        rows = geom.rows[idx]
        order = np.lexsort((t[idx], -table.depth[rows]))
        self.state.inspect_node(int(rows[order[0]]))
