"""Screenshot mode for compare mode: ``--screenshot OUT.png --compare BACKEND [--report R]``.

The compare window opens beside the editor with A the backend on show (``--backend`` or the
document's) and B ``BACKEND``, waits for both sides to be measured, takes the editor window's
size and is saved instead of the editor. The report gains both sides: what each view drew and
the comparison's figures and ratios (the ``compare`` command's JSON). With ``--frames N`` the
sides show the timeline's frame N and the report adds that frame's figures of A and B.
"""
from __future__ import annotations

import time

from ..screenshot import ScreenshotError, settle

#: how long a screenshot waits for both sides to be measured
MEASURE_TIMEOUT_S = 600.0


def open_for_screenshot(window, backend: str):
    """The compare window of ``window`` with B ``backend``, measured and drawn."""
    from PySide6.QtWidgets import QApplication

    from spatial.registry import default_registry

    from .window import open_compare

    backends = default_registry().backends
    if backend not in backends:
        raise ScreenshotError(f"--compare: no backend named '{backend}'; registered: "
                              f"{', '.join(sorted(backends))}")
    compare = open_compare(window)
    compare.choose(window.document.index.name, backend)
    compare.resize(window.size())
    deadline = time.monotonic() + MEASURE_TIMEOUT_S
    while compare.comparison is None:
        if "failed" in compare.status.text():
            raise ScreenshotError(compare.status.text())
        if time.monotonic() > deadline:
            raise ScreenshotError("compare mode: the measurement did not finish in time")
        QApplication.processEvents()
        time.sleep(0.02)
    follower = compare.follower
    if follower is not None and follower.wanted()[1] >= 0:  # --frames: the sides show it
        while follower.figures is None:
            if time.monotonic() > deadline:
                raise ScreenshotError("compare mode: the sides did not reach the timeline's frame")
            QApplication.processEvents()
            time.sleep(0.02)
        compare.frame_figures.refresh_plot()
    compare.flush()
    settle(10)
    return compare


def _side_report(side, view) -> dict:
    geom = side.overlay
    return {"backend": side.index.name, "label": side.spec.label(),
            "nodes": int(geom.total) if geom is not None else 0,
            "nodes_drawn": int(geom.count) if geom is not None else 0,
            "overlay": side.overlay_settings.metric,
            "colour_range": [side.scale.vmin, side.scale.vmax],
            **{key: int(value) for key, value in view.drawn.items()}}


def compare_render_report(compare) -> dict:
    """What each side drew and the comparison itself (``{"a", "b", "comparison"}``)."""
    follower = compare.follower
    figures = follower.figures if follower is not None else None
    frame = None if figures is None else {
        "frame": figures.frame,
        **{key: {"a": a, "b": b, "ratio": ratio} for key, _, a, b, ratio in figures.rows()}}
    return {"a": _side_report(compare.sides[0], compare.views[0]),
            "b": _side_report(compare.sides[1], compare.views[1]),
            "comparison": compare.comparison.as_dict() if compare.comparison is not None else None,
            "frame": frame}
