"""Partition Studio entry point.

``python app.py`` opens the editor on the embedded demo level; ``python app.py FILE`` opens a
file. Headless subcommands for build pipelines (``stats``, ``plugins``, ``convert``, ...) run
without importing Qt: see ``python app.py --help``.
"""
from __future__ import annotations

import time

#: when this process reached the entry point (start-up measurements, :mod:`editor.qt.first_frame`)
LAUNCHED = time.perf_counter()

import sys  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Dispatch to the headless CLI or start the GUI; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    from editor.cli import is_cli_invocation, run_cli

    if is_cli_invocation(argv):
        from editor.cli.outcome import finish  # threads a plugin left cannot keep us alive

        return finish(run_cli(argv, memory_budget=True), "partition-studio")
    from editor.qt.app_main import run_gui  # Qt is imported only on this path

    return run_gui(argv, launched=LAUNCHED)


if __name__ == "__main__":
    sys.exit(main())
