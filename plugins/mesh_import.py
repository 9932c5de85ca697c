"""Triangle meshes (OBJ, PLY, glTF) as scenes of triangles.

OBJ files are read by :mod:`plugins._mesh_obj` (a bulk reader of our own that reports bad
indices and numbers at their line and column); PLY and glTF by ``trimesh``, whose vertices and
face indices are checked here before use (an index out of range names the face, a coordinate
that is not finite names the vertex).

Every triangle of the file becomes one object of the scene (and so one object of the spatial
index), in file order, held in bulk as a :class:`~editor.model.level_geometry.TriangleMesh`; faces with more than
three corners are fanned into triangles. The file is read with ``process=False`` so
no vertex is merged and no face dropped: the scene holds exactly the file's triangles. A glTF
scene graph is flattened with each node's transform; the node (or the OBJ object/group) a
triangle came from is its ``group``. The scene keeps the default backend like every other
level (a mesh file cannot store a choice); ``triangle_octree`` is the tree made for it.
"""
from __future__ import annotations

import os

import numpy as np

from spatial.errors import PartitionStudioError

from ._mesh_obj import read_obj

PATTERNS = ("*.obj", "*.ply", "*.gltf", "*.glb")


class MeshImportError(PartitionStudioError, ValueError):
    """A mesh file could not be read; the message names the file."""


def read_triangles(path: str | os.PathLike, progress=None,
                   warn=None) -> tuple[np.ndarray, list[str], np.ndarray]:
    """The triangles of a mesh file (``progress(fraction, text)``, optional, hears of each
    pass over an OBJ file; ``warn(line)``, optional, of what was skipped).

    Returns
    -------
    corners : ndarray, shape (T, 3, 3)
        Triangle corners in world space.
    groups : list of str
        Name of each mesh part (scene node) in the file.
    group_of : ndarray of int, shape (T,)
        Index into ``groups`` of each triangle.

    Raises
    ------
    MeshImportError
        When trimesh cannot read the file, it holds no triangle, a face index is out of range
        or a coordinate is not finite.
    spatial.errors.ParseError
        An OBJ file is malformed (at its line and column).
    """
    path = os.fspath(path)
    if path.lower().endswith(".obj"):
        try:
            corners, groups, group_of = read_obj(path, progress, warn)
        except OSError as exc:
            raise MeshImportError(f"{path}: cannot read: {exc.strerror or exc}") from None
        if not len(corners):
            raise MeshImportError(f"{path}: the file holds no triangle mesh")
        return corners, groups, group_of
    return _read_with_trimesh(path)


def _read_with_trimesh(path: str) -> tuple[np.ndarray, list[str], np.ndarray]:
    import trimesh

    try:
        loaded = trimesh.load(path, force="scene", process=False)
    except Exception as exc:  # trimesh raises many types for unreadable files
        raise MeshImportError(f"{path}: cannot read mesh: {type(exc).__name__}: {exc}") from None
    parts, groups, group_of = [], [], []
    for node in loaded.graph.nodes_geometry:
        transform, geometry_name = loaded.graph[node]
        geometry = loaded.geometry.get(geometry_name)
        if not isinstance(geometry, trimesh.Trimesh) or len(geometry.faces) == 0:
            continue
        vertices = np.asarray(geometry.vertices, dtype=np.float64)
        faces = np.asarray(geometry.faces, dtype=np.int64)
        _check_part(path, str(node), vertices, faces)
        vertices = vertices @ transform[:3, :3].T + transform[:3, 3]
        parts.append(vertices[faces])
        group_of.append(np.full(len(geometry.faces), len(groups), dtype=np.int64))
        groups.append(str(node))
    if not parts:
        raise MeshImportError(f"{path}: the file holds no triangle mesh")
    corners = np.concatenate(parts)
    bad = ~np.isfinite(corners).all(axis=(1, 2))
    if bad.any():
        raise MeshImportError(f"{path}: triangle {int(np.flatnonzero(bad)[0])} has a "
                              f"coordinate that is not finite")
    return corners, groups, np.concatenate(group_of)


def _check_part(path: str, node: str, vertices: np.ndarray, faces: np.ndarray) -> None:
    """Refuse a vertex that is not finite or a face index out of range, naming the record.

    Checked on the file's own numbers, before the node transform, so no arithmetic on a
    non-finite value prints a warning first.
    """
    part = f" (part '{node}')" if node and node != os.path.basename(path) else ""
    bad = ~np.isfinite(vertices).all(axis=1)
    if bad.any():
        raise MeshImportError(f"{path}: vertex {int(np.flatnonzero(bad)[0])}{part} has a "
                              "coordinate that is not finite")
    outside = ((faces < 0) | (faces >= len(vertices))).any(axis=1)
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        index = int(faces[row][(faces[row] < 0) | (faces[row] >= len(vertices))][0])
        raise MeshImportError(f"{path}: face {row}{part} uses vertex index {index}, out of range "
                              f"(the part has {len(vertices)} vertices)")


def load_mesh(path: str | os.PathLike, progress=None, warn=None):
    """Importer entry point: a scene with one triangle object per triangle of the file, held
    as one :class:`~editor.model.level_geometry.TriangleMesh` (arrays, not an object each);
    ``progress(fraction, text)``, optional, hears of each stage, ``warn(line)`` of what a
    file holds that a level cannot (an OBJ's loose edges)."""
    from editor.model.level_geometry import TriangleMesh
    from editor.model.scene import Edit, Scene, Settings

    report = progress or (lambda fraction, text: None)
    corners, groups, group_of = read_triangles(path, lambda f, text: report(0.9 * f, text), warn)
    report(0.9, f"Checking {len(corners):,} triangles")
    scene = Scene()
    first = scene.next_id
    scene.reserve_ids_below(first + len(corners))  # a range, not a list of millions of ids
    mesh = TriangleMesh(first, corners, groups, group_of)
    del corners  # the mesh holds its own contiguous copy when the reader's was not
    settings = Settings(metadata={"source_format": "mesh", "mesh": os.fspath(path),
                                  "groups": groups})
    scene.apply(Edit(meshes=(mesh,), settings=settings))
    return scene


def register(registry) -> None:
    """Built-in plugin entry point: the ``mesh`` importer."""
    registry.add_importer("mesh", PATTERNS, load_mesh,
                          "Triangle mesh (OBJ, PLY, glTF) through trimesh; one object a triangle")
