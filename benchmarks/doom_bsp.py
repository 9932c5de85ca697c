"""Our Doom-style BSP (``bsp`` with ``space=2d, leaf=convex``) against the nodes a map ships with.

For each map: the shipped tree (NODES/SSECTORS/SEGS, :mod:`plugins.doom_wad.shipped_bsp`) and
ours built over the same linedefs (two-sided ones count once each way, as segs do), with the
figures a node builder is judged by: nodes (inner and leaves), leaves (subsectors), splits
(segments cut in two) and depth. Also our ``leaf=count`` 2D tree over the same objects, for
scale. The table goes to ``benchmarks/RESULTS.md`` between ``<!-- BEGIN generated: doom-bsp -->``
and ``<!-- END generated: doom-bsp -->`` (the rest of the file is kept). It measures; it asserts
nothing. Needs the Freedoom WADs (Debian package ``freedoom``).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.data import doom_dir  # noqa: E402
from benchmarks.report import write_section  # noqa: E402
from editor.model.loading import document_source, load_document  # noqa: E402
from plugins.bsp import BSPTree  # noqa: E402
from plugins.doom_wad.shipped_bsp import load_shipped_bsp  # noqa: E402

WADS = doom_dir()
DEFAULT_MAPS = ("freedoom1.wad:E1M1 freedoom1.wad:E1M2 freedoom1.wad:E1M3 freedoom1.wad:E2M1 "
                "freedoom2.wad:MAP01 freedoom2.wad:MAP02 freedoom2.wad:MAP10")


def measure(spec: str, max_depth: int, repeats: int) -> dict:
    wad, name = spec.split(":")
    path = Path(wad) if Path(wad).exists() else WADS / wad
    shipped = load_shipped_bsp(path, name)
    shipped.validate()
    scene = load_document(f"{path}:{name}")
    source = document_source(scene, spec)
    rows = {"map": spec, "linedefs": len(scene.segment_ids()), "shipped": shipped.stats()}
    for label, params in (("convex", {"space": "2d", "leaf": "convex", "max_depth": max_depth}),
                          ("count", {"space": "2d"})):
        tree = BSPTree(params)
        source.offer_exact_geometry(tree)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            tree.build(source.ids, source.lo, source.hi, source.dynamic)
            times.append((time.perf_counter() - start) * 1e3)
        tree.validate()
        stats = tree.stats()
        stats["build_ms"] = sorted(times)[len(times) // 2]
        rows[label] = stats
    return rows


def table(results: list[dict], max_depth: int) -> list[str]:
    lines = [
        f"Shipped: the map's own NODES. Ours: `bsp` with `space=2d, leaf=convex, "
        f"max_depth={max_depth}` over the linedefs (each two-sided linedef once each way, like "
        f"segs); `count`: `space=2d` defaults over linedefs and things. Nodes count inner nodes "
        f"and leaves; splits are segments cut in two; build is the median wall time.",
        "",
        "| map | linedefs | shipped nodes | ours nodes | shipped leaves | ours leaves | "
        "shipped splits | ours splits | shipped depth | ours depth | not convex | ours build ms | "
        "count nodes | count depth |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        s, c, n = r["shipped"], r["convex"], r["count"]
        lines.append(
            f"| {r['map']} | {r['linedefs']} | {s['nodes']} | {c['nodes']} | {s['leaves']} | "
            f"{c['leaves']} | {s['splits']} | {c['splits']} | {s['max_depth']} | {c['max_depth']} | "
            f"{c['nonconvex_leaves']} | {c['build_ms']:.1f} | {n['nodes']} | {n['max_depth']} |")
    if results:
        def ratio(key):
            return sum(r["convex"][key] / max(r["shipped"][key], 1) for r in results) / len(results)
        lines += ["", f"Mean ratio ours/shipped over {len(results)} maps: nodes "
                      f"{ratio('nodes'):.2f}, splits {ratio('splits'):.2f}, depth "
                      f"{ratio('max_depth'):.2f}."]
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--maps", default=DEFAULT_MAPS,
                        help=f"space-separated WAD:MAP (WAD relative to $PARTITION_STUDIO_DOOM, now {WADS})")
    parser.add_argument("--max-depth", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "RESULTS.md"))
    args = parser.parse_args(argv)
    results = []
    for spec in args.maps.split():
        r = measure(spec, args.max_depth, args.repeats)
        print(f"{spec}: shipped {r['shipped']}, ours nodes {r['convex']['nodes']} splits "
              f"{r['convex']['splits']} depth {r['convex']['max_depth']}", flush=True)
        results.append(r)
    write_section(Path(args.out), table(results, args.max_depth), "doom-bsp",
                  heading="## Doom BSP: ours against the shipped nodes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
