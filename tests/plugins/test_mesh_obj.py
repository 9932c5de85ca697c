"""The OBJ reader and the checks on PLY meshes: located errors, no warning, no traceback."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from plugins._mesh_obj import read_obj
from plugins.mesh_import import MeshImportError, read_triangles
from spatial.errors import ParseError

TRIANGLE = "v 0 0 0\nv 1 0 0\nv 0 1 0\n"
PLY_HEAD = ("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
            "property float z\nelement face 1\nproperty list uchar int vertex_indices\n"
            "end_header\n")


def _write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("body, line, column, message", [
    (TRIANGLE + "f 0 1 2\n", 4, 3, "vertex index 0 does not exist (OBJ indices start at 1)"),
    (TRIANGLE + "f 1 2 4\n", 4, 7, "vertex index 4 is out of range (the file has 3 vertices)"),
    (TRIANGLE + "f 1 2 -4\n", 4, 7, "vertex index -4 is out of range"),
    (TRIANGLE + "f 1/1/1 2//2 99999999999999999999999\n", 4, 14, "is out of range"),
    (TRIANGLE + "f 1 x 3\n", 4, 5, "face corner 'x' is not a vertex index"),
    ("v 0 0 0\nv inf 0 0\nv 0 1 0\nf 1 2 3\n", 2, 3, "vertex coordinate 'inf' is not finite"),
    ("v 0 0 0\nv 0 nan 0\nv 0 1 0\nf 1 2 3\n", 2, 5, "vertex coordinate 'nan' is not finite"),
    ("v 0 0 0\nv 0 0 1e999\nv 0 1 0\nf 1 2 3\n", 2, 7, "'1e999' is not finite"),
    ("v 0 0\n", 1, 6, "a vertex needs three coordinates, got 2"),
    ("v 0 0 " + "1" * 5000 + "\n", 1, 7, "is not finite"),
])
def test_bad_obj_input_is_one_located_line_and_no_warning(tmp_path, body, line, column, message):
    path = _write(tmp_path, "bad.obj", body)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ParseError) as caught:
            read_triangles(path)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert str(caught.value).startswith(f"{path}:{line}:{column}: ")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_obj_faces_with_slashes_negative_indices_polygons_and_groups(tmp_path):
    text = ("# a quad and a triangle\r\nv 0 0 0\r\nv 1 0 0\r\nv 1 1 0\r\nv 0 1 0\r\nvt 0 0\r\n"
            "o floor\r\nf 1/1 2/1 3/1 4/1\r\ng\tcap\r\nv 0 0 1 1.0\r\n f -1//1 -4//1 -3//1\r\n")
    path = _write(tmp_path, "mixed.obj", text)
    corners, groups, group_of = read_obj(path)
    assert groups == ["floor", "cap"]
    assert group_of.tolist() == [0, 0, 1]
    expected = [[(0, 0, 0), (1, 0, 0), (1, 1, 0)], [(0, 0, 0), (1, 1, 0), (0, 1, 0)],
                [(0, 0, 1), (1, 0, 0), (1, 1, 0)]]  # -1 is vertex 5, -4 vertex 2
    assert corners.tolist() == [[list(p) for p in tri] for tri in expected]


def test_obj_without_groups_names_the_file_and_matches_the_fast_path(tmp_path):
    rng = np.random.default_rng(3)
    vertices = rng.uniform(-10, 10, (50, 3))
    faces = rng.integers(1, 51, (80, 3))
    text = "".join(f"v {x!r} {y!r} {z!r}\n" for x, y, z in vertices.tolist())
    text += "".join(f"f {a} {b} {c}\n" for a, b, c in faces.tolist())
    corners, groups, group_of = read_obj(_write(tmp_path, "fast.obj", text))
    assert groups == ["fast.obj"] and (group_of == 0).all()
    np.testing.assert_array_equal(corners, vertices[faces - 1])
    # the same file with one face written as a polygon goes through the line-by-line pass
    slow, _, _ = read_obj(_write(tmp_path, "slow.obj", text + "f 1 2 3 4\n"))
    np.testing.assert_array_equal(slow[:80], corners)


def test_two_corner_faces_and_l_lines_are_skipped_with_one_warning(tmp_path):
    """Real exports hold edges among the faces (Blender reads them as loose edges)."""
    body = TRIANGLE + "v 1 1 0\nf 1 2 3\nl 1 2 3\nf 2 4\nf 1 2 4 3\nf 3/1 -1/2\nf 4\n"
    said = []
    corners, _, group_of = read_obj(_write(tmp_path, "edges.obj", body), warn=said.append)
    assert len(corners) == 3 and group_of.tolist() == [0, 0, 0]
    np.testing.assert_array_equal(corners[1], [(0, 0, 0), (1, 0, 0), (1, 1, 0)])
    assert len(said) == 1
    assert said[0].startswith(f"{tmp_path / 'edges.obj'}: skipped 4 loose edges")
    assert "3 faces with fewer than three corners and 1 'l' line; the first at line 6" in said[0]


def test_a_file_of_triangles_only_says_nothing(tmp_path):
    said = []
    read_obj(_write(tmp_path, "plain.obj", TRIANGLE + "f 1 2 3\n"), warn=said.append)
    assert said == []


def test_mixed_polygon_sizes_are_counted_per_face_not_by_total_tokens(tmp_path):
    """A quad and a two-corner face hold six corners, as two triangles would: the reader
    must not read them as two triangles."""
    body = TRIANGLE + "v 1 1 0\nf 1 2 4 3\nf 1 2\n"
    corners, _, _ = read_obj(_write(tmp_path, "six.obj", body))
    expected = [[(0, 0, 0), (1, 0, 0), (1, 1, 0)], [(0, 0, 0), (1, 1, 0), (0, 1, 0)]]
    assert corners.tolist() == [[list(p) for p in tri] for tri in expected]


def test_obj_quirks_of_real_exporters(tmp_path):
    """Tabs, comments, material and smoothing lines, backslash continuations, `v//vn`,
    `v/vt/vn`, negative indices, a hexagon and no newline at the end."""
    body = ("# exported\r\nmtllib level.mtl\r\no\tslab\r\nv\t0 0 0\r\nv 2 0 0\r\nv 2 1 0 \\\r\n"
            "\r\nv 1 2 0\r\nv 0 2 0\r\nv -1 1 0\r\nvn 0 0 1\r\nvt 0 0\r\nusemtl stone\r\ns 1\r\n"
            "f 1//1 2//1 3//1 \\\r\n 4//1 5//1 6//1\r\ns off\r\ng top\r\nf -6/1/1 -5/1/1 -4/1/1")
    path = _write(tmp_path, "quirks.obj", body)
    said = []
    corners, groups, group_of = read_obj(path, warn=said.append)
    assert said == []
    assert groups == ["slab", "top"] and group_of.tolist() == [0, 0, 0, 0, 1]
    hexagon = [(0, 0, 0), (2, 0, 0), (2, 1, 0), (1, 2, 0), (0, 2, 0), (-1, 1, 0)]
    fan = [[hexagon[0], hexagon[k], hexagon[k + 1]] for k in range(1, 5)]
    assert corners.tolist() == [[list(p) for p in tri] for tri in fan + [hexagon[:3]]]


def test_a_continued_line_keeps_later_line_numbers(tmp_path):
    body = "v 0 0 \\\n0\nv 1 0 0\nv 0 1 0\nf 1 2 \\\n3\nf 1 2 9\n"
    with pytest.raises(ParseError) as caught:
        read_obj(_write(tmp_path, "cont.obj", body))
    assert caught.value.line == 7


@pytest.mark.parametrize("face, vertex, message", [
    ("3 0 1 7", "0 1 0", "face 0 uses vertex index 7, out of range (the part has 3 vertices)"),
    ("3 0 1 2", "0 inf 0", "vertex 2 has a coordinate that is not finite"),
])
def test_bad_ply_input_names_the_record_without_warning(tmp_path, face, vertex, message):
    path = _write(tmp_path, "bad.ply", PLY_HEAD + f"0 0 0\n1 0 0\n{vertex}\n{face}\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(MeshImportError) as caught:
            read_triangles(path)
    assert str(caught.value) == f"{path}: {message}"


def test_mesh_triangles_equal_the_checked_constructor():
    from editor.model.level_geometry import Triangle, TriangleMesh
    from spatial.errors import GeometryError

    corners = np.arange(2 * 9, dtype=np.float64).reshape(2, 3, 3)
    mesh = TriangleMesh(7, corners, ["a", "b"], np.array([1, 0]))
    assert [mesh.triangle(i) for i in mesh.ids.tolist()] == [
        Triangle((0, 1, 2), (3, 4, 5), (6, 7, 8), "b"),
        Triangle((9, 10, 11), (12, 13, 14), (15, 16, 17), "a")]
    corners[1, 2, 0] = np.inf
    with pytest.raises(GeometryError, match="triangle 1"):
        TriangleMesh(0, corners, ["a"], np.array([0, 0]))


def test_an_obj_in_a_windows_code_page_is_read_with_one_warning(tmp_path):
    """Older exporters write material names in Latin-1 (assimp's regr01.obj: 'Terraindæk')."""
    path = tmp_path / "latin1.obj"
    path.write_bytes((TRIANGLE + "usemtl Terraind\xe6k\ng D\xe6k\nf 1 2 3\n").encode("latin-1"))
    said = []
    corners, groups, _ = read_obj(path, warn=said.append)
    assert len(corners) == 1 and groups == ["D\xe6k"]
    assert said == [f"{path}:4: not UTF-8 (byte 0xe6): read as Latin-1, so names may show other letters"]


def test_a_binary_file_named_obj_is_refused_at_its_first_bad_byte(tmp_path):
    path = tmp_path / "binary.obj"
    path.write_bytes(b"v 0 0 0\n\x00\xff\xfe")
    with pytest.raises(ParseError, match=r":2:2: not UTF-8 text: byte 0xff"):
        read_obj(path)


def _many_faces_obj(faces: int) -> str:
    rows = ["v 0 0 0", "v 1 0 0", "v 0 1 0", "v 1 1 0"]
    for k in range(faces):
        rows.append("f 1 2 3" if k % 3 else "f 1 2 4 3")
    return "\n".join(rows) + "\n"


def test_statements_are_counted_and_converted_a_slice_at_a_time(tmp_path, monkeypatch):
    """The editor reads files on a worker thread; one call into C over every statement held
    the interpreter lock (and so the window) for over half a second on 2,000,000 faces. Each
    numpy conversion sees at most a slice of statements."""
    import plugins._mesh_obj as obj

    path = _write(tmp_path, "many.obj", _many_faces_obj(1000))
    whole = read_obj(str(path))
    seen = []
    real = np.fromiter

    class _CountingNumpy:
        def __getattr__(self, name):
            return getattr(np, name)

        @staticmethod
        def fromiter(values, dtype, count=-1):
            seen.append(count)
            return real(values, dtype=dtype, count=count)

    monkeypatch.setattr(obj, "_STATEMENTS_PER_SLICE", 100)
    monkeypatch.setattr(obj, "np", _CountingNumpy())
    sliced = read_obj(str(path))
    assert seen and max(seen) <= 4 * 100, max(seen)  # four corners at most per statement
    for a, b in zip(whole, sliced):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("text", [
    "v 0 0 0\r\nv 1 0 0\r\n\r\nv 0 1 0\r\nf 1 2 3\r\n",
    "v 0 0 0\rv 1 0 0\rv 0 1 0\rf 1 2 3",
    "# head\n\n\nv 0 0 0\nv 1 0 0\n  v 0 1 0\nf 1 2 3\nf 1 \\\n 2 3\n",
])
def test_lines_split_in_pieces_are_the_lines_of_the_whole_text(text, monkeypatch):
    import plugins._mesh_obj as obj

    whole = obj._Lines(text)
    monkeypatch.setattr(obj, "_CHARS_PER_PIECE", 3)
    pieces = obj._Lines(text)
    assert list(obj._lines_of(text)) == text.splitlines()
    for name in ("vertex_rests", "vertex_lines", "face_rests", "face_lines", "group_marks"):
        assert getattr(pieces, name) == getattr(whole, name), name
