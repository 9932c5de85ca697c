"""A 2D view's paths of a level's walls and mesh triangle edges, made where the level is read.

``QPainterPath`` is a value type, safe to build off the window's thread, so a level opened in
the background brings them made (:func:`editor.qt.scene_geometry.prepare_geometry`): for a
2,000,000-triangle mesh (its 200,000 largest triangles drawn) projecting the edges and building
the three views' paths took about half a second on the window's thread.
"""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QPainterPath

from .items2d import segments_path


@dataclass
class LevelPaths:
    """The paths one 2D view strokes for a level's walls and mesh triangles."""

    one_sided: QPainterPath
    two_sided: QPainterPath
    triangles: QPainterPath


def level_paths(level, axes: tuple[int, int]) -> LevelPaths:
    """The paths of ``level`` (:class:`~editor.qt.level_arrays.LevelArrays`) projected on
    ``axes``."""
    return LevelPaths(one_sided=segments_path(level.wall_segments_2d(axes, two_sided=False)),
                      two_sided=segments_path(level.wall_segments_2d(axes, two_sided=True)),
                      triangles=segments_path(level.triangle_segments_2d(axes)))
