"""Turn benchmark results into Markdown (and keep the hand-written parts of RESULTS.md)."""
from __future__ import annotations

import os
from pathlib import Path

from .timing import Cell, format_seconds

OP_TITLES = {
    "build": "build", "pairs": "all pairs", "box": "box queries", "ray": "closest-hit rays",
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


def scene_table(scene: dict, ops: list[str], ours: list[str], peers: list[str], repeats: int,
                frame_rebuilds: set[str]) -> list[str]:
    """Markdown table of one (layout, N): medians, and for our backends the ratio to the best peer."""
    cells = scene["cells"]
    notes = Notes()
    header = ["implementation"] + [OP_TITLES[op] for op in ops]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in ours + peers:
        if name not in cells:
            continue
        row = [name if name in ours else f"*{name}*"]
        for op in ops:
            extra = ""
            if name in ours:
                r = ratio(cells, peers, name, op)
                if r is not None:
                    extra = f" · **{r[0]:.2f}×**"
            elif op == "frame" and name in frame_rebuilds and cells[name].get(op, Cell("na")).status == "ok":
                extra = " (rebuilds)"
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
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
