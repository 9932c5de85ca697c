"""GL items over the scene's big arrays that upload only the rows an edit rewrote.

pyqtgraph's items re-upload a whole array on every ``setData`` (and ``GLMeshItem`` first
re-derives it through ``MeshData``). The level's brush faces and edges are two big arrays in
which every brush owns a fixed range (:class:`~editor.qt.scene_geometry.SceneArrays`), patched
in place when an edit keeps a brush's vertex counts: these items write just those ranges into
their vertex buffers (``glBufferSubData``), and append new rows behind the old ones, in
buffers allocated with room to spare, so a new brush does not re-send the level either.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph.opengl as gl
from pyqtgraph.opengl.items.GLLinePlotItem import DirtyFlag as LineDirty

#: buffers are allocated this much larger than their data, so appended rows fit in place
HEADROOM = 1.25


class RangeUploads:
    """What one vertex buffer still needs: everything, or some row ranges of its array."""

    def __init__(self) -> None:
        self.everything = True
        self.ranges: list[tuple[int, int]] = []
        self.rows_uploaded = 0   # rows sent by the last upload that sent any (an edit's cost)

    def mark(self, ranges) -> None:
        """Rows ``ranges`` (``(start, stop)`` pairs) changed; ``None``: all of them."""
        if ranges is None:
            self.everything, self.ranges = True, []
        elif not self.everything:
            self.ranges.extend((int(a), int(b)) for a, b in ranges if b > a)

    def upload(self, vbo, array: np.ndarray | None) -> None:
        """Send what changed of ``array`` to ``vbo`` (the GL context is current)."""
        if array is None or not len(array):
            self.everything, self.ranges = False, []
            self.rows_uploaded = 0
            return
        if not vbo.isCreated():
            vbo.create()
            self.everything = True
        if not self.everything and not self.ranges:
            return  # nothing changed since the last frame
        vbo.bind()
        try:
            if self.everything or vbo.size() < array.nbytes:
                vbo.allocate(int(array.nbytes * HEADROOM))
                vbo.write(0, array, array.nbytes)
                self.rows_uploaded = len(array)
            else:
                row = array.strides[0]
                sent = 0
                for start, stop in _merged(self.ranges, len(array)):
                    vbo.write(start * row, np.ascontiguousarray(array[start:stop]), (stop - start) * row)
                    sent += stop - start
                self.rows_uploaded = sent
        finally:
            vbo.release()
        self.everything, self.ranges = False, []


def _merged(ranges, limit: int) -> list[tuple[int, int]]:
    """Sorted, non-overlapping ranges clipped to ``[0, limit)``."""
    out: list[list[int]] = []
    for a, b in sorted((max(a, 0), min(b, limit)) for a, b in ranges):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


class RangeLinesItem(gl.GLLinePlotItem):
    """A line list (``mode='lines'``) whose positions can be updated by row ranges.

    :meth:`set_lines` takes the array (the same object, patched, or a new one) and the rows
    that changed; the colour is one value for all lines.
    """

    def __init__(self, color, width: float = 1.0, gl_options="translucent") -> None:
        super().__init__(pos=np.zeros((0, 3), dtype=np.float32), color=color, width=width,
                         mode="lines", antialias=False, glOptions=gl_options)
        self.uploads = RangeUploads()

    def set_lines(self, pos: np.ndarray, ranges=None) -> None:
        """Draw ``pos`` ((2 E, 3) float32); ``ranges``: the rows that differ from what was
        drawn before (``None``: all of them)."""
        self.pos = pos if pos.dtype == np.float32 and pos.flags.c_contiguous else \
            np.ascontiguousarray(pos, dtype=np.float32)
        self.uploads.mark(ranges)
        self.update()

    def paint(self) -> None:
        if self.pos is None or not len(self.pos):
            return
        self.uploads.upload(self.m_vbo_position, self.pos)
        self.dirty_bits &= ~LineDirty.POSITION  # uploaded above, range by range
        super().paint()


class RangeTrianglesItem(gl.GLMeshItem):
    """An unindexed, per-vertex coloured triangle list updated by row ranges (no MeshData)."""

    def __init__(self, gl_options="translucent") -> None:
        super().__init__(vertexes=np.zeros((3, 3), dtype=np.float32), smooth=False,
                         drawEdges=False, computeNormals=False, glOptions=gl_options)
        self.vertexes: np.ndarray | None = None
        self.colors: np.ndarray | None = None
        self.position_uploads = RangeUploads()
        self.colour_uploads = RangeUploads()
        #: left out of the frames drawn while this is set (level of detail in motion), without
        #: the repaint a visibility change asks for
        self.skipped = False
        self.frames_drawn = 0

    def set_triangles(self, vertices: np.ndarray, colours: np.ndarray, ranges=None) -> None:
        """Draw ``vertices`` ((3 T, 3)) coloured by ``colours`` ((3 T, 4)), both float32;
        ``ranges``: the vertex rows that differ from what was drawn (``None``: all)."""
        self.vertexes = np.ascontiguousarray(vertices, dtype=np.float32)
        self.colors = np.ascontiguousarray(colours, dtype=np.float32)
        self.position_uploads.mark(ranges)
        self.colour_uploads.mark(ranges)
        self.update()

    def parseMeshData(self):  # noqa: N802 (pyqtgraph's name)
        # the arrays are set directly by set_triangles and uploaded by paint
        from pyqtgraph.opengl.items.GLMeshItem import DirtyFlag
        return DirtyFlag(0)

    def upload(self) -> None:
        """Send what changed of the arrays to the vertex buffers now (the GL context is
        current): a big level's first upload (50 MB for 50,000 brushes) then need not share a
        frame with its first drawing."""
        if self.vertexes is None or not len(self.vertexes):
            return
        self.position_uploads.upload(self.m_vbo_position, self.vertexes)
        self.colour_uploads.upload(self.m_vbo_color, self.colors)

    def paint(self) -> None:
        if self.vertexes is None or not len(self.vertexes) or self.skipped:
            return
        self.upload()
        super().paint()
        self.frames_drawn += 1
