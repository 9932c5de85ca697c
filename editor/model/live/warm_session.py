"""A live session's kernels loaded before a game connects (Qt-free).

A processing process is forked fresh for each listen, so the compiled kernels of its backend
(the build, the frame's update and pairs, the node table, the hotspot sums, the queries the
display asks) are loaded from the disk cache, or compiled when it is cold, on the first frames
of the first game: the game then streams into a process that falls seconds behind at once (a
cold cache showed 8 frames in 6 s). :func:`warm_live_session` runs a tiny game through a
session of the same backend while the process waits for one, so the kernels are in place when
it connects.
"""
from __future__ import annotations

import copy
import json
from collections.abc import Callable

import numpy as np

from spatial.contract import SpatialIndex
from spatial.geometry import frustum_planes_from_camera

from ..query_answers import QueryAsk, answer
from .frame_stream import encode_binary_frame
from .session import LiveSession

#: static boxes and movers of the tiny game (the kernels, not the figures, are the point)
WARM_STATIC, WARM_MOVERS, WARM_FRAMES = 48, 24, 4


def warm_live_session(make_index: Callable[[], SpatialIndex]) -> None:
    """Run a tiny game through a :class:`~.session.LiveSession` of ``make_index``'s backend:
    the stream parsed, the index built and stepped (moves, sleeping and waking objects), its
    node table, pairs and hotspot sums, a frame's copies and the display's ray and frustum."""
    rng = np.random.default_rng(7)
    lo = rng.uniform(0, 200, (WARM_STATIC, 3))
    static = [[10_000 + k, *lo[k], *(lo[k] + 16)] for k in range(WARM_STATIC)]
    stream = [(json.dumps({"static": static}) + "\n").encode()]
    ids = np.arange(WARM_MOVERS)
    movers = rng.uniform(0, 200, (WARM_MOVERS, 3))
    for frame in range(1, WARM_FRAMES + 1):
        movers = movers + rng.normal(0, 3, movers.shape)
        awake = np.arange(WARM_MOVERS) % (frame + 1) != 0  # some fall asleep, some wake
        stream.append(encode_binary_frame(frame, ids, movers, movers + 8, awake))
    session = LiveSession(make_index(), "warm-up", capacity=WARM_FRAMES + 1)
    for chunk in stream:
        session.feed(chunk)
    session.finish()
    copy.deepcopy(session.index)
    session.hotspots.copy()
    planes = frustum_planes_from_camera(np.array([100.0, -200, 100]), np.array([0.0, 1, 0]),
                                        np.array([0.0, 0, 1]), 60.0, 1.5, 1.0, 800.0)
    answer(session.index, QueryAsk((np.array([-20.0, 100, 100]), np.array([1.0, 0, 0]), np.inf),
                                   planes))
