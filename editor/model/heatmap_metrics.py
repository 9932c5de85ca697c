"""The heatmap metrics of the tree overlay, each declared once.

A :class:`HeatmapMetric` says everything the editor needs to colour the tree's nodes by one
quantity: its key (``--overlay KEY``, the report, the settings), its label (the overlay panel's
chooser, the Simulation → Heatmap menu), its legend text, how its value is read from a node
table (:class:`spatial.contract.NodeTable`) and a :class:`MetricContext`, whether its colour
range is fixed or the data's, whether heavy tails are coloured on a log scale, and what
changes make it recompute. The overlay, the editor state, the panel, the menu and the
command line all read :data:`METRICS`, so adding a metric is one :func:`register` call (or one
entry below) plus its value function.

Qt-free: the GUI reads this table, it never declares a metric of its own.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: counts are heavy-tailed (an octree root can hold hundreds of straddlers while most cells
#: hold one or two): a log-scale metric whose range spans more than this is coloured on a log
#: scale
LOG_SCALE_ABOVE = 16

#: what a metric recomputes on, beside a new tree: the ray or frustum query changed
QUERIES = "queries"


@dataclass(frozen=True)
class MetricContext:
    """What a value function may read besides the node table.

    ``visits``: per node row, 2 when the last ray/frustum query visited it, 1 when it culled
    it, 0 untouched (None when no query ran).
    """

    visits: np.ndarray | None = None


@dataclass(frozen=True)
class HeatmapMetric:
    """One way to colour the tree's nodes.

    Attributes
    ----------
    key : str
        Its name on the command line, in reports and in the overlay settings.
    label : str
        Its name in the overlay panel and the Heatmap menu.
    legend : str
        What its colours mean, under the legend's colour bar.
    value : callable
        ``value(table, context) -> (len(table),)`` numbers, one per node row.
    fixed_range : (float, float) or None
        The colour range when it is fixed (a flag, a code); None: the drawn values' range.
    log_scale : bool
        Colour a range wider than :data:`LOG_SCALE_ABOVE` on a log scale (heavy-tailed counts).
    recompute_on : frozenset of str
        What else makes it recompute besides a new tree (:data:`QUERIES`).
    prepare : callable or None
        ``prepare(index)`` before the node table is read from the document's index (a column
        that a search fills, such as the per-node pair tests).
    integer : bool
        Its values are whole numbers (the legend prints them so).
    """

    key: str
    label: str
    legend: str
    value: Callable[[Any, MetricContext], np.ndarray]
    fixed_range: tuple[float, float] | None = None
    log_scale: bool = False
    recompute_on: frozenset[str] = field(default_factory=frozenset)
    prepare: Callable[[Any], None] | None = None
    integer: bool = True

    def values(self, table, context: MetricContext | None = None) -> np.ndarray:
        """The metric of every row of ``table`` as float64."""
        found = self.value(table, context or MetricContext())
        return np.asarray(found, dtype=np.float64).reshape(len(table))

    def colour_range(self, values: np.ndarray) -> tuple[float, float, bool]:
        """``(vmin, vmax, log_scale)`` for colouring ``values`` (the drawn rows')."""
        if self.fixed_range is not None:
            vmin, vmax = self.fixed_range
        elif len(values):
            vmin, vmax = float(values.min()), float(values.max())
        else:
            vmin = vmax = 0.0
        return float(vmin), float(vmax), self.logarithmic(vmin, vmax)

    def logarithmic(self, vmin: float, vmax: float) -> bool:
        """Whether the range ``[vmin, vmax]`` is coloured on a log scale (a heavy-tailed count
        spanning more than :data:`LOG_SCALE_ABOVE`)."""
        return bool(self.log_scale and vmax - vmin > LOG_SCALE_ABOVE and vmin >= 0)

    def recomputes_on(self, change: str) -> bool:
        """Whether ``change`` (e.g. :data:`QUERIES`) makes this metric's colours stale."""
        return change in self.recompute_on


def column(name: str) -> Callable[[Any, MetricContext], np.ndarray]:
    """A value function reading one column of the node table."""
    def read(table, context: MetricContext) -> np.ndarray:
        return getattr(table, name)
    read.__name__ = f"column_{name}"
    return read


def _query_visits(table, context: MetricContext) -> np.ndarray:
    visits = context.visits
    if visits is None or len(visits) != len(table):
        return np.zeros(len(table))
    return visits


def _fill_pair_tests(index) -> None:
    index.pairs("all")  # a pair search fills the per-node pair-test column


#: every metric by key, in menu order
METRICS: dict[str, HeatmapMetric] = {}


def register(metric: HeatmapMetric) -> HeatmapMetric:
    """Add ``metric`` to :data:`METRICS` (after the others); returns it. A key is taken once."""
    if metric.key in METRICS:
        raise ValueError(f"heatmap metric {metric.key!r} is already registered")
    METRICS[metric.key] = metric
    return metric


def metric(key: str) -> HeatmapMetric:
    """The metric named ``key``; ``ValueError`` naming the known ones otherwise."""
    found = METRICS.get(key)
    if found is None:
        raise ValueError(f"unknown overlay metric {key!r}; choose from {sorted(METRICS)}")
    return found


register(HeatmapMetric("depth", "Depth", "node depth (levels below the root)", column("depth")))
register(HeatmapMetric("own_count", "Objects in node", "objects stored in the node itself",
                       column("own_count"), log_scale=True))
register(HeatmapMetric("subtree_count", "Objects in subtree", "objects in the node and below",
                       column("subtree_count"), log_scale=True))
register(HeatmapMetric("lifespan", "Lifespan", "frames left before an empty node is pruned",
                       column("lifespan_left")))
register(HeatmapMetric("awake", "Awake", "node holds an awake object (1) or not (0)",
                       column("awake"), fixed_range=(0.0, 1.0)))
register(HeatmapMetric("pair_tests", "Pair tests", "candidate pair tests made in the node",
                       column("pair_tests"), log_scale=True, prepare=_fill_pair_tests))
register(HeatmapMetric("query_visits", "Query visits",
                       "last ray/frustum query: 2 visited, 1 culled, 0 untouched", _query_visits,
                       fixed_range=(0.0, 2.0), recompute_on=frozenset({QUERIES})))
