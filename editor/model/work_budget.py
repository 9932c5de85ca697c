"""The work budget: a frame of index work that grows past it stops, in one line, not for ever.

The memory budget (:mod:`spatial.memory_budget`) bounds what a structure may take; this bounds
what one frame of a simulation or a replay may ask of it. An emitter at its highest rate with a
long lifetime adds objects every frame that all overlap, so the pairs grow with the square of
the frame number while the memory stays small: without a budget ``simulate --frames 60`` on a
ten-line level would run for hours. Each frame is checked after its edits (objects in the
index) and after its pair finding (candidate tests, overlapping pairs, time), so the frame
that crosses a limit is the last one. Limits (``docs/limits.md``):

* :data:`MAX_FRAME_OBJECTS` objects in the index;
* :data:`MAX_FRAME_PAIR_TESTS` candidate pair tests and :data:`MAX_FRAME_PAIRS` overlapping
  pairs per frame (``$PARTITION_STUDIO_WORK_BUDGET_PAIRS`` sets the latter; the tests may be
  ten times as many);
* :data:`MAX_FRAME_SECONDS` seconds of index work per frame.

The command line exits with the budget status (4, as for the memory budget).
"""
from __future__ import annotations

import os

from spatial.errors import PartitionStudioError

#: environment variable: overlapping pairs one frame may find (``0``: no work budget)
WORK_BUDGET_ENV = "PARTITION_STUDIO_WORK_BUDGET_PAIRS"
MAX_FRAME_PAIRS = 5_000_000
MAX_FRAME_OBJECTS = 2_000_000
MAX_FRAME_SECONDS = 60.0


class WorkBudgetError(PartitionStudioError):
    """A frame needed more work than the budget allows; ``frame`` is its number when known."""

    #: the command line's exit status for budgets (editor/cli/outcome.py)
    budget = True

    def __init__(self, message: str, frame: int | None = None) -> None:
        super().__init__(message)
        self.frame = frame

    def located(self, source: str, frame: int) -> WorkBudgetError:
        """The same error naming the level and the frame."""
        return WorkBudgetError(f"{source}: frame {frame}: {self}", frame)


def frame_pairs_budget() -> int | None:
    """Overlapping pairs a frame may find: the environment's value, else the default; None
    when it is ``0`` (no budget). A value that is not a whole number is ignored."""
    text = os.environ.get(WORK_BUDGET_ENV, "").strip()
    try:
        value = int(text) if text else MAX_FRAME_PAIRS
    except ValueError:
        value = MAX_FRAME_PAIRS
    return None if value <= 0 else value


_HINT = ("fewer moving objects, a backend or parameters that test fewer pairs (tune), or in a "
         "simulation fewer or shorter-lived projectiles (_ps_rate, _ps_lifetime)")


def check_objects(count: int) -> None:
    """Before a frame's pairs: refuse more objects than :data:`MAX_FRAME_OBJECTS`."""
    if frame_pairs_budget() is not None and count > MAX_FRAME_OBJECTS:
        raise WorkBudgetError(f"{count:,} objects in the index is over the work budget of "
                              f"{MAX_FRAME_OBJECTS:,} objects per frame; {_HINT}")


def check_pairs(tests: int, overlapping: int, seconds: float) -> None:
    """After a frame's pairs: refuse more pair tests, pairs or time than the budget."""
    pairs = frame_pairs_budget()
    if pairs is None:
        return
    if overlapping > pairs:
        raise WorkBudgetError(f"{overlapping:,} overlapping pairs in one frame is over the work "
                              f"budget of {pairs:,} (${WORK_BUDGET_ENV}); {_HINT}")
    if tests > 10 * pairs:
        raise WorkBudgetError(f"{tests:,} candidate pair tests in one frame is over the work "
                              f"budget of {10 * pairs:,} (${WORK_BUDGET_ENV} x 10); {_HINT}")
    if seconds > MAX_FRAME_SECONDS:
        raise WorkBudgetError(f"one frame took {seconds:.0f} s of pair finding, over the work "
                              f"budget of {MAX_FRAME_SECONDS:g} s; {_HINT}")


def check_trial_frame(frame: int, tests: int, overlapping: int, seconds: float) -> None:
    """:func:`check_pairs` for frame ``frame`` of a tuning trial's workload
    (:attr:`spatial.cost.Workload.check_frame`): the one line names the frame."""
    try:
        check_pairs(tests, overlapping, seconds)
    except WorkBudgetError as exc:
        raise WorkBudgetError(f"frame {frame} of the tuning workload: {exc}", frame) from None
