"""Atomic file replacement: readers see the previous file or the complete new one, never a mix.

Every writer in the product goes through :func:`atomic_writer` (or its two shorthands,
:func:`atomic_write_text` and :func:`atomic_write_bytes`). The data goes to a temporary file in
the target's folder (same file system, so the final rename is atomic), is flushed and fsync'ed,
then ``os.replace`` puts it in place and the folder is fsync'ed so the rename itself is durable.

On Linux the temporary file is created with ``O_TMPFILE``: it has no name while it is being
written, so a process killed mid-write (even by SIGKILL) leaves nothing behind. It gets a name
only for the instant between ``linkat`` and ``rename``. Elsewhere (or on a file system without
``O_TMPFILE``) a named ``.NAME.*.tmp`` file is used and removed on any failure the process
survives. In both cases the previous file is never truncated: it is replaced in one step or not
at all.

:func:`check_output_path` is what command-line writers call *before* doing their work: the
folder must exist and be writable, and an existing file is only replaced when the user asked
for it (``--force``). A symlink is written through: the file it names is replaced atomically in
its own folder and the link stays. A target that is not a regular file (a folder, a FIFO, a
device, a socket, or a link to one) is refused in one line, ``--force`` or not.

This module is in ``spatial`` (the lowest layer) so that every layer can use it.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from .errors import PartitionStudioError


class OutputPathError(PartitionStudioError):
    """An output file cannot be written where it was asked for (missing folder, exists...)."""


def check_output_path(path: str | os.PathLike, force: bool = False, option: str = "") -> Path:
    """Check before any work that ``path`` can be written; return it as a ``Path``.

    Parameters
    ----------
    path : str or os.PathLike
        The file a command will write.
    force : bool
        Whether an existing file may be replaced.
    option : str
        The command-line option that named the file (``"--out"``), used in messages.

    Raises
    ------
    OutputPathError
        The folder does not exist or is not writable, ``path`` is a folder, or it exists and
        ``force`` is false. The message is one line naming the file.
    """
    path = Path(path)
    label = f"{option} {path}" if option else str(path)
    target = write_target(path, label)  # refuses a folder, pipe or device, --force or not
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise OutputPathError(f"{label}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputPathError(f"{label}: folder {folder} is not writable")
    if os.path.lexists(path) and not force:
        raise OutputPathError(f"{label}: exists (pass --force to overwrite)")
    return path


#: what a file that is not a regular one is called in a refusal
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def refuse_special(mode: int, label: str) -> None:
    """Raise :class:`OutputPathError` unless ``mode`` (an ``st_mode``) is a regular file's.

    Replacing a pipe, a device or a folder with a regular file is never what a save means
    (and writing into one never ends or goes nowhere), so it is refused whatever ``--force``
    says.
    """
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise OutputPathError(f"{label}: is {kind}, not a regular file; nothing was written")


def write_target(path: str | os.PathLike, label: str | None = None) -> Path:
    """The file a write to ``path`` replaces: ``path`` itself, or the file a symlink names.

    A save through a symlink replaces the file it points to (atomically, in that file's
    folder) and keeps the link. A dangling symlink names the file to create.

    Raises
    ------
    OutputPathError
        The file (after links) exists and is not a regular file.
    """
    path = Path(path)
    label = str(path) if label is None else label
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target
    except OSError as exc:  # a link loop, a folder we may not search
        raise OutputPathError(f"{label}: {exc.strerror}") from None
    refuse_special(mode, label)
    return target


class WriteFailed(OutputPathError, OSError):
    """Writing ``path`` failed (full disk, folder made read-only meanwhile...): one line naming
    the file asked for, never the temporary file; still an ``OSError`` for callers that
    catch those."""

    def __init__(self, path: str | os.PathLike, exc: OSError) -> None:
        reason = exc.strerror or str(exc) or type(exc).__name__
        OSError.__init__(self, exc.errno, reason)
        self.message = f"{os.fspath(path)}: cannot write: {reason}; any previous file is untouched"

    def __str__(self) -> str:
        return self.message


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike, binary: bool = False,
                  encoding: str = "utf-8") -> Iterator[IO]:
    """Open a file object whose content replaces ``path`` atomically when the block succeeds.

    Parameters
    ----------
    path : str or os.PathLike
        Destination; its folder must exist.
    binary : bool
        Yield a binary file object instead of a text one (UTF-8, ``\\n`` line ends).
    encoding : str
        Text encoding when ``binary`` is false.

    Yields
    ------
    file object
        Write the whole content to it. If the block raises, ``path`` is left as it was and
        the temporary file is removed.

    Raises
    ------
    OutputPathError
        ``path`` (after symlinks) is a folder, pipe, device or socket: nothing is written.
    WriteFailed
        Writing failed (an ``OSError`` too); the message names ``path``, never the temporary.

    Notes
    -----
    An existing file's permission bits are kept; a new file gets ``0o666`` minus the umask.
    A symlink is followed: the file it names is replaced, the link stays.
    """
    asked = path
    try:
        with _writing(path, binary, encoding) as handle:
            yield handle
    except WriteFailed:
        raise
    except OSError as exc:  # named after the file asked for, not a temporary one
        if isinstance(exc, PartitionStudioError):
            raise
        raise WriteFailed(asked, exc) from exc


@contextlib.contextmanager
def _writing(path: str | os.PathLike, binary: bool, encoding: str) -> Iterator[IO]:
    """:func:`atomic_writer` without the wrapping of its errors."""
    path = write_target(path)  # through a symlink to its file; never over a pipe or device
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp_name = _open_temporary(folder, path.name)
    linked: str | None = tmp_name
    try:
        handle = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding=encoding, newline="\n")
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
            _copy_mode(handle.fileno(), path)
            if linked is None:  # unnamed (O_TMPFILE): give it a name just before the rename
                linked = _link_unnamed(handle.fileno(), folder, path.name)
        os.replace(linked, path)
        linked = None
    finally:
        if linked is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(linked)
    _fsync_folder(folder)


def atomic_write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically (see :func:`atomic_writer`)."""
    with atomic_writer(path, encoding=encoding) as handle:
        handle.write(text)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_writer`)."""
    view = memoryview(data)
    chunk = 1 << 20  # a full disk fails part-way through, like this, rather than all at once
    with atomic_writer(path, binary=True) as handle:
        for start in range(0, len(view), chunk):
            handle.write(view[start:start + chunk])


# --------------------------------------------------------------------------- internals
def _open_temporary(folder: Path, name: str) -> tuple[int, str | None]:
    """``(fd, name)`` of a new temporary file in ``folder``; ``name`` is None when unnamed."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag and os.path.isdir("/proc/self/fd"):
        try:
            # read-write, so the content can still be copied out if it cannot be linked
            return os.open(folder, flag | os.O_RDWR | os.O_CLOEXEC, 0o666), None
        except OSError as exc:
            # the file system has no O_TMPFILE (some network and FUSE file systems): fall back
            if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
                raise
    fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    return fd, tmp_name


def _link_unnamed(fd: int, folder: Path, name: str) -> str:
    """Give the unnamed file ``fd`` a temporary name in ``folder`` and return it."""
    # linkat(AT_SYMLINK_FOLLOW) through /proc is the unprivileged way to name an O_TMPFILE;
    # os.link only calls linkat (rather than link, which would not follow) given a dir fd.
    try:
        proc_fd = os.open("/proc/self/fd", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return _copy_to_named(fd, folder, name)
    try:
        for _ in range(100):
            candidate = os.path.join(folder, f".{name}.{os.urandom(6).hex()}.tmp")
            try:
                os.link(str(fd), candidate, src_dir_fd=proc_fd, follow_symlinks=True)
                return candidate
            except FileExistsError:
                continue
            except OSError:  # linking refused (a hardened /proc, a file system quirk)
                return _copy_to_named(fd, folder, name)
    finally:
        os.close(proc_fd)
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))


def _copy_to_named(fd: int, folder: Path, name: str) -> str:
    """Copy the unnamed file ``fd`` to a named temporary file in ``folder`` (fsync'ed)."""
    out_fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        os.fchmod(out_fd, stat.S_IMODE(os.fstat(fd).st_mode))
        offset = 0
        while chunk := os.pread(fd, 1 << 20, offset):
            os.write(out_fd, chunk)
            offset += len(chunk)
        os.fsync(out_fd)
    except BaseException:
        os.close(out_fd)
        os.unlink(tmp_name)
        raise
    os.close(out_fd)
    return tmp_name


def _copy_mode(fd: int, path: Path) -> None:
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable where the platform allows it (POSIX)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
