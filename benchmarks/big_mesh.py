#!/usr/bin/env python
"""Import and build of a big generated mesh (2 million triangles by default), split by phase.

A legitimate big level: a terrain grid written as an OBJ file in a temporary folder (never in
the repository), then

1. ``read``    — :func:`plugins.mesh_import.read_triangles` (the OBJ reader);
2. ``scene``   — the whole importer (:func:`editor.model.loading.load_document`: read again,
                 the corners held as one ``TriangleMesh`` of the scene, the scene edit);
3. ``objects`` — the index record: ids, boxes and triangle corners
                 (:func:`editor.model.loading.document_source`), read from the mesh's arrays;
4. ``offer``   — the exact triangles offered to the index (``IndexInput.offer_exact_geometry``);
5. ``build``   — the ``triangle_octree`` build (its worst-case memory check included);
6. ``pairs``   — candidate pairs in mode ``all`` (only with ``--pairs``: on a terrain of 2M
                 triangles that is about 10^8 pairs).

Each phase prints its wall time and the peak resident memory of the process so far. It
measures; it asserts nothing.

    python benchmarks/big_mesh.py                      # 2,000,000 triangles
    python benchmarks/big_mesh.py --side 317 --pairs   # 200,000 triangles, with pairs
    python benchmarks/big_mesh.py --quads --read-only  # the same terrain as exporters write it

``--quads`` writes the terrain as an exporter would: quads with ``v/vt/vn`` corners, normals and
texture coordinates, a two-corner face (an edge) every 1,000 faces, and no ``o`` line; the
reader then fans the quads into the same 2,000,000 triangles.
"""
from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def write_terrain(path: Path, side: int, quads: bool = False) -> int:
    """A ``side`` x ``side`` vertex grid with a rolling height: ``2 (side - 1)^2`` triangles
    (as triangles, or as quads written the way exporters do, see the module docstring)."""
    x, y = np.meshgrid(np.arange(side, dtype=float), np.arange(side, dtype=float))
    z = np.sin(x / 37.0) * np.cos(y / 23.0) * 40.0
    vertices = np.stack([x.ravel() * 8, y.ravel() * 8, z.ravel()], axis=1)
    index = np.arange(side * side).reshape(side, side) + 1
    a, b = index[:-1, :-1].ravel(), index[:-1, 1:].ravel()
    c, d = index[1:, 1:].ravel(), index[1:, :-1].ravel()
    if quads:
        return _write_quads(path, vertices, np.stack([a, b, c, d], axis=1))
    faces = np.concatenate([np.stack([a, b, c], axis=1), np.stack([a, c, d], axis=1)])
    with open(path, "w") as out:
        out.write("o terrain\n")
        out.write("".join(f"v {p[0]:.4f} {p[1]:.4f} {p[2]:.4f}\n" for p in vertices.tolist()))
        out.write("".join(f"f {f[0]} {f[1]} {f[2]}\n" for f in faces.tolist()))
    return len(faces)


def _write_quads(path: Path, vertices: np.ndarray, quads: np.ndarray) -> int:
    with open(path, "w") as out:
        out.write("# exported terrain\nmtllib terrain.mtl\n")
        out.write("".join(f"v {p[0]:.4f} {p[1]:.4f} {p[2]:.4f}\n" for p in vertices.tolist()))
        out.write("vt 0 0\nvn 0 0 1\nusemtl ground\ns 1\n")
        rows = []
        for k, (a, b, c, d) in enumerate(quads.tolist()):
            rows.append(f"f {a}/1/1 {b}/1/1 {c}/1/1 {d}/1/1\n")
            if k % 1000 == 999:
                rows.append(f"f {a}//1 {b}//1\n")
        out.write("".join(rows))
    return 2 * len(quads)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--side", type=int, default=1001,
                        help="vertices per grid side (default 1001: 2,000,000 triangles)")
    parser.add_argument("--pairs", action="store_true", help="also time candidate pairs")
    parser.add_argument("--quads", action="store_true",
                        help="write quads with v/vt/vn corners and some edges (see above)")
    parser.add_argument("--read-only", action="store_true", help="time the read phase alone")
    args = parser.parse_args(argv)

    from editor.model.loading import document_source, load_document
    from plugins.mesh_import import read_triangles
    from spatial.registry import default_registry

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "terrain.obj"
        triangles = write_terrain(path, args.side, args.quads)
        print(f"{triangles:,} triangles, {path.stat().st_size / 1e6:.0f} MB of OBJ")
        rows = []

        def phase(name, run):
            start = time.perf_counter()
            result = run()
            rows.append((name, time.perf_counter() - start, peak_mb()))
            print(f"{name:8s} {rows[-1][1]:7.1f} s   peak {rows[-1][2]:7.0f} MB", flush=True)
            return result

        phase("read", lambda: read_triangles(path, warn=print))
        if args.read_only:
            return 0
        scene = phase("scene", lambda: load_document(path))
        source = phase("objects", lambda: document_source(scene, str(path)))
        tree = default_registry().backend("triangle_octree")()
        phase("offer", lambda: source.offer_exact_geometry(tree))
        phase("build", lambda: tree.build(source.ids, source.lo, source.hi, source.dynamic))
        if args.pairs:
            phase("pairs", lambda: tree.pairs("all"))
    print(f"import + build (scene, objects, offer, build): "
          f"{sum(r[1] for r in rows if r[0] in ('scene', 'objects', 'offer', 'build')):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
