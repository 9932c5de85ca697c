"""The Qt editor GUI of Partition Studio (PySide6 + pyqtgraph + PyOpenGL).

Entry point: :func:`editor.qt.app_main.run_gui`. Nothing outside this package imports Qt.

On import this package protects the interpreter from a reference-count leak: with
PySide6-Essentials 6.12 on Python 3.11, every call of a ``void`` ``QPainter`` method
(``setPen``, ``drawLine``, ``drawPath``...) releases one reference to ``None`` it never took
(measured: 100 ``setPen`` calls lower ``sys.getrefcount(None)`` by 100), and some calls do
the same to ``True``/``False``. These singletons start with a few tens of thousands of
references, so painting a busy view for a few seconds would drive a count to zero and abort
the process ("none_dealloc", "bool_dealloc"). From Python 3.12 on they are immortal and
nothing needs doing; before that, each is given a reference count no session can exhaust.
"""
from __future__ import annotations

import ctypes
import sys


def _pin_singletons() -> None:
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return
    for singleton in (None, True, False):
        # ob_refcnt is the first field of every CPython object; id() is the object's address.
        refcount = ctypes.c_ssize_t.from_address(id(singleton))
        if refcount.value < (1 << 40):
            refcount.value += 1 << 40


_pin_singletons()
