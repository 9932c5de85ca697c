"""Two partitions of one document measured on the same work (compare mode), Qt-free.

* :mod:`.queries` — the deterministic set of rays, frusta and boxes both sides answer;
* :mod:`.sides` — a side (backend + parameters) and its index, built through the document's
  one path to an index (:meth:`~editor.model.index_input.IndexInput.build`);
* :mod:`.measure` — what one side costs: build, update, pairs, per-query work, memory, depth,
  duplication;
* :mod:`.report` — both sides and their ratios (the ``compare`` command's JSON and the GUI's
  table read the same :class:`~.report.Comparison`);
* :mod:`.difference` — where they differ: a per-region difference grid and the objects whose
  cost differs most;
* :mod:`.tree_diff` — which nodes an edit created, split, merged or removed;
* :mod:`.readable` — node filters that keep a big tree readable (focus, depth limit);
* :mod:`.frames` — each side replaying the timeline's frame, and both sides' per-frame figures.
"""
from __future__ import annotations

from .queries import QuerySet, query_set
from .report import Comparison, compare_document
from .sides import SideSpec

__all__ = ["Comparison", "QuerySet", "SideSpec", "compare_document", "query_set"]
