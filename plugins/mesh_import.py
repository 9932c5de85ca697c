"""Triangle meshes (OBJ, PLY, glTF) as scenes of triangles, read with ``trimesh``.

Every triangle of the file becomes one :class:`~editor.model.level_geometry.Triangle` object
of the scene (and so one object of the spatial index), in file order; faces with more than
three corners are fanned into triangles by trimesh. The file is read with ``process=False`` so
no vertex is merged and no face dropped: the scene holds exactly the file's triangles. A glTF
scene graph is flattened with each node's transform; the node (or the OBJ object/group) a
triangle came from is its ``group``. The scene keeps the default backend like every other
level (a mesh file cannot store a choice); ``triangle_octree`` is the tree made for it.
"""
from __future__ import annotations

import os

import numpy as np

from spatial.errors import PartitionStudioError

PATTERNS = ("*.obj", "*.ply", "*.gltf", "*.glb")


class MeshImportError(PartitionStudioError, ValueError):
    """A mesh file could not be read; the message names the file."""


def read_triangles(path: str | os.PathLike) -> tuple[np.ndarray, list[str], np.ndarray]:
    """The triangles of a mesh file.

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
        When trimesh cannot read the file, it holds no triangle, or a coordinate is not finite.
    """
    import trimesh

    path = os.fspath(path)
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
        vertices = vertices @ transform[:3, :3].T + transform[:3, 3]
        parts.append(vertices[np.asarray(geometry.faces, dtype=np.int64)])
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


def load_mesh(path: str | os.PathLike):
    """Importer entry point: a scene with one triangle object per triangle of the file."""
    from editor.model.level_geometry import Triangle
    from editor.model.scene import Edit, Scene, Settings

    corners, groups, group_of = read_triangles(path)
    scene = Scene()
    ids = scene.allocate_ids(len(corners))
    objects = {oid: Triangle(tuple(c[0]), tuple(c[1]), tuple(c[2]), groups[g])
               for oid, c, g in zip(ids, corners.tolist(), group_of.tolist())}
    settings = Settings(metadata={"source_format": "mesh", "mesh": os.fspath(path),
                                  "groups": groups})
    scene.apply(Edit(objects=objects, settings=settings))
    return scene


def register(registry) -> None:
    """Built-in plugin entry point: the ``mesh`` importer."""
    registry.add_importer("mesh", PATTERNS, load_mesh,
                          "Triangle mesh (OBJ, PLY, glTF) through trimesh; one object a triangle")
