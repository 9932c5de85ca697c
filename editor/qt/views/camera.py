"""Camera maths shared by the 3D view and the tools: pixel rays and frustum corners.

Qt-free numpy, so the picking and frustum code is testable without a window.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from spatial.geometry import frustum_planes_from_camera


@dataclass
class CameraShot:
    """A perspective camera: where it is, where it looks, its lens and clip range."""

    position: np.ndarray
    forward: np.ndarray
    up: np.ndarray
    fov_y_deg: float = 60.0
    aspect: float = 16 / 9
    near: float = 1.0
    far: float = 1024.0

    def __post_init__(self) -> None:
        self.position = np.asarray(self.position, dtype=np.float64).reshape(3)
        f = np.asarray(self.forward, dtype=np.float64).reshape(3)
        n = np.linalg.norm(f)
        if not n:
            raise ValueError("camera forward direction must not be zero")
        self.forward = f / n
        up = np.asarray(self.up, dtype=np.float64).reshape(3)
        # re-orthogonalise up against forward (a camera looking straight down keeps a usable up)
        up = up - self.forward * (up @ self.forward)
        if np.linalg.norm(up) < 1e-9:
            up = np.array([0.0, 1.0, 0.0]) if abs(self.forward[1]) < 0.9 else np.array([1.0, 0.0, 0.0])
            up = up - self.forward * (up @ self.forward)
        self.up = up / np.linalg.norm(up)

    def planes(self) -> np.ndarray:
        """The six inward frustum planes (see :func:`spatial.geometry.frustum_planes_from_camera`)."""
        return frustum_planes_from_camera(self.position, self.forward, self.up, self.fov_y_deg,
                                          self.aspect, self.near, self.far)

    def corners(self) -> np.ndarray:
        """``(8, 3)``: near then far rectangle, each (-x -y, +x -y, +x +y, -x +y) in camera axes."""
        right = np.cross(self.forward, self.up)
        th = math.tan(math.radians(self.fov_y_deg) / 2)
        out = []
        for d in (self.near, self.far):
            h, w = d * th, d * th * self.aspect
            c = self.position + self.forward * d
            for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                out.append(c + right * (sx * w) + self.up * (sy * h))
        return np.array(out)

    def edge_lines(self) -> np.ndarray:
        """Line-list vertices ``(32, 3)``: the 12 frustum edges plus rays from the eye to the near corners."""
        c = self.corners()
        idx = [0, 1, 1, 2, 2, 3, 3, 0, 4, 5, 5, 6, 6, 7, 7, 4, 0, 4, 1, 5, 2, 6, 3, 7]
        lines = [c[i] for i in idx]
        for i in range(4):
            lines += [self.position, c[i]]
        return np.array(lines)


def pixel_ray(inverse_mvp: np.ndarray, x: float, y: float, width: float, height: float):
    """World ray ``(origin, unit direction)`` through widget pixel ``(x, y)``.

    ``inverse_mvp`` is the inverse of projection @ view (column-vector convention).
    """
    ndc_x = 2.0 * x / width - 1.0
    ndc_y = 1.0 - 2.0 * y / height
    near = inverse_mvp @ np.array([ndc_x, ndc_y, -1.0, 1.0])
    far = inverse_mvp @ np.array([ndc_x, ndc_y, 1.0, 1.0])
    near = near[:3] / near[3]
    far = far[:3] / far[3]
    d = far - near
    return near, d / np.linalg.norm(d)
