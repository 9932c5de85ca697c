"""The 3D view's still layer: items drawn first and rarely changed, kept as an image.

Under a software OpenGL every vertex costs the window's thread, and a live game's static boxes
are hundreds of thousands of them (20,000 boxes are 480,000 line vertices), while most paints
change something else: the movers and the tree overlay at the game's rate. :class:`StillLayer`
keeps such *still items* in a framebuffer object drawn again only when the camera, the view's
size or one of them changes; each paint copies its colour and depth into the view, then draws
the other items over it, depth-tested against it as if the still items had just been drawn.

That is the same frame as drawing every item for items drawn first anyway (the ground grid).
A game's static boxes (opaque lines) are drawn before the level's translucent surfaces rather
than after: where both are on screen, the boxes behind a surface show through it, as the tree
overlay does. The level's surfaces themselves are not still items: they are drawn after the
overlay, which must show through them. If the OpenGL in use cannot
copy between framebuffers the view draws every item on every paint (:attr:`StillLayer.failed`).
"""
from __future__ import annotations

from OpenGL.GL import (
    GL_COLOR_BUFFER_BIT,
    GL_DEPTH_BUFFER_BIT,
    GL_DRAW_FRAMEBUFFER,
    GL_FRAMEBUFFER,
    GL_NEAREST,
    GL_NO_ERROR,
    GL_READ_FRAMEBUFFER,
    glBindFramebuffer,
    glBlitFramebuffer,
    glGetError,
)
from PySide6.QtCore import QSize
from PySide6.QtOpenGL import QOpenGLFramebufferObject


class StillLayer:
    """Still items of one view and their cached image (see the module docstring)."""

    def __init__(self) -> None:
        self.items: list = []
        #: bumped by every change of a still item (its ``update()``: new data, visibility, GL
        #: options, transform)
        self.generation = 0
        #: times the image was drawn (a paint that only copies it does not count)
        self.renders = 0
        self.failed = False
        self._fbo: QOpenGLFramebufferObject | None = None
        self._key: tuple | None = None

    def add(self, item) -> None:
        """Make ``item`` a still item: drawn into the cached image, redrawn when it changes."""
        self.items.append(item)
        repaint = item.update

        def update(*args) -> None:
            self.generation += 1
            repaint(*args)

        item.update = update  # every pyqtgraph change of an item goes through update()

    def holds(self, item) -> bool:
        return any(item is still for still in self.items)

    @property
    def usable(self) -> bool:
        return bool(self.items) and not self.failed

    def draw(self, key: tuple, size: tuple[int, int], default_fbo: int, render) -> bool:
        """Copy the still items' image for ``key`` into ``default_fbo`` (drawing it first with
        ``render()`` when ``key`` or ``size`` changed); False if the copy failed (then
        :attr:`failed` is set and the caller draws everything itself)."""
        width, height = size
        if self._fbo is None or (self._fbo.width(), self._fbo.height()) != (width, height):
            self._fbo = QOpenGLFramebufferObject(
                QSize(width, height), QOpenGLFramebufferObject.Attachment.CombinedDepthStencil)
            self._key = None
        fbo = self._fbo
        full = (key, width, height)
        if full != self._key:
            fbo.bind()
            render()
            glBindFramebuffer(GL_FRAMEBUFFER, default_fbo)
            self._key = full
            self.renders += 1
        glGetError()  # what an item left behind is not the copy's
        glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo.handle())
        glBindFramebuffer(GL_DRAW_FRAMEBUFFER, default_fbo)
        glBlitFramebuffer(0, 0, width, height, 0, 0, width, height,
                          GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT, GL_NEAREST)
        glBindFramebuffer(GL_FRAMEBUFFER, default_fbo)
        if glGetError() != GL_NO_ERROR:
            self.failed = True
            return False
        return True
