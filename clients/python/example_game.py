"""A small game loop that streams its boxes to Partition Studio (see docs/live-link.md).

    python app.py listen --port 7878 --json > report.json &
    python clients/python/example_game.py --port 7878 --frames 300 --movers 1000

Movers bounce inside a level-like set of static boxes (a floor of tiles and pillars); every
fifth mover sleeps while it is slow. ``--save FILE`` writes the stream to a file instead.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ps_link  # noqa: E402  (the client sits beside this example)

SIZE = 2048.0


def level(count, rng):
    """Static boxes: floor tiles and pillars on a grid, ids from 1,000,000."""
    rows = []
    side = max(1, int(count ** 0.5))
    step = SIZE / side
    for k in range(count):
        x, y = (k % side) * step, (k // side % side) * step
        height = 8.0 if k % 4 else rng.uniform(64, 256)
        rows.append((1_000_000 + k, x, y, 0.0, x + step * 0.9, y + step * 0.9, height))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=ps_link.DEFAULT_PORT)
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--movers", type=int, default=1000)
    parser.add_argument("--static", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fps", type=float, default=0, help="frames a second (0: as fast as it can)")
    parser.add_argument("--text", action="store_true", help="send frame lines instead of binary frames")
    parser.add_argument("--save", metavar="FILE", help="write the stream to FILE instead of a socket")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    try:
        link = ps_link.save(args.save) if args.save else ps_link.connect(args.host, args.port)
    except ps_link.LinkError as exc:
        print(f"example_game: {exc}", file=sys.stderr)
        return 2
    link.set_static(level(args.static, rng))
    link.set_names({k: f"mover {k}" for k in range(min(args.movers, 100))})
    link.set_meta({"game": "example_game.py", "dt": 1 / 60})
    pos = [[rng.uniform(0, SIZE), rng.uniform(0, SIZE), rng.uniform(0, 128)] for _ in range(args.movers)]
    vel = [[rng.uniform(-6, 6), rng.uniform(-6, 6), 0.0] for _ in range(args.movers)]
    for frame in range(1, args.frames + 1):
        start = time.perf_counter()
        ids, boxes, awake = list(range(args.movers)), [], []
        for k in range(args.movers):
            p, v = pos[k], vel[k]
            for axis in range(3):
                p[axis] += v[axis]
                if not 0 <= p[axis] <= SIZE - 32:
                    v[axis] = -v[axis]
                    p[axis] = min(max(p[axis], 0.0), SIZE - 32)
            boxes += (p[0], p[1], p[2], p[0] + 32, p[1] + 32, p[2] + 56)
            awake.append(k % 5 != 0 or (frame // 60) % 2 == 0)
        if args.text:
            link.send_frame(frame, [(i, *boxes[6 * i:6 * i + 6], a) for i, a in zip(ids, awake)], binary=False)
        else:
            link.send_frame_arrays(frame, ids, boxes, awake)
        if args.fps > 0:
            time.sleep(max(0.0, 1 / args.fps - (time.perf_counter() - start)))
    link.close(timeout=30)
    print(f"example_game: {link.frames_sent} frames sent, {link.dropped} dropped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
