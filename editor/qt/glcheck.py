"""Whether this process can draw OpenGL (the 3D view) at all.

The ``offscreen`` platform has no GL, and creating a GL widget there can crash at teardown, so
the window asks first and shows a placeholder instead of the 3D view.
"""
from __future__ import annotations

_cached: tuple[bool, str] | None = None


def gl_status() -> tuple[bool, str]:
    """``(available, reason)``; needs a ``QGuiApplication``. Cached after the first call."""
    global _cached
    if _cached is not None:
        return _cached
    from PySide6.QtGui import QGuiApplication, QOffscreenSurface, QOpenGLContext

    platform = QGuiApplication.platformName()
    if platform in ("offscreen", "minimal"):
        _cached = (False, f"the '{platform}' Qt platform has no OpenGL")
        return _cached
    ctx = QOpenGLContext()
    if not ctx.create():
        _cached = (False, "no OpenGL context could be created")
        return _cached
    surface = QOffscreenSurface()
    surface.create()
    ok = ctx.makeCurrent(surface)
    if ok:
        ctx.doneCurrent()
    _cached = (ok, "" if ok else "an OpenGL context could not be made current")
    return _cached
