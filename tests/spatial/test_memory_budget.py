"""Every built-in backend states its worst-case memory and refuses parameters over the budget."""
from __future__ import annotations

import numpy as np
import pytest

from editor.model.loading import document_source, load_document
from spatial.memory_budget import MEMORY_BUDGET_ENV, MemoryBudgetError, memory_budget_mb
from spatial.params import parse_params
from spatial.registry import default_registry
from spatial.scenegen import random_boxes
from spatial.tuner import tune

from ..conftest import shared_file
from .tuning_helpers import small_workload

BACKENDS = ["octree", "quadtree", "kdtree", "bsp", "bvh", "grid", "triangle_octree"]

#: parameters that make each backend's worst case grow, and a budget (MB) they exceed on
#: 5,000 boxes. The quadtree's duplication and the grid's cell count grow without bound; the
#: other trees are held linear in the object count by their own rules, so only a small
#: budget refuses them.
ABSURD = {
    "quadtree": ({"max_depth": 24, "max_objects": 1, "max_duplication": 4}, 4096),
    "grid": ({"cell_size": 1e-3, "max_cells": 1 << 28}, 1024),
    "octree": ({"max_depth": 30, "min_size": 1e-6, "looseness": 4.0}, 1),
    "kdtree": ({"max_depth": 64, "leaf_size": 1}, 16),
    "bsp": ({"max_depth": 64, "min_objects": 1}, 16),
    "bvh": ({"sah_bins": 256}, 1),
    "triangle_octree": ({"max_triangles": 1, "max_depth": 24, "min_size": 1e-6}, 16),
}


def _backend(name):
    return default_registry().backend(name)


@pytest.fixture(scope="module")
def boxes():
    _, lo, hi = random_boxes(5000, seed=3)
    return lo, hi


@pytest.mark.parametrize("name", BACKENDS)
def test_absurd_parameters_are_refused_naming_estimate_and_budget(name, boxes):
    cls = _backend(name)
    overrides, budget = ABSURD[name]
    params = parse_params(cls.Params, overrides)
    with pytest.raises(MemoryBudgetError) as caught:
        cls.check_memory_budget(params, *boxes, budget_mb=budget)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{name} with ") and "on 5000 objects" in message
    assert f"memory budget of {budget} MB" in message
    key, value = next(iter(overrides.items()))
    assert f"{key}={value:g}" in message if isinstance(value, float) else f"{key}={value}" in message
    assert "in the worst case" in message


@pytest.mark.parametrize("name", ["quadtree", "grid"])
def test_defaults_pass_the_budget_their_absurd_parameters_exceed(name, boxes):
    cls = _backend(name)
    overrides, budget = ABSURD[name]
    cls.check_memory_budget(cls.Params(), *boxes, budget_mb=budget)  # defaults pass
    absurd = cls.worst_case_bytes(parse_params(cls.Params, overrides), *boxes)
    assert absurd > 50 * cls.worst_case_bytes(cls.Params(), *boxes)


def test_a_refused_build_leaves_the_index_as_it_was(boxes, monkeypatch):
    monkeypatch.setenv(MEMORY_BUDGET_ENV, "512")
    cls = _backend("quadtree")
    lo, hi = boxes
    tree = cls()
    tree.build(np.arange(100), lo[:100], hi[:100])
    before = (tree.params, tree.stats()["nodes"], len(tree))
    with pytest.raises(MemoryBudgetError, match="memory budget of 512 MB"):
        tree.set_params(max_depth=24, max_objects=1, max_duplication=4.0)
    assert (tree.params, tree.stats()["nodes"], len(tree)) == before
    absurd = cls(parse_params(cls.Params, ABSURD["quadtree"][0]))
    with pytest.raises(MemoryBudgetError):
        absurd.build(np.arange(len(lo)), lo, hi)
    assert len(absurd) == 0
    absurd.validate()


def test_the_budget_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(MEMORY_BUDGET_ENV, "300")
    assert memory_budget_mb() == 300
    monkeypatch.setenv(MEMORY_BUDGET_ENV, "0")
    assert memory_budget_mb() is None
    monkeypatch.delenv(MEMORY_BUDGET_ENV)
    assert memory_budget_mb() > 0


@pytest.mark.parametrize("name", BACKENDS)
def test_defaults_are_accepted_on_a_real_level(name, e3m4_boxes, monkeypatch):
    monkeypatch.setenv(MEMORY_BUDGET_ENV, "4096")
    cls = _backend(name)
    cls.check_memory_budget(cls.Params(), *e3m4_boxes)


@pytest.fixture(scope="module")
def e3m4_boxes():
    source = document_source(load_document(shared_file("quake", "librequake_e3m4_valve220.map")),
                             "e3m4")
    return source.lo, source.hi


def test_the_tuner_records_a_refused_trial_without_running_it(monkeypatch):
    monkeypatch.setenv(MEMORY_BUDGET_ENV, "1")
    result = tune(_backend("quadtree"), small_workload(), budget_s=30, seed=0, max_trials=3)
    refused = [t for t in result.trials if t.status == "refused"]
    assert refused and all("memory budget of 1 MB" in t.message for t in refused)
    assert all(t.cost is None and t.report is None for t in refused)


def test_a_level_recording_absurd_parameters_opens_on_the_defaults(monkeypatch):
    from editor.model import Edit, IndexSync, Settings

    monkeypatch.setenv(MEMORY_BUDGET_ENV, "1024")
    scene = load_document(shared_file("quake", "librequake_e3m4_valve220.map"))
    absurd = Settings("quadtree", ABSURD["quadtree"][0], scene.settings.metadata)
    scene.apply(Edit(settings=absurd))
    sync = IndexSync(scene)
    assert "memory budget of 1024 MB" in sync.fallback and "defaults" in sync.fallback
    assert sync.index.name == "quadtree" and sync.index.params == sync.index.Params()
    assert len(sync.index) == len(scene.indexed_ids())
    assert scene.settings == absurd, "the document keeps what it recorded"
