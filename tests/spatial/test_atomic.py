"""The atomic-write helper: whole replacement, kept permissions, nothing left behind on failure."""
from __future__ import annotations

import os

import pytest

from spatial import atomic
from spatial.atomic import (
    OutputPathError,
    atomic_write_bytes,
    atomic_write_text,
    atomic_writer,
    check_output_path,
)


@pytest.fixture(params=["unnamed", "named"])
def temp_kind(request, monkeypatch):
    """Run a test with O_TMPFILE (Linux) and with the portable named temporary file."""
    if request.param == "named":
        monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    elif not hasattr(os, "O_TMPFILE"):
        pytest.skip("this platform has no O_TMPFILE")
    return request.param


def test_writes_a_new_file_and_replaces_an_old_one(tmp_path, temp_kind):
    path = tmp_path / "out.txt"
    atomic_write_text(path, "first\n")
    assert path.read_text() == "first\n"
    atomic_write_bytes(path, b"second" * 300_000)  # several chunks
    assert path.read_bytes() == b"second" * 300_000
    assert os.listdir(tmp_path) == ["out.txt"]


def test_an_existing_files_permissions_are_kept(tmp_path, temp_kind):
    path = tmp_path / "out.txt"
    path.write_text("old")
    path.chmod(0o640)
    atomic_write_text(path, "new")
    assert (path.stat().st_mode & 0o777) == 0o640


def test_a_new_file_gets_the_umask_permissions(tmp_path, temp_kind):
    old = os.umask(0o027)
    try:
        atomic_write_text(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert ((tmp_path / "new.txt").stat().st_mode & 0o777) == 0o640


def test_a_failure_while_writing_keeps_the_old_file_and_leaves_no_temporary(tmp_path, temp_kind):
    path = tmp_path / "level.json"
    path.write_text("the previous version")
    with pytest.raises(RuntimeError, match="disk on fire"):
        with atomic_writer(path) as handle:
            handle.write("half of the new")
            raise RuntimeError("disk on fire")
    assert path.read_text() == "the previous version"
    assert os.listdir(tmp_path) == ["level.json"]


def test_a_failed_rename_keeps_the_old_file_and_leaves_no_temporary(tmp_path, temp_kind, monkeypatch):
    path = tmp_path / "level.json"
    path.write_text("the previous version")

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(atomic.os, "replace", refuse)
    with pytest.raises(OSError, match=r"level\.json: cannot write: Permission denied") as info:
        atomic_write_text(path, "new")
    assert ".tmp" not in str(info.value) and info.value.errno == 13
    assert path.read_text() == "the previous version"
    assert os.listdir(tmp_path) == ["level.json"]


def test_a_relative_path_in_the_current_folder(tmp_path, temp_kind, monkeypatch):
    monkeypatch.chdir(tmp_path)
    atomic_write_text("here.txt", "ok")
    assert (tmp_path / "here.txt").read_text() == "ok"


def test_check_output_path_refuses_what_cannot_or_should_not_be_written(tmp_path):
    existing = tmp_path / "there.json"
    existing.write_text("{}")
    with pytest.raises(OutputPathError, match=r"--out .*there\.json: exists \(pass --force"):
        check_output_path(existing, force=False, option="--out")
    assert check_output_path(existing, force=True) == existing
    with pytest.raises(OutputPathError, match="folder .*missing does not exist"):
        check_output_path(tmp_path / "missing" / "x.json")
    with pytest.raises(OutputPathError, match="is a folder"):
        check_output_path(tmp_path, force=True)
    assert check_output_path(tmp_path / "new.json") == tmp_path / "new.json"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_check_output_path_refuses_a_read_only_folder(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(OutputPathError, match="is not writable"):
            check_output_path(folder / "x.json")
    finally:
        folder.chmod(0o755)


@pytest.mark.skipif(not hasattr(os, "O_TMPFILE"), reason="this platform has no O_TMPFILE")
def test_an_unnamed_file_that_cannot_be_linked_is_copied_to_a_named_one(tmp_path, monkeypatch):
    path = tmp_path / "level.json"
    path.write_text("old")
    path.chmod(0o640)

    def refuse_link(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")
    monkeypatch.setattr(atomic.os, "link", refuse_link)
    atomic_write_bytes(path, b"new" * 500_000)
    assert path.read_bytes() == b"new" * 500_000
    assert (path.stat().st_mode & 0o777) == 0o640
    assert os.listdir(tmp_path) == ["level.json"]
