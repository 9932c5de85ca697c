"""A live session's kernels loaded before a game connects (Qt-free).

A processing process is forked fresh for each listen, so the compiled kernels of its backend
(the build, the frame's update and pairs, the node table, the hotspot sums) are loaded from
the disk cache, or compiled when it is cold, on the first frames of the first game, which then
streams into a process already behind. :func:`warm_live_session` runs a tiny game through a
session of the same backend while the process waits for one, so the kernels are in place when
it connects.
"""
from __future__ import annotations

import copy
import json
from collections.abc import Callable

import numpy as np

from spatial.contract import SpatialIndex

from .frame_stream import encode_binary_frame
from .session import LiveSession

#: static boxes and movers of the tiny game (the kernels, not the figures, are the point)
WARM_STATIC, WARM_MOVERS, WARM_FRAMES = 48, 24, 4


def warm_live_session(make_index: Callable[[], SpatialIndex]) -> None:
    """Run a tiny game through a :class:`~.session.LiveSession` of ``make_index``'s backend:
    the stream parsed, the index built and stepped (moves, sleeping and waking objects), its
    node table, pairs and hotspot sums, and a frame's copies: what every game's first frames
    need, and no more (a cold cache compiles it all before the game's first frame is
    processed; the query tools' kernels compile when a ray or frustum is placed)."""
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
