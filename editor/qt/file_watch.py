"""Watch mode that survives how editors save: delete and create, rename over, slow writes.

``QFileSystemWatcher`` stops watching a file once it is deleted or renamed over, so the window
watches the file's folder as well and follows the name. A change is reloaded only once the
file has settled (present, and its size, time and inode the same at two looks
:data:`SETTLE_MS` apart), so a writer that takes a while is read once, complete. A version that
cannot be read is reported in a dialog once for the document on screen (later ones in the
status bar); the next version is tried when it settles.
"""
from __future__ import annotations

import os

#: how long a changed file must stay the same before it is read again
SETTLE_MS = 250


def signature(path: str | None) -> tuple | None:
    """What tells two versions of a file apart: ``(size, mtime_ns, inode)``; None if absent."""
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino


class FileSettle:
    """The watch state of one window: the version loaded, the one changing, the one refused."""

    def __init__(self) -> None:
        self.loaded: tuple | None = None     # the version on screen (set by watch_paths)
        self.pending: tuple | None = None    # the version last seen changing
        self.waiting = False                 # a change was seen and not yet read
        self.refused: int | None = None      # the document whose reload failure was shown

    def noticed(self, file: str | None) -> bool:
        """A watch event: True when the file may have changed (a folder event for another
        file, or one that leaves our file as loaded, is not a change)."""
        sig = signature(file)
        if sig is not None and sig == self.loaded and not self.waiting:
            return False
        self.pending, self.waiting = sig, True
        return True

    def ready(self, file: str | None) -> bool | None:
        """At the end of the settle delay: True to read now, False to look again later, None
        to wait for the next event (the file is gone: its creation will bring one)."""
        if not self.waiting:
            return True  # asked directly (F5-like): read what is there
        sig = signature(file)
        if sig is None:
            return None
        if sig != self.pending:
            self.pending = sig
            return False
        self.waiting = False
        return True

    def report_failure(self, document) -> bool:
        """Whether a failure to read the file again should be shown: once for the document on
        screen (a writer that pauses longer than the settle delay fails at each pause; the
        rest go to the status bar, and the complete file is read when it settles)."""
        if self.refused == id(document):
            return False
        self.refused = id(document)
        return True


def watch_paths(watcher, settle: FileSettle, file: str | None, enabled: bool) -> None:
    """Watch ``file`` and its folder (or nothing); remember its version as the one loaded."""
    current = watcher.files() + watcher.directories()
    if current:
        watcher.removePaths(current)
    settle.loaded = signature(file) if enabled else None
    if not (enabled and file):
        return
    folder = os.path.dirname(os.path.abspath(file))
    if os.path.isdir(folder):
        watcher.addPath(folder)  # a delete-and-create or a rename over the file shows here
    if os.path.exists(file):
        watcher.addPath(file)  # a WAD map is watched through its WAD
