"""How the main window cooperates with a first start's kernel warm-up (``editor.warmup``):
it waits for the warm-up's ``ready`` before building its index, and holds the statistics'
pair finding until the warm-up has finished."""
from __future__ import annotations

import pytest


class FakeWarmup:
    """Records the window's calls; ``done`` says whether the process has exited."""

    def __init__(self, window_ref):
        self.window_ref = window_ref
        self.waits = []
        self.done = False

    def wait_ready(self, timeout: float = 600.0) -> bool:
        window = self.window_ref()
        self.waits.append(window.document)  # the document the window had when it waited
        return True

    def finished(self) -> bool:
        return self.done

    def stop(self) -> None:
        self.done = True


@pytest.fixture
def window_and_warmup(qtbot, settings):
    """A main window whose kernel warm-up is a :class:`FakeWarmup`, before it opens a level."""
    from editor.qt.main_window import MainWindow
    window = MainWindow(settings=settings, use_gl=False)
    window.ask_save = lambda: "discard"
    qtbot.addWidget(window)
    warmup = FakeWarmup(lambda: window)
    window.kernel_warmup = warmup
    return window, warmup


def test_the_window_waits_for_ready_before_it_builds_an_index(window_and_warmup):
    window, warmup = window_and_warmup
    assert window.open_file(None, background=False)
    assert warmup.waits == [None], "waited once, before the document (and its index) existed"
    assert window.document is not None and window.document.index is not None


def test_statistics_wait_for_the_warm_up_to_finish(qtbot, window_and_warmup):
    window, warmup = window_and_warmup
    assert window.open_file(None, background=False)
    window.state.flush()
    window.show()
    qtbot.waitUntil(lambda: window.first_paint.done, timeout=20000)
    qtbot.wait(600)  # several polls of the warm-up go by
    assert window.stats_panel.on_hold, "still compiling elsewhere: no pair finding here yet"
    warmup.done = True
    qtbot.waitUntil(lambda: not window.stats_panel.on_hold, timeout=5000)
    qtbot.waitUntil(lambda: bool(window.stats_panel.stats), timeout=20000)
