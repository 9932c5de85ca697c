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
overlay does. The copy is exact (``glCopyImageSubData``, the images' bytes): a blit of the depth
buffer may round it (Mesa's llvmpipe moves some depths by one unit of the 24 bits), and a
surface coplanar with a copied one (a floor in the grid's plane, two brushes sharing a face)
would then win or lose its depth test the other way. Where that copy is refused the layer
blits (:attr:`StillLayer.exact`). If the OpenGL in use cannot copy between framebuffers at all
the view draws every item on every paint (:attr:`StillLayer.failed`).

A layer can sit on another (``base``): its image starts as a copy of the base's and its own
items are drawn over that, so a change of its items draws them again without the base's. The
3D view keeps two: the grid and a game's static boxes, and on them the level (the tree
overlay, walls, mesh, and every brush but the selected ones, in the order a full frame draws
them), so a drag, which changes only the selected brushes, draws just those over the copy.
"""
from __future__ import annotations

from collections.abc import Generator

from OpenGL.error import GLError, NullFunctionError
from OpenGL.GL import (
    GL_COLOR_ATTACHMENT0,
    GL_COLOR_BUFFER_BIT,
    GL_DEPTH_ATTACHMENT,
    GL_DEPTH_BUFFER_BIT,
    GL_DRAW_FRAMEBUFFER,
    GL_FRAMEBUFFER,
    GL_FRAMEBUFFER_ATTACHMENT_OBJECT_NAME,
    GL_FRAMEBUFFER_ATTACHMENT_OBJECT_TYPE,
    GL_NEAREST,
    GL_NO_ERROR,
    GL_READ_FRAMEBUFFER,
    GL_RENDERBUFFER,
    GL_TEXTURE,
    GL_TEXTURE_2D,
    glBindFramebuffer,
    glBlitFramebuffer,
    glCopyImageSubData,
    glGetError,
    glGetFramebufferAttachmentParameteriv,
)
from PySide6.QtCore import QSize
from PySide6.QtOpenGL import QOpenGLFramebufferObject


class StillLayer:
    """Still items of one view and their cached image (see the module docstring)."""

    def __init__(self, base: StillLayer | None = None) -> None:
        #: the layer whose image this one's starts from (None: a cleared image)
        self.base = base
        self.items: list = []
        #: bumped by every change of a still item (its ``update()``: new data, visibility, GL
        #: options, transform)
        self.generation = 0
        #: times the image was drawn (a paint that only copies it does not count)
        self.renders = 0
        self.failed = False
        #: whether images are copied byte for byte (None: not tried yet; False: blitted)
        self.exact: bool | None = None
        self._fbo: QOpenGLFramebufferObject | None = None
        self._key: tuple | None = None
        #: an image drawn a slice per paint (see :meth:`draw`): its buffer, key and generator
        self._back: QOpenGLFramebufferObject | None = None
        self._pending: tuple | None = None
        self._drawing: QOpenGLFramebufferObject | None = None

    def add(self, item) -> None:
        """Make ``item`` a still item: drawn into the cached image, redrawn when it changes."""
        self.items.append(item)
        repaint = item.update

        def update(*args) -> None:
            self.generation += 1
            repaint(*args)

        item.update = update  # every pyqtgraph change of an item goes through update()
        show = item.setVisible

        def set_visible(visible) -> None:
            if bool(visible) != bool(item.visible()):  # setting it again changes nothing
                show(visible)

        item.setVisible = set_visible

    def holds(self, item) -> bool:
        return any(item is still for still in self.items)

    @property
    def usable(self) -> bool:
        base = self.base
        return bool(self.items) and not self.failed and (base is None or base.usable)

    @property
    def handle(self) -> int:
        """The framebuffer object of the image being drawn, else of the one shown (0 before
        the first :meth:`draw`)."""
        fbo = self._drawing if self._drawing is not None else self._fbo
        return 0 if fbo is None else int(fbo.handle())

    @property
    def shown_key(self) -> tuple | None:
        """The key of the image :meth:`draw` copies now (None: none yet)."""
        return None if self._key is None else self._key[0]

    @property
    def pending(self) -> bool:
        """Whether an image drawn in slices is still being drawn (the one before is shown)."""
        return self._pending is not None

    def draw(self, key: tuple, size: tuple[int, int], default_fbo: int, render,
             in_slices: bool = False, reveal: bool = False) -> bool:
        """Copy the still items' image for ``key`` into ``default_fbo`` (drawing it first with
        ``render()``, into :attr:`handle`, when ``key`` or ``size`` changed); False if the copy
        failed, or ``render()`` returned False (a base layer's copy failed): then
        :attr:`failed` is set and the caller draws everything itself.

        ``render()`` may return a generator that draws the image in slices, yielding between
        them. With ``in_slices`` and an image of this size on show, each call draws one slice
        into a second buffer and copies the image before it, until the new one is whole
        (:attr:`pending` meanwhile); otherwise the slices are drawn at once. With ``reveal``
        the image is drawn in slices even with none on show, and each call copies the part
        drawn so far."""
        width, height = size
        if self._fbo is None or (self._fbo.width(), self._fbo.height()) != (width, height):
            self._fbo = _framebuffer(width, height)
            self._key = self._pending = None
        full = (key, width, height)
        if full != self._key:
            if not reveal and (not in_slices or self._key is None):
                self._pending = None
                drawn = self._render(self._fbo, default_fbo, render, at_once=True)
            else:
                drawn = self._render_slice(full, default_fbo, render)
                if drawn is None:  # more slices to come: the image before, or the part drawn
                    shown = self._back if reveal or self._key is None else self._fbo
                    return self._copy(shown, default_fbo, width, height)
            if drawn is False:
                self.failed = True
                return False
            self._key = full
            self.renders += 1
        return self._copy(self._fbo, default_fbo, width, height)

    def _render(self, fbo, default_fbo: int, render, at_once: bool):
        """``render()`` into ``fbo``: its result (a generator run to its end)."""
        self._drawing = fbo
        fbo.bind()
        try:
            drawn = render()
            if at_once and isinstance(drawn, Generator):
                drawn = _exhaust(drawn)
        finally:
            self._drawing = None
            glBindFramebuffer(GL_FRAMEBUFFER, default_fbo)
        return drawn

    def _render_slice(self, full: tuple, default_fbo: int, render) -> bool | None:
        """The next slice of the image for ``full`` into the second buffer; True when it is
        whole (it is then the one shown), None while slices remain, False on a failure."""
        width, height = full[1], full[2]
        if self._back is None or (self._back.width(), self._back.height()) != (width, height):
            self._back = _framebuffer(width, height)
            self._pending = None
        if self._pending is None or self._pending[0] != full:
            started = self._render(self._back, default_fbo, render, at_once=False)
            if not isinstance(started, Generator):
                self._pending = None
                return self._swap(started)
            self._pending = (full, started)
        self._drawing = self._back
        self._back.bind()
        try:
            next(self._pending[1])
            return None
        except StopIteration as end:
            self._pending = None
            return self._swap(end.value)
        finally:
            self._drawing = None
            glBindFramebuffer(GL_FRAMEBUFFER, default_fbo)

    def _swap(self, drawn) -> bool:
        """The second buffer's image, drawn whole, becomes the one shown."""
        if drawn is False:
            return False
        self._fbo, self._back = self._back, self._fbo
        return True

    def _copy(self, fbo, default_fbo: int, width: int, height: int) -> bool:
        glGetError()  # what an item left behind is not the copy's
        if self.exact is not False:
            self.exact = _copy_exact(fbo.handle(), default_fbo, width, height)
            glBindFramebuffer(GL_FRAMEBUFFER, default_fbo)
            if self.exact:
                return True
        try:
            glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo.handle())
            glBindFramebuffer(GL_DRAW_FRAMEBUFFER, default_fbo)
            glBlitFramebuffer(0, 0, width, height, 0, 0, width, height,
                              GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT, GL_NEAREST)
            failed = glGetError() != GL_NO_ERROR
        except GLError:
            failed = True
        glBindFramebuffer(GL_FRAMEBUFFER, default_fbo)
        if failed:
            self.failed = True
            return False
        return True


def _framebuffer(width: int, height: int) -> QOpenGLFramebufferObject:
    return QOpenGLFramebufferObject(QSize(width, height),
                                    QOpenGLFramebufferObject.Attachment.CombinedDepthStencil)


def _exhaust(slices: Generator):
    """Run a generator to its end; what it returned."""
    try:
        while True:
            next(slices)
    except StopIteration as end:
        return end.value


def _images(fbo: int) -> list[tuple[int, int]] | None:
    """``(target, name)`` of the colour and depth images of framebuffer ``fbo`` (None: one
    is neither a 2D texture nor a renderbuffer)."""
    glBindFramebuffer(GL_FRAMEBUFFER, fbo)
    out = []
    for attachment in (GL_COLOR_ATTACHMENT0, GL_DEPTH_ATTACHMENT):
        kind = int(glGetFramebufferAttachmentParameteriv(
            GL_FRAMEBUFFER, attachment, GL_FRAMEBUFFER_ATTACHMENT_OBJECT_TYPE))
        name = int(glGetFramebufferAttachmentParameteriv(
            GL_FRAMEBUFFER, attachment, GL_FRAMEBUFFER_ATTACHMENT_OBJECT_NAME))
        if kind == GL_TEXTURE:
            out.append((int(GL_TEXTURE_2D), name))
        elif kind == GL_RENDERBUFFER:
            out.append((int(GL_RENDERBUFFER), name))
        else:
            return None
    return out


def _copy_exact(source: int, target: int, width: int, height: int) -> bool:
    """Copy the colour and depth images of framebuffer ``source`` into ``target`` byte for
    byte; False where this OpenGL refuses (no ``glCopyImageSubData``, other formats, sample
    counts or image kinds)."""
    try:
        sources, targets = _images(source), _images(target)
        if sources is None or targets is None:
            return False
        for (src_target, src), (dst_target, dst) in zip(sources, targets):
            glCopyImageSubData(src, src_target, 0, 0, 0, 0, dst, dst_target, 0, 0, 0, 0,
                               width, height, 1)
        return glGetError() == GL_NO_ERROR
    except (GLError, NullFunctionError):
        glGetError()
        return False
