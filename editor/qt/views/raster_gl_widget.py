"""An OpenGL view that renders offscreen and paints its frame as an image, so the window it sits
in stays a plain raster window.

A ``QOpenGLWidget`` in a window makes Qt compose that whole top-level window through OpenGL on
every update of any widget in it. Under Mesa's software rasteriser (llvmpipe, the only OpenGL
of a machine without a GPU) that pass costs about 15 ms on an idle machine and 25-40 ms under
load for a 1600×1000 window, whatever changed: a status label's new figure, a panel's line, a
2D view's frame. Measured on the same window: 15 ms per label change with a ``QOpenGLWidget``,
0.7 ms without one. Here the scene renders into a framebuffer object of an offscreen surface,
the frame is read back (a copy, in software OpenGL) and drawn by ``QPainter`` like any other
widget's pixels: only this widget's own repaints cost OpenGL work.

:class:`RasterGLWidget` offers the part of ``QOpenGLWidget``'s interface a view uses
(``initializeGL``/``resizeGL``/``paintGL``, ``makeCurrent``, ``doneCurrent``, ``context``,
``isValid``, ``defaultFramebufferObject``, ``grabFramebuffer`` and the ``frameSwapped``
signal), so pyqtgraph's ``GLViewMixin`` runs on it unchanged (:class:`RasterGLView`).
"""
from __future__ import annotations

import math

from OpenGL.GL import glViewport
from pyqtgraph.opengl.GLViewWidget import GLViewMixin
from PySide6.QtCore import QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QImage, QOffscreenSurface, QOpenGLContext, QPainter, QSurfaceFormat
from PySide6.QtOpenGL import QOpenGLFramebufferObject, QOpenGLFramebufferObjectFormat
from PySide6.QtWidgets import QWidget


class RasterGLWidget(QWidget):
    """A widget drawing an OpenGL scene rendered offscreen (see the module docstring).

    Subclasses override :meth:`initializeGL`, :meth:`resizeGL` and :meth:`paintGL` as for a
    ``QOpenGLWidget``; :meth:`paintGL` runs with the widget's framebuffer bound and the
    viewport set to the whole of it. The context is shared with Qt's global share context.
    """

    #: emitted after a frame was rendered and painted (``QOpenGLWidget``'s name)
    frameSwapped = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        # the frame covers the widget: Qt need not clear or draw anything under it
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground, True)
        self._context: QOpenGLContext | None = None
        self._surface: QOffscreenSurface | None = None
        self._fbo: QOpenGLFramebufferObject | None = None
        self._initialized = False
        self._failed = False
        self._frame = QImage()

    # ------------------------------------------------------------------ QOpenGLWidget's API
    def initializeGL(self) -> None:  # noqa: N802 (Qt's name)
        """Called once, with the context current, before the first :meth:`resizeGL`."""

    def resizeGL(self, width: int, height: int) -> None:  # noqa: N802 (Qt's name)
        """Called when the framebuffer was made for a new size (device pixels)."""

    def paintGL(self) -> None:  # noqa: N802 (Qt's name)
        """Draw the scene into the bound framebuffer."""

    def isValid(self) -> bool:  # noqa: N802 (Qt's name)
        """The context exists and :meth:`initializeGL` has run."""
        return self._initialized

    def context(self) -> QOpenGLContext | None:
        return self._context

    def makeCurrent(self) -> None:  # noqa: N802 (Qt's name)
        """Make the context current with the widget's framebuffer bound (created if needed)."""
        if self._make_context():
            assert self._context is not None and self._surface is not None
            self._context.makeCurrent(self._surface)
            if self._fbo is not None:
                self._fbo.bind()

    def doneCurrent(self) -> None:  # noqa: N802 (Qt's name)
        if self._context is not None:
            self._context.doneCurrent()

    def defaultFramebufferObject(self) -> int:  # noqa: N802 (Qt's name)
        """The framebuffer :meth:`paintGL` draws into (0 before the first frame)."""
        return int(self._fbo.handle()) if self._fbo is not None else 0

    def grabFramebuffer(self) -> QImage:  # noqa: N802 (Qt's name)
        """Render a frame now and return it."""
        self._render()
        return QImage(self._frame)

    # ------------------------------------------------------------------ painting
    def paintEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        self._render()
        painter = QPainter(self)
        if self._frame.isNull():
            painter.fillRect(self.rect(), QColor(0, 0, 0))
        else:
            painter.drawImage(QRect(0, 0, self.width(), self.height()), self._frame)
        painter.end()
        self.frameSwapped.emit()

    def _device_size(self) -> QSize:
        ratio = self.devicePixelRatioF()
        return QSize(max(1, math.ceil(self.width() * ratio)), max(1, math.ceil(self.height() * ratio)))

    def _render(self) -> None:
        if not self._make_context():
            return
        size = self._device_size()
        resized = self._fbo is None or self._fbo.size() != size
        if resized:
            self.makeCurrent()  # the old framebuffer is deleted with the context current
            fmt = QOpenGLFramebufferObjectFormat()
            fmt.setAttachment(QOpenGLFramebufferObject.Attachment.CombinedDepthStencil)
            self._fbo = QOpenGLFramebufferObject(size, fmt)
        self.makeCurrent()
        if not self._initialized:
            self.initializeGL()
            self._initialized = True
        if resized:
            self.resizeGL(size.width(), size.height())
        glViewport(0, 0, size.width(), size.height())
        self.paintGL()
        assert self._fbo is not None
        frame = self._fbo.toImage(True)  # read back (a copy under software OpenGL), upright
        frame.setDevicePixelRatio(self.devicePixelRatioF())
        self._frame = frame

    def _make_context(self) -> bool:
        """Create the context and its offscreen surface once; False if OpenGL is missing."""
        if self._context is not None:
            return True
        if self._failed:
            return False
        context = QOpenGLContext()
        context.setFormat(QSurfaceFormat.defaultFormat())
        share = QOpenGLContext.globalShareContext()
        if share is not None:
            context.setShareContext(share)
        surface = QOffscreenSurface(self.screen())
        surface.setFormat(context.format())
        surface.create()
        if not context.create() or not surface.isValid():
            self._failed = True
            return False
        self._context, self._surface = context, surface
        return True


class RasterGLView(GLViewMixin, RasterGLWidget):
    """pyqtgraph's 3D view (``GLViewWidget``'s behaviour) on a :class:`RasterGLWidget`."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)

    def addItem(self, item) -> None:  # noqa: N802 (pyqtgraph's name)
        # an item added to a view already drawn initialises itself at once: with this view's
        # context current (a QOpenGLWidget's may be, this one's need not be)
        if self.isValid():
            self.makeCurrent()
        super().addItem(item)
