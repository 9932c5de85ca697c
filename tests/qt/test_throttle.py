"""Redraw throttling: a burst of requests is one redraw, and a pending one can be forced."""
from __future__ import annotations


def test_a_burst_of_requests_redraws_once(qtbot):
    from editor.qt.throttle import Throttle
    calls = []
    throttle = Throttle(lambda: calls.append(1))
    for _ in range(100):
        throttle.request()
    assert calls == [], "nothing runs inside the burst"
    qtbot.waitUntil(lambda: len(calls) == 1, timeout=2000)
    qtbot.wait(60)
    assert len(calls) == 1 and not throttle.pending()


def test_run_now_serves_the_pending_request(qtbot):
    from editor.qt.throttle import Throttle
    calls = []
    throttle = Throttle(lambda: calls.append(1), min_interval_ms=1000)
    throttle.run_now()
    throttle.request()  # within the interval: deferred
    assert throttle.pending()
    throttle.run_now()
    assert len(calls) == 2 and not throttle.pending()
    qtbot.wait(30)
    assert len(calls) == 2


def test_tune_dialog_table_shows_every_trial_when_done(qtbot, window):
    from .test_dialogs import _run, _tune_dialog
    dialog = _tune_dialog(qtbot, window)
    _run(qtbot, dialog)
    assert dialog.rows, "the search measured trials"
    # the last redraw ran when the search ended, not whenever the throttle got round to it
    assert not dialog._redraw.pending()
    assert dialog.table.rowCount() == len(dialog.best_rows())
    best = dialog.best_rows()[0]
    assert dialog.table.item(0, 0).text() == best.backend or best.backend in {
        dialog.table.item(0, c).text() for c in range(dialog.table.columnCount())}
