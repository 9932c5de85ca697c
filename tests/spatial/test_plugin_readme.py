"""The backend example in plugins/README.md works as written, loaded from a plugin folder."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from plugins.brute import BruteForce
from spatial.registry import Registry
from spatial.scenegen import random_boxes

from .oracle import assert_matches

README = Path(__file__).resolve().parents[2] / "plugins" / "README.md"


def example_source() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert blocks, "plugins/README.md has no python example"
    return blocks[0]


def test_readme_backend_loads_from_a_plugin_folder_and_matches_brute_force(tmp_path):
    (tmp_path / "sweep.py").write_text(example_source(), encoding="utf-8")
    registry = Registry()
    registry.load_folder(tmp_path)
    assert not registry.failures, registry.failures
    cls = registry.backend("sweep")
    rng = np.random.default_rng(4)
    ids, lo, hi = random_boxes(300, seed=2, world=200.0)
    dynamic = rng.random(300) < 0.5
    index, oracle = cls(axis=1), BruteForce()
    index.build(ids, lo, hi, dynamic)
    oracle.build(ids, lo, hi, dynamic)
    assert_matches(index, oracle, rng)
    index.update(ids[:30], lo[:30] + 50, hi[:30] + 50)
    oracle.update(ids[:30], lo[:30] + 50, hi[:30] + 50)
    assert_matches(index, oracle, rng)


def test_readme_kernels_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    kernels = [b for b in blocks if "spatial.kernels" in b]
    assert kernels, "plugins/README.md has no spatial.kernels example"
    exec(compile(kernels[0], str(README), "exec"), {})
