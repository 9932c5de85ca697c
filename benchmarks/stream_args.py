"""The options of benchmarks that replay the live-link benchmark's stream in one process.

``benchmarks/live_link.py``'s ``make_stream`` makes a game's stream: ``--static`` boxes in the
header, then ``--movers`` boxes moving every frame for ``--frames`` frames from ``--seed``.
The scripts that feed it to sessions of their own (``hot_cells.py``, ``grid_static_tables.py``)
take the same options, declared here once.
"""
from __future__ import annotations

import argparse


def add_stream_arguments(parser: argparse.ArgumentParser, movers: int, frames: int,
                         static: int = 20_000) -> None:
    """Add ``--movers``, ``--static``, ``--frames`` and ``--seed`` with these defaults."""
    parser.add_argument("--movers", type=int, default=movers, help="boxes moving every frame")
    parser.add_argument("--static", type=int, default=static, help="static boxes in the header")
    parser.add_argument("--frames", type=int, default=frames, help="frames of the stream")
    parser.add_argument("--seed", type=int, default=0, help="the stream's random seed")
