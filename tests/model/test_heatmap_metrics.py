"""The heatmap metric table: values, colour ranges and what each recomputes on."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model.heatmap_metrics import LOG_SCALE_ABOVE, METRICS, QUERIES, MetricContext, metric


class _Table:
    def __init__(self, n: int) -> None:
        self.depth = np.arange(n)
        self.own_count = np.array([0] * (n - 1) + [LOG_SCALE_ABOVE + 5])
        self.subtree_count = self.own_count
        self.lifespan_left = np.full(n, 3)
        self.awake = np.ones(n, dtype=bool)
        self.pair_tests = np.zeros(n)

    def __len__(self) -> int:
        return len(self.depth)


def test_every_metric_gives_one_value_per_row():
    table = _Table(5)
    for m in METRICS.values():
        values = m.values(table, MetricContext(visits=np.array([0, 1, 2, 0, 0])))
        assert values.shape == (5,) and values.dtype == np.float64, m.key


def test_fixed_and_data_ranges_and_the_log_scale():
    table = _Table(5)
    assert metric("awake").colour_range(metric("awake").values(table)) == (0.0, 1.0, False)
    assert metric("depth").colour_range(metric("depth").values(table)) == (0.0, 4.0, False)
    vmin, vmax, log = metric("own_count").colour_range(metric("own_count").values(table))
    assert (vmin, vmax, log) == (0.0, LOG_SCALE_ABOVE + 5, True)
    # the same spread on a metric not declared log-scale stays linear
    assert not metric("depth").colour_range(np.array([0.0, 100.0]))[2]


def test_query_visits_follow_the_queries_and_read_the_context():
    visits = metric("query_visits")
    assert visits.recomputes_on(QUERIES) and not metric("depth").recomputes_on(QUERIES)
    np.testing.assert_array_equal(visits.values(_Table(3), MetricContext(np.array([2, 1, 0]))),
                                  [2.0, 1.0, 0.0])
    np.testing.assert_array_equal(visits.values(_Table(3)), [0.0, 0.0, 0.0])


def test_an_unknown_key_names_the_known_ones():
    with pytest.raises(ValueError, match="query_visits"):
        metric("nope")
