"""Turn benchmark results into Markdown (and keep the hand-written parts of RESULTS.md)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spatial.atomic import atomic_write_text

from .timing import Cell, format_seconds

OP_TITLES = {
    "build": "build", "pairs": "all pairs", "oneshot": "build + pairs", "box": "box queries", "ray": "closest-hit rays",
    "update": "update 10 %", "rebuild": "rebuild", "frame": "frame",
}

#: The peer operation an operation of ours is compared with (a peer's rebuild is its build).
COMPARED_WITH = {"rebuild": "build"}


def best_peer(cells: dict[str, dict[str, Cell]], peers: list[str], op: str) -> tuple[str, float] | None:
    """``(name, median)`` of the fastest peer that completed ``op`` in this scene."""
    candidates = [(cells[p][COMPARED_WITH.get(op, op)].median, p) for p in peers
                  if p in cells and COMPARED_WITH.get(op, op) in cells[p]
                  and cells[p][COMPARED_WITH.get(op, op)].status == "ok"]
    if not candidates:
        return None
    median, name = min(candidates)
    return name, median


def ratio(cells, peers, name: str, op: str) -> tuple[float, str] | None:
    """Our median ÷ the best peer's median for ``op`` in the same scene, and that peer."""
    cell = cells.get(name, {}).get(op)
    best = best_peer(cells, peers, op)
    if cell is None or cell.status != "ok" or best is None or best[1] <= 0:
        return None
    return cell.median / best[1], best[0]


class Notes:
    """Numbered footnotes, so long skip/error reasons do not blow up the table cells."""

    def __init__(self):
        self.items: list[str] = []

    def mark(self, text: str) -> str:
        if text not in self.items:
            self.items.append(text)
        return f"[{self.items.index(text) + 1}]"

    def render(self) -> list[str]:
        return [f"{i + 1}. {text}" for i, text in enumerate(self.items)]


def _cell_text(cell: Cell | None, repeats: int, notes: Notes, extra: str = "") -> str:
    if cell is None:
        return ""
    if cell.status == "ok":
        text = format_seconds(cell.median)
        if len(cell.times) < repeats:
            text += f" ({len(cell.times)} run{'s' if len(cell.times) > 1 else ''})"
        return text + extra
    label = {"na": "n/a", "skip": "skipped", "error": "**error**"}[cell.status]
    return f"{label} {notes.mark(cell.note)}" if cell.note else label


#: The scene entry holding the measured floor of an operation (see :mod:`.floor`).
FLOOR = "floor"


def scene_table(scene: dict, ops: list[str], ours: list[str], peers: list[str], repeats: int,
                frame_marks: dict[str, str]) -> list[str]:
    """Markdown table of one (layout, N): medians, and for our backends the ratio to the best peer.

    ``frame_marks`` says how an implementation's frame differs (``rebuilds``, ``no rays``); a
    ``floor`` entry in the scene's cells (see :mod:`.floor`) gets its own row.
    """
    cells = scene["cells"]
    notes = Notes()
    header = ["implementation"] + [OP_TITLES[op] for op in ops]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in ours + peers + [FLOOR]:
        if name not in cells:
            continue
        row = [name if name in ours else f"*{name}*"]
        for op in ops:
            extra = ""
            if name in ours:
                r = ratio(cells, peers, name, op)
                if r is not None:
                    extra = f" · **{r[0]:.2f}×**"
            if op == "frame" and name in frame_marks and cells[name].get(op, Cell("na")).status == "ok":
                extra += f" ({frame_marks[name]})"
            row.append(_cell_text(cells[name].get(op), repeats, notes, extra))
        lines.append("| " + " | ".join(row) + " |")
    best = ["best peer"]
    for op in ops:
        b = best_peer(cells, peers, op)
        best.append(f"{b[0]} {format_seconds(b[1])}" if b else "none")
    lines.append("| " + " | ".join(best) + " |")
    if notes.items:
        lines += [""] + notes.render()
    return lines


@dataclass(frozen=True)
class Target:
    """A speed goal for our fastest backend at ``op``: its median ≤ ``bound`` × ``peer``'s.

    ``peer`` None means the fastest peer of the scene; ``FLOOR`` the scene's measured floor
    of ``op`` (:mod:`.floor`). ``beats_own`` names another operation of the same backend that
    ``op`` must take at most ``own_bound`` times of (an incremental update is only worth
    having when it clearly beats rebuilding).
    """

    op: str
    sizes: tuple[int, ...]
    bound: float
    peer: str | None
    beats_own: str | None = None
    own_bound: float = 1.0


#: The goals the "Targets" table reports against, one per (operation, sizes). Every backend's
#: ratios are in the scene tables; these state what "fast enough" means for the best of ours.
#: Issue #17: every scene family at 100k and 1M, operations as a user meets them.
TARGETS = (
    Target("build", (100_000, 1_000_000), 1.0, "boostree"),
    Target("box", (100_000, 1_000_000), 1.0, "boostree"),
    Target("ray", (100_000, 1_000_000), 1.5, "open3d"),
    Target("update", (100_000, 1_000_000), 1.0, "fcl", beats_own="rebuild", own_bound=0.5),
    Target("pairs", (100_000, 1_000_000), 0.5, None),
    Target("pairs", (1_000_000,), 10.0, FLOOR),
)

MET, NOT_MET, NOT_MEASURED = "met", "not met", "not measured"


@dataclass
class TargetOutcome:
    """How one target fared in one scene (``status`` is ``MET``, ``NOT_MET`` or ``NOT_MEASURED``).

    ``reason`` says why a target was not measured or not met; ``note`` is a skipped or failed
    cell's own explanation (shown as a footnote).
    """

    target: Target
    layout: str
    n: int
    status: str
    reason: str = ""
    note: str = ""
    backend: str | None = None
    ours: float | None = None
    own: float | None = None
    peer: str | None = None
    peer_time: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.ours is None or not self.peer_time:
            return None
        return self.ours / self.peer_time


def _status_word(cell: Cell) -> str:
    return {"na": "n/a", "skip": "skipped", "error": "failed"}.get(cell.status, cell.status)


def _read_named_peer(outcome: TargetOutcome, cells: dict, peers: list[str],
                     unavailable: dict[str, str]) -> bool:
    """Set ``outcome.peer_time`` from the cell of the target's own peer; False (with the
    reason and note set) when that peer has no usable time in this scene."""
    target = outcome.target
    peer_cell = cells.get(target.peer, {}).get(target.op)
    if target.peer == FLOOR and FLOOR not in cells:
        outcome.reason = "no floor: no exact pair answer of ours in this scene"
        return False
    if target.peer not in peers and target.peer not in cells:
        why = unavailable.get(target.peer)
        outcome.reason = f"{target.peer} unavailable" if why else f"{target.peer} not in --peers"
        outcome.note = why or ""
        return False
    if peer_cell is None:
        outcome.reason = f"{target.peer} did not run"
        return False
    if peer_cell.status != "ok":
        outcome.reason = f"{target.peer} {_status_word(peer_cell)}"
        outcome.note = peer_cell.note
        return False
    outcome.peer_time = peer_cell.median
    return True


def _evaluate(target: Target, layout: str, n: int, scene: dict | None, ops: list[str],
              ours: list[str], peers: list[str], unavailable: dict[str, str]) -> TargetOutcome:
    outcome = TargetOutcome(target, layout, n, NOT_MEASURED)
    op = target.op
    if op not in ops or (target.beats_own and target.beats_own not in ops):
        missing = op if op not in ops else target.beats_own
        outcome.reason = f"`{missing}` not in --ops"
        return outcome
    if scene is None:
        outcome.reason = "scene not in this run"
        return outcome
    cells = scene["cells"]
    done = [(cells[name][op].median, name) for name in ours
            if op in cells.get(name, {}) and cells[name][op].status == "ok"]
    if done:
        outcome.ours, outcome.backend = min(done)
    if target.peer is None:
        best = best_peer(cells, peers, op)
        if best is not None:
            outcome.peer, outcome.peer_time = best
    else:
        outcome.peer = target.peer
        if not _read_named_peer(outcome, cells, peers, unavailable):
            return outcome
    if outcome.backend is None:
        outcome.reason = "no backend of ours completed it"
        return outcome
    if outcome.peer_time is None:
        outcome.reason = "no peer completed it"
        return outcome
    if target.beats_own:
        own = cells[outcome.backend].get(target.beats_own)
        if own is None or own.status != "ok":
            outcome.reason = f"{outcome.backend} {target.beats_own} " + (
                _status_word(own) if own is not None else "did not run")
            outcome.note = own.note if own is not None else ""
            return outcome
        outcome.own = own.median
    failed = []
    if outcome.ours > target.bound * outcome.peer_time:
        failed.append(f"{outcome.ratio:.2f}× > {target.bound:g}×")
    if outcome.own is not None and outcome.ours > target.own_bound * outcome.own:
        failed.append(f"{outcome.ours / outcome.own:.2f}× its own {target.beats_own} "
                      f"> {target.own_bound:g}×")
    outcome.status = NOT_MET if failed else MET
    outcome.reason = "; ".join(failed)
    return outcome


def evaluate_targets(scenes: list[dict], ops: list[str], ours: list[str], peers: list[str],
                     layouts: list[str], unavailable: dict[str, str] | None = None,
                     targets: tuple[Target, ...] = TARGETS) -> list[TargetOutcome]:
    """One outcome per (target, layout, target size), in ``targets`` order.

    A scene of the wanted (layout, N) missing from ``scenes`` (not requested, or the run has
    not reached it yet) is ``NOT_MEASURED``, as is a skipped or failed cell it needs.
    """
    by_key = {(s["layout"], s["n"]): s for s in scenes}
    return [_evaluate(t, layout, n, by_key.get((layout, n)), ops, ours, peers, unavailable or {})
            for t in targets for layout in layouts for n in t.sizes]


def targets_table(scenes: list[dict], ops: list[str], ours: list[str], peers: list[str],
                  layouts: list[str], unavailable: dict[str, str] | None = None,
                  targets: tuple[Target, ...] = TARGETS) -> list[str]:
    """Markdown table of ``evaluate_targets``: our fastest backend against each target's peer."""
    notes = Notes()
    lines = ["| operation | layout | N | target | our best | ratio to that peer | peer | result |",
             "|---|---|---|---|---|---|---|---|"]
    for o in evaluate_targets(scenes, ops, ours, peers, layouts, unavailable, targets):
        t = o.target
        goal = f"≤ {t.bound:.1f} × " + (t.peer or "best peer")
        if t.beats_own:
            goal += f", and ≤ {t.own_bound:g} × its own {t.beats_own}"
        best = f"{o.backend} {format_seconds(o.ours)}" if o.backend else "–"
        if o.own is not None:
            best += f" ({t.beats_own} {format_seconds(o.own)})"
        peer = f"{o.peer} {format_seconds(o.peer_time)}" if o.peer_time is not None else (o.peer or "–")
        ratio_text = f"{o.ratio:.2f}×" if o.ratio is not None else "–"
        result = o.status
        if o.status == NOT_MEASURED:
            result += f" ({o.reason}{' ' + notes.mark(o.note) if o.note else ''})"
        elif o.status == NOT_MET:
            result = f"**{result}** ({o.reason})"
        lines.append(f"| {OP_TITLES[t.op]} | {o.layout} | {o.n:,} | {goal} | {best} | {ratio_text} "
                     f"| {peer} | {result} |")
    lines += ["", "Our fastest backend per operation and scene against the peer each target names "
                  "(not necessarily the fastest peer); every backend's ratios are in the tables "
                  "below. The targets are `TARGETS` in `benchmarks/report.py`."]
    if notes.items:
        lines += [""] + notes.render()
    return lines


def summary_table(scenes: list[dict], ops: list[str], ours: list[str], peers: list[str]) -> list[str]:
    """Ratio to the best peer for every backend and operation across all scenes (columns)."""
    header = ["backend", "operation"] + [f"{s['layout']} {s['n']:,}" for s in scenes]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in ours:
        for op in ops:
            row = [name, OP_TITLES[op]]
            for scene in scenes:
                r = ratio(scene["cells"], peers, name, op)
                row.append(f"{r[0]:.2f}× ({r[1]})" if r else "–")
            if any(c != "–" for c in row[2:]):
                lines.append("| " + " | ".join(row) + " |")
    return lines


def write_section(path: Path, body: list[str], name: str = "broadphase",
                  heading: str | None = None) -> None:
    """Replace the generated section ``name`` of ``path`` (between its markers), keeping the rest.

    Every benchmark script writes its table through this one function, so ``RESULTS.md`` holds
    one section per script. A section new to the file is appended, after ``heading`` when given.
    The file is replaced atomically: an interrupted run never leaves it half-written.
    """
    begin, end = f"<!-- BEGIN generated: {name} -->", f"<!-- END generated: {name} -->"
    section = "\n".join([begin, *body, end])
    if path.exists():
        text = path.read_text(encoding="utf-8")
        if begin in text and end in text:
            head, rest = text.split(begin, 1)
            tail = rest.split(end, 1)[1]
            text = head + section + tail
        else:
            lead = f"{heading}\n\n" if heading else ""
            text = text.rstrip("\n") + "\n\n" + lead + section + "\n"
    else:
        text = ("# Benchmark results\n\nEach section between markers is regenerated by its "
                "script; write other notes outside them.\n\n"
                + (f"{heading}\n\n" if heading else "") + section + "\n")
    atomic_write_text(path, text)
