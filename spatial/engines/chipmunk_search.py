"""How the Chipmunk profile settles ``dim`` and ``count`` of its spatial hash on Chipmunk's timing.

What the two knobs cost, from Chipmunk's source (``src/cpSpaceHash.c``, ``src/prime.h``,
``src/cpSpace.c``, ``src/cpSpaceStep.c`` of Munk2D, the Chipmunk build pymunk 7 embeds; see
``docs/tuning.md``): ``cpSpaceUseSpatialHash`` makes two hashes with the same ``dim`` and
``count``, one for the static shapes and one for the others. Every step clears the dynamic
hash's whole table (``clearTable`` walks all ``numcells`` cells) and hashes every dynamic shape
again into each cell its box covers; each dynamic box then queries the static hash. The table
has ``next_prime(count)`` cells, the first of a fixed list of primes, each about twice the one
before (:data:`TABLE_PRIMES`), so only those sizes differ: a smaller table is cheaper to clear
but puts unrelated cells into one bin chain (``hash_func(x, y, n)`` is taken modulo the table
size), whose shapes are then tested by their boxes. ``dim`` sets how many cells a box covers and
how many shapes share a cell.

:func:`search_hash` times candidates against the docs' values (``dim`` the median shape size,
``count`` ten cells per shape) through a :class:`PairTimer` — Chipmunk itself in the product
(:class:`.chipmunk_run.ChipmunkBench`), a stand-in in tests:

1. **screen**, in passes while the screening share of the budget lasts: cell sizes around the
   docs' (and the model's pick) at the docs' table size; then the table sizes (the primes from
   :data:`TABLES_DOWN` below the docs' to :data:`TABLES_UP` above) at the best cell size; then
   cell sizes next to the best at the best table size. Each candidate is timed in lockstep with
   the docs' hash (one step of each in turn, the same simulation time), as a ratio.
2. **confirm**: the candidates that screened faster than the docs' values by more than the
   engine's noise, fastest first (ties towards the docs' values), each in
   :data:`CONFIRM_ROUNDS` fresh blocks of lockstep steps. The first that beats the docs' values
   by more than the noise in **every** round is kept; if none does, the docs' values stay.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from .profile import ENGINE_NOISE

#: Chipmunk's hash table sizes (Munk2D ``src/prime.h``, ``primes[]``): a table of ``count``
#: cells gets the first of these that is at least ``count``
TABLE_PRIMES = (5, 13, 23, 47, 97, 193, 389, 769, 1543, 3079, 6151, 12289, 24593, 49157, 98317,
                196613, 393241, 786433, 1572869, 3145739, 6291469, 12582917, 25165843, 50331653,
                100663319, 201326611, 402653189, 805306457, 1610612741)
#: cell sizes tried, as multiples of the docs' size (then of the best one); coarse first, so
#: that when the budget cuts the pass short both directions and the far end have been timed
DIM_FACTORS = (2.0, 0.5, 4.0, 1.4, 0.7, 2.8)
NEAR_FACTORS = (0.8, 1.25)
#: table sizes tried below and above the docs' one (each prime about twice the one before)
TABLES_DOWN = 5
TABLES_UP = 1
#: shares of the search's budget: screening ends at the first, confirming at the whole
SCREEN_SHARE = 0.6
CONFIRM_ROUNDS = 3
#: candidates confirmed at most (each costs CONFIRM_ROUNDS blocks)
CONFIRM_AT_MOST = 3
#: blocks of lockstep steps a search plans for: the candidates of the three passes and the
#: confirming rounds (a confirming block has twice a screening block's steps)
PLANNED_BLOCKS = len(DIM_FACTORS) + 1 + TABLES_DOWN + TABLES_UP + len(NEAR_FACTORS) \
    + 2 * CONFIRM_ROUNDS * CONFIRM_AT_MOST
#: steps per screening block, whatever the budget
MIN_STEPS, MAX_STEPS = 4, 200

Setting = tuple[float, int]


def table_size(count: int) -> int:
    """The number of cells Chipmunk allocates for ``count`` (its ``next_prime``)."""
    return next(p for p in TABLE_PRIMES if p >= max(int(count), 1))


class PairTimer(Protocol):
    """Times a hash setting against the docs' one in the engine, stepped in turn."""

    def ratio(self, setting: Setting, steps: int) -> float:
        """Median step time with ``setting`` over that with the docs' values, over ``steps``
        steps of each taken in turn."""
        ...


@dataclass
class HashChoice:
    """What :func:`search_hash` timed and kept."""

    docs: Setting
    kept: Setting
    steps: int
    #: screened ratio to the docs' values, per candidate, in the order timed
    screened: dict[Setting, float] = field(default_factory=dict)
    #: the confirming rounds' ratios of each candidate confirmed
    rounds: dict[Setting, list[float]] = field(default_factory=dict)
    stop_reason: str = ""

    @property
    def gain(self) -> float:
        """How much faster the kept values stepped than the docs' ones (worst confirming round);
        0 when the docs' values are kept."""
        if self.kept == self.docs:
            return 0.0
        return 1.0 - max(self.rounds[self.kept])

    def note(self) -> str:
        """One sentence for the settings' notes: what was timed and what was kept."""
        dim, count = self.docs
        tried = f"{len(self.screened)} (dim, count) pairs screened in Chipmunk ({self.steps} " \
                f"steps each in lockstep with the docs' dim {dim:.6g}, count {count}; " \
                f"table {table_size(count)} cells)"
        if self.kept != self.docs:
            rounds = ", ".join(f"{r:.3f}" for r in self.rounds[self.kept])
            return (f"{tried}; dim {self.kept[0]:.6g}, count {self.kept[1]} beats the docs' values "
                    f"by more than {100 * ENGINE_NOISE:.0f} % in every one of "
                    f"{len(self.rounds[self.kept])} confirming rounds (step time ratios {rounds}): "
                    f"kept")
        if self.rounds:
            tested = "; ".join(f"dim {d:.6g}, count {c}: " + ", ".join(f"{r:.3f}" for r in rs)
                               for (d, c), rs in self.rounds.items())
            why = f"none of the fastest beat them by more than {100 * ENGINE_NOISE:.0f} % in " \
                  f"every confirming round ({tested})"
        elif self.screened:
            (d, c), best = min(self.screened.items(), key=lambda item: item[1])
            why = f"none screened faster than them by more than {100 * ENGINE_NOISE:.0f} % " \
                  f"(best: dim {d:.6g}, count {c}, step time ratio {best:.3f})"
        else:
            why = "no candidate could be timed within the budget"
        return f"{tried}; {why}{'; ' + self.stop_reason if self.stop_reason else ''}: " \
               f"the docs' values are kept"


def screen_steps(step_s: float, budget_s: float) -> int:
    """Steps per screened candidate, for a step of ``step_s`` seconds, so that the planned
    blocks (two spaces stepped in each, two untimed steps first) fill ``budget_s``."""
    if not (step_s > 0 and math.isfinite(step_s)):
        return MIN_STEPS
    fit = budget_s / (PLANNED_BLOCKS * 2 * step_s) - 2  # two untimed steps per block
    return int(max(MIN_STEPS, min(MAX_STEPS, fit)))


def candidate_dims(around: float, factors: tuple[float, ...]) -> list[float]:
    return [round(around * f, 6) for f in factors]


def candidate_tables(docs_count: int) -> list[int]:
    """The table sizes tried: Chipmunk's primes from :data:`TABLES_DOWN` below the docs' table to
    :data:`TABLES_UP` above it (the docs' own table first)."""
    docs = TABLE_PRIMES.index(table_size(docs_count))
    lo, hi = max(docs - TABLES_DOWN, 0), min(docs + TABLES_UP, len(TABLE_PRIMES) - 1)
    return [TABLE_PRIMES[docs]] + [TABLE_PRIMES[i] for i in range(docs - 1, lo - 1, -1)] + \
        [TABLE_PRIMES[i] for i in range(docs + 1, hi + 1)]


def search_hash(timer: PairTimer, docs: Setting, model_dim: float | None, budget_s: float,
                step_s: float, *, held: frozenset[str] = frozenset(),
                clock: Callable[[], float] = time.perf_counter) -> HashChoice:
    """Settle ``(dim, count)`` against ``docs`` within ``budget_s`` (see the module docstring).

    ``step_s`` is one step's time (it sizes the blocks); ``held`` names knobs (``"dim"``,
    ``"count"``) that keep the docs' value."""
    began = clock()
    screen_end, end = began + SCREEN_SHARE * budget_s, began + budget_s
    steps = screen_steps(step_s, budget_s)
    choice = HashChoice(docs, docs, steps)
    docs_key = (float(docs[0]), table_size(docs[1]))

    def same_as_docs(setting: Setting) -> bool:
        return (float(setting[0]), table_size(setting[1])) == docs_key

    block_s = 0.0  # the last screening block's time: a block is started only if it fits

    def timed(setting: Setting, n: int) -> float:
        nonlocal block_s
        start = clock()
        ratio = timer.ratio(setting, n)
        block_s = (clock() - start) * steps / n
        return ratio

    for setting in _passes(choice, docs, model_dim, held):
        if clock() + block_s > screen_end:
            choice.stop_reason = "screening stopped at its share of the budget"
            break
        if setting in choice.screened or same_as_docs(setting):
            continue
        choice.screened[setting] = timed(setting, steps)

    def distance(setting: Setting) -> float:  # ties go to the values nearest the docs'
        return abs(math.log(setting[0] / docs[0])) + abs(math.log(table_size(setting[1])
                                                                  / table_size(docs[1])))

    faster = sorted((s for s, r in choice.screened.items() if r * (1 + ENGINE_NOISE) < 1),
                    key=lambda s: (round(choice.screened[s], 3), distance(s)))
    for setting in faster[:CONFIRM_AT_MOST]:
        if clock() + 2 * block_s > end:
            choice.stop_reason = "confirming stopped at the budget"
            break
        rounds = choice.rounds.setdefault(setting, [])
        for _ in range(CONFIRM_ROUNDS):
            if rounds and clock() + 2 * block_s > end:  # unconfirmed: not kept
                choice.stop_reason = "confirming stopped at the budget"
                break
            rounds.append(timed(setting, 2 * steps))
            if not rounds[-1] * (1 + ENGINE_NOISE) < 1:  # one round lost: not a clear win
                break
        if len(rounds) == CONFIRM_ROUNDS and all(r * (1 + ENGINE_NOISE) < 1 for r in rounds):
            choice.kept = setting
            break
    return choice


def _passes(choice: HashChoice, docs: Setting, model_dim: float | None,
            held: frozenset[str]) -> Iterator[Setting]:
    """The screening order; each pass starts from the best setting screened so far."""
    def best() -> Setting:
        if not choice.screened:
            return docs
        setting = min(choice.screened, key=choice.screened.__getitem__)
        return setting if choice.screened[setting] < 1 else docs

    dim, count = float(docs[0]), int(docs[1])
    if "dim" not in held:
        extra = [round(float(model_dim), 6)] if model_dim and model_dim > 0 else []
        for d in extra + candidate_dims(dim, DIM_FACTORS):
            yield (d, count)
    if "count" not in held:
        best_dim = best()[0]
        for table in candidate_tables(count)[1:]:
            yield (best_dim, table)
    if "dim" not in held:
        best_dim, best_count = best()
        for d in candidate_dims(best_dim, NEAR_FACTORS):
            yield (d, best_count)
