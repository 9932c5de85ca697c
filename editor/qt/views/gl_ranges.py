"""GL items over the scene's big arrays that upload only the rows an edit rewrote, and draw
some rows apart from the others.

pyqtgraph's items re-upload a whole array on every ``setData`` (and ``GLMeshItem`` first
re-derives it through ``MeshData``). The level's brush faces and edges are two big arrays in
which every brush owns a fixed range (:class:`~editor.qt.scene_geometry.SceneArrays`), patched
in place when an edit keeps a brush's vertex counts: these items write just those ranges into
their vertex buffers (``glBufferSubData``), and append new rows behind the old ones, in
buffers allocated with room to spare, so a new brush does not re-send the level either.

Rows can be *split off* (:meth:`RangeTrianglesItem.split_off`): the item then leaves them out
and its :class:`SplitPart`, a second item placed later in the view's drawing order, draws
them from the same buffers. The 3D view splits off the selected brushes, so the others can
stay in its cached still image while a drag moves the selection: an edit that rewrote split
rows only asks the part to draw again (:attr:`RangeUploads.ranges` are still uploaded by
whichever of the two draws first).
"""
from __future__ import annotations

import bisect

import numpy as np
import pyqtgraph.opengl as gl
from OpenGL import GL
from pyqtgraph.opengl.GLGraphicsItem import GLGraphicsItem
from pyqtgraph.opengl.items.GLLinePlotItem import DirtyFlag as LineDirty
from PySide6.QtGui import QOpenGLContext

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
    """Sorted, non-overlapping ranges clipped to ``[0, limit)`` (touching ones joined)."""
    out: list[list[int]] = []
    for a, b in sorted((max(int(a), 0), min(int(b), limit)) for a, b in ranges):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def complement(ranges: list[tuple[int, int]], count: int) -> list[tuple[int, int]]:
    """The rows of ``[0, count)`` outside ``ranges`` (sorted, non-overlapping), as ranges."""
    out, at = [], 0
    for a, b in ranges:
        if a > at:
            out.append((at, min(a, count)))
        at = max(at, b)
    if at < count:
        out.append((at, count))
    return [(a, b) for a, b in out if b > a]


def _inside(ranges, outer: list[tuple[int, int]]) -> bool:
    """Whether every ``(start, stop)`` of ``ranges`` lies within one range of ``outer``
    (sorted, non-overlapping)."""
    starts = [a for a, _ in outer]
    for a, b in ranges:
        if b <= a:
            continue
        k = bisect.bisect_right(starts, a) - 1
        if k < 0 or b > outer[k][1]:
            return False
    return True


def _draw_rows(mode, ranges: list[tuple[int, int]]) -> None:
    """One draw call for the vertex ranges (the same primitives, in the same order, as
    drawing each range on its own)."""
    if len(ranges) == 1:
        GL.glDrawArrays(mode, ranges[0][0], ranges[0][1] - ranges[0][0])
    elif ranges:
        first = np.array([a for a, _ in ranges], dtype=np.int32)
        count = np.array([b - a for a, b in ranges], dtype=np.int32)
        GL.glMultiDrawArrays(mode, first, count, len(ranges))


def _mvp(item) -> np.ndarray:
    return np.array(item.mvpMatrix().data(), dtype=np.float32)


class SplitPart(GLGraphicsItem):
    """Draws the rows its owner split off (with the owner's buffers, GL state and shader), at
    its own place in the view's drawing order; shown while the owner is and has split rows."""

    def __init__(self, owner) -> None:
        super().__init__()
        self.owner = owner
        #: times it drew its rows
        self.frames_drawn = 0

    def visible(self) -> bool:
        return bool(self.owner.split) and self.owner.visible()

    def paint(self) -> None:
        if self.owner.paint_rows(self.owner.split):
            self.frames_drawn += 1


class SplitRows:
    """What both range items share: their split-off rows and their :class:`SplitPart`."""

    split: list[tuple[int, int]]
    part: SplitPart

    def _start_split(self) -> None:
        self.split = []
        self.part = SplitPart(self)
        #: set while a pass draws some of the item's rows only (a slice of the level image)
        self.only_rows: list[tuple[int, int]] | None = None

    def _rows(self) -> int:
        raise NotImplementedError

    def split_off(self, ranges) -> bool:
        """Leave rows ``ranges`` (``(start, stop)`` pairs) to :attr:`part`; True if that
        changed which rows each draws."""
        split = _merged(ranges, self._rows())
        if split == self.split:
            return False
        self.split = split
        self.update()  # type: ignore[attr-defined]  # a GLGraphicsItem method
        self.part.update()
        return True

    def _changed(self, ranges) -> None:
        """Ask for the paint showing rows ``ranges`` (None: all) again: only the part's, when
        they are all split off (the item's own rows did not change)."""
        if ranges is not None and self.split and _inside(ranges, self.split):
            self.part.update()
        else:
            self.update()  # type: ignore[attr-defined]

    def own_rows(self) -> list[tuple[int, int]]:
        """The rows this item draws itself (all but the split ones)."""
        return complement(self.split, self._rows())



class RangeLinesItem(SplitRows, gl.GLLinePlotItem):
    """A line list (``mode='lines'``) whose positions can be updated by row ranges.

    :meth:`set_lines` takes the array (the same object, patched, or a new one) and the rows
    that changed; the colour is one value for all lines.
    """

    def __init__(self, color, width: float = 1.0, gl_options="translucent") -> None:
        super().__init__(pos=np.zeros((0, 3), dtype=np.float32), color=color, width=width,
                         mode="lines", antialias=False, glOptions=gl_options)
        self.uploads = RangeUploads()
        self._start_split()

    def _rows(self) -> int:
        return 0 if self.pos is None else len(self.pos)

    def set_lines(self, pos: np.ndarray, ranges=None) -> None:
        """Draw ``pos`` ((2 E, 3) float32); ``ranges``: the rows that differ from what was
        drawn before (``None``: all of them)."""
        self.pos = pos if pos.dtype == np.float32 and pos.flags.c_contiguous else \
            np.ascontiguousarray(pos, dtype=np.float32)
        self.uploads.mark(ranges)
        self._changed(ranges)

    def paint(self) -> None:
        self.paint_rows(self.own_rows() if self.only_rows is None else self.only_rows)

    def paint_rows(self, ranges: list[tuple[int, int]]) -> bool:
        """Draw the lines of vertex rows ``ranges`` (uploading what changed first), as
        pyqtgraph's ``GLLinePlotItem`` draws all of them; False if there was nothing."""
        if self.pos is None or not len(self.pos):
            return False
        self.uploads.upload(self.m_vbo_position, self.pos)
        self.dirty_bits = LineDirty(0)  # uploaded above, range by range
        self.setupGLState()
        program = self.getShaderProgram()
        self.m_vbo_position.bind()
        GL.glVertexAttribPointer(0, 3, GL.GL_FLOAT, False, 0, None)
        self.m_vbo_position.release()
        GL.glVertexAttrib4f(1, *self.color)  # one colour for every line
        fmt = QOpenGLContext.currentContext().format()
        if not (fmt.profile() == fmt.OpenGLContextProfile.CoreProfile
                and not fmt.testOption(fmt.FormatOption.DeprecatedFunctions)):
            GL.glLineWidth(self.width)  # a core forward-compatible profile takes only 1.0
        GL.glEnableVertexAttribArray(0)
        try:
            with program:
                GL.glUniformMatrix4fv(GL.glGetUniformLocation(program, "u_mvp"), 1, False,
                                      _mvp(self))
                _draw_rows(GL.GL_LINES, ranges)
        finally:
            GL.glDisableVertexAttribArray(0)
            GL.glLineWidth(1.0)
        return True


class RangeTrianglesItem(SplitRows, gl.GLMeshItem):
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
        self._start_split()

    def _rows(self) -> int:
        return 0 if self.vertexes is None else len(self.vertexes)

    def set_triangles(self, vertices: np.ndarray, colours: np.ndarray, ranges=None) -> None:
        """Draw ``vertices`` ((3 T, 3)) coloured by ``colours`` ((3 T, 4)), both float32;
        ``ranges``: the vertex rows that differ from what was drawn (``None``: all)."""
        self.vertexes = np.ascontiguousarray(vertices, dtype=np.float32)
        self.colors = np.ascontiguousarray(colours, dtype=np.float32)
        self.position_uploads.mark(ranges)
        self.colour_uploads.mark(ranges)
        self._changed(ranges)

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

    def upload_next(self) -> bool:
        """Send what changed of one of the arrays (positions first, then colours) now; True
        if the other still waits. A big level's two buffers (22 and 29 MB for 50,000
        brushes) then go in two turns, not one."""
        if self.vertexes is None or not len(self.vertexes):
            return False
        pairs = ((self.position_uploads, self.m_vbo_position, self.vertexes),
                 (self.colour_uploads, self.m_vbo_color, self.colors))
        waiting = [(u, vbo, a) for u, vbo, a in pairs if u.everything or u.ranges]
        if waiting:
            uploads, vbo, array = waiting[0]
            uploads.upload(vbo, array)
        return len(waiting) > 1

    def paint(self) -> None:
        if self.paint_rows(self.own_rows() if self.only_rows is None else self.only_rows):
            self.frames_drawn += 1

    def paint_rows(self, ranges: list[tuple[int, int]]) -> bool:
        """Draw the triangles of vertex rows ``ranges`` (uploading what changed first), as
        pyqtgraph's ``GLMeshItem`` draws all of them; False if there was nothing, or the faces
        are left out now (:attr:`skipped`)."""
        if self.vertexes is None or not len(self.vertexes) or self.skipped:
            return False
        self.upload()
        self.setupGLState()
        shader = self.shader()
        context = QOpenGLContext.currentContext()
        program = shader.program(es2_compat=context.hasExtension(b"GL_ARB_ES2_compatibility"))
        enabled = []
        for name, vbo, size in (("a_position", self.m_vbo_position, 3),
                                ("a_color", self.m_vbo_color, 4)):
            if (loc := GL.glGetAttribLocation(program, name)) != -1:
                vbo.bind()
                GL.glVertexAttribPointer(loc, size, GL.GL_FLOAT, False, 0, None)
                vbo.release()
                enabled.append(loc)
        if (loc := GL.glGetAttribLocation(program, "a_normal")) != -1:
            GL.glVertexAttrib3f(loc, 0, 0, 1)  # no normals (computeNormals=False)
        for loc in enabled:
            GL.glEnableVertexAttribArray(loc)
        try:
            with shader:
                GL.glUniformMatrix4fv(GL.glGetUniformLocation(program, "u_mvp"), 1, False,
                                      _mvp(self))
                if (uloc := GL.glGetUniformLocation(program, "u_normal")) != -1:
                    normal = self.modelViewMatrix().normalMatrix()
                    GL.glUniformMatrix3fv(uloc, 1, False,
                                          np.array(normal.data(), dtype=np.float32))
                _draw_rows(GL.GL_TRIANGLES, ranges)
        finally:
            for loc in enabled:
                GL.glDisableVertexAttribArray(loc)
        return True
