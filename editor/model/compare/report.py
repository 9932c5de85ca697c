"""Both sides of a comparison and their ratios: what ``compare --json`` prints and the GUI shows.

``Comparison.as_dict()`` is ``{"a": {...}, "b": {...}, "ratios": {...}, "workload": {...}}``.
Each ratio is B / A of one number both sides report (a figure, or a query kind's mean nodes
visited and objects tested, as ``rays.nodes_visited``); it is ``None`` when A's value is 0.
:func:`comparison_rows` lays the same numbers out as table rows, so the GUI's table cannot
disagree with the command line.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..index_input import IndexInput
from .measure import DEFAULT_FRAMES, SideMeasure, measure_side
from .queries import QuerySet, query_set
from .sides import SideSpec, document_record

#: the figures compared, in table order, with the label the table shows
FIGURES = (
    ("build_ms", "build (ms)"),
    ("update_ms", "update per frame (ms, median)"),
    ("pair_candidates", "pair candidates (all)"),
    ("pair_overlapping", "pairs overlapping (all)"),
    ("frame_candidates", "pair candidates per frame (active)"),
    ("rays.nodes_visited", "ray: nodes visited"),
    ("rays.objects_tested", "ray: objects tested"),
    ("frusta.nodes_visited", "frustum: nodes visited"),
    ("frusta.objects_tested", "frustum: objects tested"),
    ("boxes.nodes_visited", "box: nodes visited"),
    ("boxes.objects_tested", "box: objects tested"),
    ("memory_bytes", "memory (bytes)"),
    ("nodes", "nodes"),
    ("leaves", "leaves"),
    ("max_depth", "depth"),
    ("references", "references"),
    ("duplication", "duplication (references per object)"),
)


def figure(side: dict, key: str):
    """The value of ``key`` in a side's dictionary (``rays.nodes_visited`` reads a query kind)."""
    if "." in key:
        kind, name = key.split(".", 1)
        return side["queries"][kind][name]
    return side[key]


def ratio(a, b) -> float | None:
    """B / A rounded to 4 places; None when A is 0 (no finite ratio)."""
    if not a:
        return None
    return round(float(b) / float(a), 4)


@dataclass
class Comparison:
    """Two measured sides of one document on one query set."""

    source: str
    a: SideMeasure
    b: SideMeasure
    queries: QuerySet
    frames_source: str

    def as_dict(self) -> dict:
        a, b = self.a.as_dict(), self.b.as_dict()
        return {"source": self.source, "a": a, "b": b,
                "ratios": {key: ratio(figure(a, key), figure(b, key)) for key, _ in FIGURES},
                "workload": {**self.queries.describe(), "motion": self.frames_source}}


def comparison_rows(report: dict) -> list[tuple[str, str, object, object, float | None]]:
    """``(key, label, A, B, B/A)`` for each compared figure of a report dictionary."""
    return [(key, label, figure(report["a"], key), figure(report["b"], key),
             report["ratios"][key]) for key, label in FIGURES]


def compare_record(record: IndexInput, a: SideSpec, b: SideSpec, *, recording=None,
                   frames: int = DEFAULT_FRAMES, seed: int = 0, warm: bool = True,
                   queries: QuerySet | None = None) -> Comparison:
    """Measure ``a`` and ``b`` on the same query set and motion of ``record``."""
    queries = queries if queries is not None else query_set(record, seed)
    sides = [measure_side(record, spec, queries, recording=recording, frames=frames, seed=seed,
                          warm=warm) for spec in (a, b)]
    motion = "recording" if recording is not None else f"synthetic seed={seed}"
    return Comparison(record.source, sides[0], sides[1], queries, f"{motion}, {frames} frames")


def compare_document(scene, a: SideSpec, b: SideSpec, *, source: str = "", **options) -> Comparison:
    """Measure ``a`` and ``b`` on ``scene`` (see :func:`compare_record` for the options)."""
    return compare_record(document_record(scene, source), a, b, **options)
