"""The tools wait, disabled, for their kernel family (``editor.qt.kernel_readiness``): a
stand-in warm-up process releases the families one at a time."""
from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from editor.warmup import FAMILIES


class _Warmup:
    """Says a family's line when the test sets its event; ends unfinished, as a warm-up
    process does, when the editor closes (``stop``)."""

    def __init__(self) -> None:
        self.release = {line: threading.Event() for line in FAMILIES.values()}
        self._ended = threading.Event()

    def wait_ready(self, timeout: float = 600.0, line: str = "ready") -> bool:
        deadline = time.monotonic() + timeout
        while not self.release[line].wait(0.02):
            if self._ended.is_set() or time.monotonic() >= deadline:
                return False
        return True

    def stop(self) -> None:
        self._ended.set()


@pytest.fixture
def gated(window, qtbot, monkeypatch):
    import editor.warmup
    from editor.qt.kernel_readiness import start_kernel_readiness

    warmup = _Warmup()
    monkeypatch.setattr(editor.warmup, "_RUNNING", {warmup})  # the editor's close ends it
    readiness = start_kernel_readiness(window, "octree", warmup)
    yield window, warmup, readiness
    warmup.stop()
    assert readiness.stop()


def _count_index_queries(monkeypatch, index) -> list[tuple[str, str]]:
    """Calls of the index's queries (the pick family's kernels), recorded with their thread
    and still run."""
    calls: list[tuple[str, str]] = []
    cls = type(index)
    for name in ("query_ray", "query_box", "query_point", "query_sphere", "query_frustum",
                 "query_rays", "query_boxes"):
        original = getattr(cls, name)

        def spy(self, *args, _name=name, _original=original, **kwargs):
            calls.append((_name, threading.current_thread().name))
            return _original(self, *args, **kwargs)
        monkeypatch.setattr(cls, name, spy)
    return calls


def _centre(doc, oid):
    lo, hi = doc.scene.bounds_of([oid])
    return ((lo[0] + hi[0]) / 2)[:2]


def _smallest_brush(doc):
    import numpy as np
    ids = doc.scene.brush_ids()
    lo, hi = doc.scene.bounds_of(ids)
    return ids[int(np.argmin((hi - lo).prod(axis=1)))]


def test_a_click_selects_before_any_family_is_loaded_without_an_index_query(gated, qtbot,
                                                                           monkeypatch):
    """Every family held back: Select is enabled and a click in the Top view selects the
    brush under it, answered from the object table, with no call of the index's queries (the
    kernels a first start is still compiling); the query tools, editing and Play wait."""
    from tests.qt.conftest import view_pos

    window, warmup, readiness = gated
    doc = window.document
    assert readiness.pending and not readiness.ready("pick") and not readiness.ready("edit")
    assert window.tool_actions["select"].isEnabled()
    assert not window.tool_actions["ray"].isEnabled()
    assert not window.tool_actions["brush"].isEnabled() and not window.act_play.isEnabled()
    calls = _count_index_queries(monkeypatch, doc.index)
    top = window.views2d["Top"]
    oid = _smallest_brush(doc)
    expected = window.state.pick(*_top_ray(doc, oid))  # the table's answer, checked below
    QTest.mouseClick(top.viewport(), Qt.LeftButton, Qt.NoModifier,
                     view_pos(top, *_centre(doc, oid)))
    qtbot.waitUntil(lambda: bool(doc.selection), timeout=5000)
    assert sorted(doc.selection) == [expected[0]]
    assert calls == [], f"the click called the index's queries: {calls}"
    # the index's own pick (its kernels loaded) names the same brush
    warmup.release["queries ready"].set()
    warmup.release["edits ready"].set()
    qtbot.waitUntil(lambda: readiness.ready("pick"), timeout=30000)
    assert window.state.pick(*_top_ray(doc, oid)) == expected
    assert ("query_ray", "MainThread") in calls


def _top_ray(doc, oid):
    import numpy as np
    u, v = _centre(doc, oid)
    return np.array([u, v, doc.scene.bounds()[1][2] + 1.0]), np.array([0.0, 0.0, -1.0])


def test_editing_is_enabled_first_then_the_query_tools_then_play(gated, qtbot):
    """The families are loaded in the warm-up's order (editing, picking, simulation): a nudge
    waits for editing, the query tools for picking, Play for the simulation."""
    from tests.qt.conftest import view_pos

    window, warmup, readiness = gated
    doc = window.document
    label = window.findChild(type(readiness.label), "kernel_readiness")
    assert label.isVisible() and "editing …" in label.text()
    top = window.views2d["Top"]
    oid = _smallest_brush(doc)
    QTest.mouseClick(top.viewport(), Qt.LeftButton, Qt.NoModifier,
                     view_pos(top, *_centre(doc, oid)))
    qtbot.waitUntil(lambda: bool(doc.selection), timeout=5000)
    picked = sorted(doc.selection)
    before = doc.scene.bounds_of(picked)[0].copy()
    top.setFocus()
    QTest.keyClick(top, Qt.Key_Right)  # editing is not loaded: the nudge waits
    qtbot.wait(50)
    assert (doc.scene.bounds_of(picked)[0] == before).all()
    assert not window.act_delete.isEnabled()

    warmup.release["edits ready"].set()
    qtbot.waitUntil(lambda: readiness.ready("edit"), timeout=30000)
    assert "editing ✓" in label.text() and "picking …" in label.text()
    assert window.tool_actions["brush"].isEnabled() and window.act_delete.isEnabled()
    assert not window.tool_actions["ray"].isEnabled()
    assert not window.tool_actions["entity"].isEnabled()  # it finds the floor with a query
    top.setFocus()
    QTest.keyClick(top, Qt.Key_Right)
    qtbot.waitUntil(lambda: bool((doc.scene.bounds_of(picked)[0] != before).any()),
                    timeout=5000)

    warmup.release["queries ready"].set()
    qtbot.waitUntil(lambda: readiness.ready("pick"), timeout=30000)
    assert window.tool_actions["ray"].isEnabled() and window.tool_actions["entity"].isEnabled()
    assert not window.act_play.isEnabled()  # the simulation still waits
    warmup.release["simulation ready"].set()
    qtbot.waitUntil(lambda: not readiness.pending, timeout=30000)
    assert window.act_play.isEnabled()
    assert not label.isVisible()


def test_tools_wait_again_while_a_first_switch_loads_its_remaining_kernels(gated, qtbot,
                                                                            monkeypatch):
    import editor.warmup as warmup_module

    window, warmup, readiness = gated
    for event in warmup.release.values():
        event.set()
    qtbot.waitUntil(lambda: not readiness.pending, timeout=30000)
    class Preparation:  # a first switch whose remaining kernels are still loading
        def cancel(self) -> None:
            preparing.discard(self)

    preparing = set()
    preparing.add(Preparation())
    monkeypatch.setattr(warmup_module, "_PREPARING", preparing)
    window.document.rebuild_finished.emit(1.0)
    qtbot.wait(50)
    assert readiness.pending and not window.tool_actions["ray"].isEnabled()
    assert not window.act_play.isEnabled()
    preparing.clear()
    qtbot.waitUntil(lambda: not readiness.pending, timeout=5000)
    assert window.tool_actions["ray"].isEnabled() and window.act_play.isEnabled()
