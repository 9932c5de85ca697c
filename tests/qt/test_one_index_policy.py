"""The editor has no rebuild policy of its own: the document's index follows the settings
through the model's :class:`~editor.model.IndexSync`, which the GUI only gives a thread."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the names are spelled in two parts so that this test is not itself a hit of a tree search
POLICY_CHECK = "_settings" + "_differ"
RETIRED_SWITCH = "follow" + "_settings"


def test_the_gui_document_runs_the_models_policy(window, qtbot, monkeypatch):
    from editor.model.index_sync import IndexSync
    from editor.qt.thread_runner import run_on_thread

    doc = window.document
    assert type(doc.sync) is IndexSync and doc.sync.runner is run_on_thread
    calls = []
    real = IndexSync.rebuild_for_settings
    monkeypatch.setattr(IndexSync, "rebuild_for_settings",
                        lambda self, *a, **k: calls.append(self) or real(self, *a, **k))
    combo = window.params_panel.backend_combo
    combo.setCurrentIndex(combo.findText("bvh"))  # the Partition panel's backend chooser
    # a cold kernel cache prepares the backend on a worker thread first
    qtbot.waitUntil(lambda: not doc.rebuilding, timeout=180_000)
    assert calls == [doc.sync] and doc.index.name == "bvh"


def _defined_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def test_only_the_model_decides_when_the_index_rebuilds():
    owners = [p.relative_to(ROOT).as_posix() for folder in ("editor", "plugins", "spatial")
              for p in sorted((ROOT / folder).rglob("*.py")) if POLICY_CHECK in _defined_names(p)]
    assert owners == ["editor/model/index_sync.py"]
    gui = ROOT / "editor" / "qt"
    for path in gui.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        # the GUI neither builds an index from the document nor parses parameters for one
        assert "index_input(" not in text, path
        assert "parse_params(" not in text, path
        assert RETIRED_SWITCH not in text, path
