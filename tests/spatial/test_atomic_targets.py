"""Atomic writes through symlinks, and refusal of targets that are not regular files."""
from __future__ import annotations

import os
import stat

import pytest

from spatial import atomic
from spatial.atomic import (
    OutputPathError,
    atomic_write_text,
    check_output_path,
    refuse_special,
    write_target,
)


def test_a_symlink_is_written_through_and_kept(tmp_path):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = real_dir / "level.json"
    real.write_text("old\n")
    real.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    atomic_write_text(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new\n" and stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in real_dir.iterdir()) == ["level.json"]  # no temporary left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "real"]


def test_a_dangling_symlink_creates_the_file_it_names(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "made.json")
    with pytest.raises(OutputPathError, match="exists"):
        check_output_path(link)
    atomic_write_text(link, "x\n")
    assert link.is_symlink() and (tmp_path / "made.json").read_text() == "x\n"


@pytest.mark.parametrize("force", [False, True])
def test_a_fifo_is_refused_with_or_without_force(tmp_path, force):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(OutputPathError, match=r"pipe\.json: is a named pipe \(FIFO\)"):
        check_output_path(fifo, force=force)
    link = tmp_path / "to_pipe.json"
    link.symlink_to(fifo)
    with pytest.raises(OutputPathError, match="to_pipe.json: is a named pipe"):
        check_output_path(link, force=force)
    with pytest.raises(OutputPathError, match="is a named pipe"):
        atomic_write_text(link, "x")  # the editor's save refuses it too
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and link.is_symlink()


def test_a_folder_through_a_link_is_refused(tmp_path):
    link = tmp_path / "dir_link"
    link.symlink_to(tmp_path)
    with pytest.raises(OutputPathError, match="is a folder"):
        check_output_path(link, force=True)


def test_a_device_is_refused_by_its_mode():
    # the check itself, on a character device's st_mode: no device is ever opened
    with pytest.raises(OutputPathError, match="out.map: is a character device"):
        refuse_special(stat.S_IFCHR | 0o666, "out.map")
    with pytest.raises(OutputPathError, match="is a block device"):
        refuse_special(stat.S_IFBLK | 0o660, "x")
    refuse_special(stat.S_IFREG | 0o644, "x")


def test_write_target_refuses_what_stat_calls_a_device(tmp_path, monkeypatch):
    path = tmp_path / "full"
    path.write_text("")
    real_stat = os.stat

    def device_stat(p, *args, **kwargs):
        result = real_stat(p, *args, **kwargs)
        if os.fspath(p) == os.fspath(path):
            fields = list(result)
            fields[0] = stat.S_IFCHR | 0o666
            return os.stat_result(fields)
        return result

    monkeypatch.setattr(atomic.os, "stat", device_stat)
    with pytest.raises(OutputPathError, match="is a character device"):
        write_target(path)


def test_a_failed_write_names_the_file_asked_for_not_a_temporary(tmp_path, monkeypatch):
    import errno

    path = tmp_path / "level.map"
    path.write_text("old")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / ".level.map.x.tmp"))

    monkeypatch.setattr(atomic.os, "fsync", full)
    with pytest.raises(OSError) as info:
        atomic_write_text(path, "new")
    message = str(info.value)
    assert message.startswith(f"{path}: cannot write: No space left on device"), message
    assert ".tmp" not in message and isinstance(info.value, OutputPathError)
    assert path.read_text() == "old"
