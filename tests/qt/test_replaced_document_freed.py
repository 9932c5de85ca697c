"""A level replaced by another is freed: its scene, index and undo history do not stay in
memory until the editor quits (the window's slots on a document's signals hold it, out of the
collector's sight, unless the document lets them go when it is replaced)."""
from __future__ import annotations

import gc
import weakref

from PySide6.QtCore import QCoreApplication, QEvent

from tests.conftest import shared_file


def test_a_replaced_level_is_freed(window, qtbot):
    window.ask_save = lambda: "discard"
    assert window.open_file(str(shared_file("quake/quake_id1_e1m1.map")), background=False)
    qtbot.wait(50)
    first = weakref.ref(window.document)
    first_scene = weakref.ref(window.document.scene)
    assert window.open_file(str(shared_file("quake/quake_id1_dm1.map")), background=False)
    qtbot.wait(50)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
    assert first() is None and first_scene() is None
