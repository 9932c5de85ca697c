"""Ending the process at once, past threads that would keep it alive (plugin code's, or a
worker stuck in compiled code), after the output written so far is flushed."""
from __future__ import annotations

import os
import sys
from typing import NoReturn


def exit_now(code: int) -> NoReturn:
    """Flush stdout and stderr (a closed or broken stream is skipped), then ``os._exit(code)``:
    no interpreter shutdown, so no thread is waited for."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
