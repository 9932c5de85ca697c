"""The editor's process ends with its own exit status even while a worker thread is still
inside work it cannot interrupt (a first compile): no "QThread: Destroyed while thread is
still running" abort (exit status 134)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: an editor-like process: a worker busy for 60 s (as a cold compile is) when it exits
BUSY_EXIT = """
import sys, time
from editor.qt.app_main import make_application
from editor.qt.shutdown import exit_code
from editor.qt.workers import CallWorker
app = make_application()
worker = CallWorker(lambda: time.sleep(60))
worker.start()
time.sleep(0.2)
print("exiting", flush=True)
sys.exit(exit_code(0, wait_ms=300))
"""


def test_exit_while_a_worker_still_runs_keeps_the_exit_status():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", BUSY_EXIT], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "exiting" in done.stdout and "QThread" not in done.stderr
    assert time.perf_counter() - start < 45, "it waited for the worker instead of exiting"


def test_exit_with_no_worker_running_returns_the_status(qapp):
    from editor.qt.shutdown import exit_code
    from editor.qt.workers import CallWorker

    worker = CallWorker(lambda: 1)
    worker.start()
    assert exit_code(3, wait_ms=5000) == 3  # returned: nothing left running
    assert worker.isFinished()
