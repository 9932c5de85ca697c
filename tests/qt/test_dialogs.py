"""The Tune and Plugins dialogs on the demo level (offscreen-safe: no GL view)."""
from __future__ import annotations

import json
import textwrap

import pytest

#: the search budget of a test run (compiling kernels the first time comes on top)
BUDGET_S = 1.0
#: how long a test waits for a search to end (budget, warm-up, workload and a slow machine)
WAIT_MS = 60_000


def _tune_dialog(qtbot, window):
    from editor.qt.dialogs.tune_dialog import TuneDialog
    dialog = TuneDialog(window.document, window)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.budget_spin.setValue(BUDGET_S)
    return dialog


def _run(qtbot, dialog):
    dialog.start()
    assert dialog.running
    qtbot.waitUntil(lambda: not dialog.running, timeout=WAIT_MS)
    assert not dialog.errors


def test_menu_actions_open_the_dialogs(qtbot, window):
    from shiboken6 import isValid

    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    assert window.act_tune in menus["Tools"].actions()
    assert window.act_plugins in menus["Help"].actions()
    window.act_tune.trigger()
    assert window.tune_dialog.isVisible()
    assert window.tune_dialog.backend_combo.currentData() == window.document.index.name
    dialog = window.tune_dialog
    window.act_tune.trigger()
    assert window.tune_dialog is dialog  # one Tune dialog per document, raised again
    window.open_file(None, background=False)  # a new document closes it
    assert not isValid(dialog) or not dialog.isVisible()
    window.act_plugins.trigger()
    assert window.plugins_dialog.isVisible() and window.plugins_dialog.rows()
    window.plugins_dialog.close()


def test_tune_finds_no_worse_parameters_and_apply_is_one_undo_step(qtbot, window):
    from spatial.params import params_to_dict

    doc = window.document
    before_settings = doc.scene.settings
    before_params = params_to_dict(doc.index.params)
    dialog = _tune_dialog(qtbot, window)
    assert dialog.backend_combo.currentData() == doc.index.name  # the current backend by default
    _run(qtbot, dialog)

    assert len(dialog.rows) >= 2
    assert dialog.table.rowCount() >= 2
    assert len(dialog.trial_points.getData()[0]) == len(dialog.rows)
    defaults = dialog.defaults[doc.index.name]
    assert defaults.ok and defaults.params == before_params
    best = dialog.chosen
    assert best.trial.cost <= defaults.cost
    # the tuner's pick among ties: within its tolerance of the cheapest, nearest the defaults
    result = dialog.results[doc.index.name]
    assert best.trial is result.best
    assert best.trial.cost <= min(r.trial.cost for r in dialog.rows) * (1 + result.tie_tolerance)
    assert doc.scene.settings == before_settings and not doc.is_dirty()  # nothing applied yet

    if best.trial.params == before_params:
        pytest.skip("the search found nothing cheaper than the defaults in its budget")
    assert dialog.apply()
    assert doc.is_dirty()
    assert params_to_dict(doc.index.params) == best.trial.params
    doc.stack.undo()
    assert params_to_dict(doc.index.params) == before_params
    assert doc.scene.settings == before_settings
    assert not doc.is_dirty()


def test_cancel_leaves_scene_and_document_untouched(qtbot, window):
    doc = window.document
    settings, depth = doc.scene.settings, doc.stack.index
    dialog = _tune_dialog(qtbot, window)
    dialog.budget_spin.setValue(60.0)
    dialog.start()
    qtbot.waitUntil(lambda: len(dialog.rows) >= 1, timeout=WAIT_MS)
    dialog.stop()
    qtbot.waitUntil(lambda: not dialog.running, timeout=WAIT_MS)
    assert any(r.cancelled for r in dialog.results.values())
    assert doc.scene.settings == settings
    assert not doc.is_dirty() and not doc.stack.can_undo()
    assert doc.stack.index == depth
    # closing while a search runs cancels it and changes nothing either
    dialog.start()
    dialog.reject()
    assert dialog.worker is None
    assert doc.scene.settings == settings and not doc.is_dirty()


@pytest.mark.slow
def test_export_writes_every_format(qtbot, window, tmp_path):
    from spatial.tuned_params import load_params_document

    dialog = _tune_dialog(qtbot, window)
    _run(qtbot, dialog)
    chosen = dialog.chosen
    assert dialog.format_combo.count() == len(dialog.registry.exporters_of_kind("params"))
    path = tmp_path / "tuned.json"
    dialog.export_to(str(path), "json")
    document, params = load_params_document(path)
    assert document["backend"] == chosen.backend
    assert document["params"] == chosen.trial.params
    assert document["cost"]["tuned"] == chosen.trial.cost
    header = tmp_path / "tuned.h"
    dialog.export_to(str(header), "c-header")
    assert "#define" in header.read_text()
    for fmt, name in (("unreal-ini", "tuned.ini"), ("godot", "tuned.godot")):
        dialog.export_to(str(tmp_path / name), fmt)
        assert (tmp_path / name).read_text().strip()
    json.loads(path.read_text())


def test_all_backends_ranks_every_backend_but_brute(qtbot, window):
    from editor.qt.dialogs.tune_dialog import ALL_BACKENDS, TuneDialog
    from spatial.registry import Registry, default_registry
    from spatial.tuner import TIE_TOLERANCE

    # two quick backends (plus brute, which is never tuned) keep this test short
    registry = Registry()
    for name in ("brute", "grid", "kdtree"):
        registry.add_backend(default_registry().backend(name))
    dialog = TuneDialog(window.document, window, registry=registry)
    qtbot.addWidget(dialog)
    dialog.set_backend_choice(ALL_BACKENDS)
    dialog.budget_spin.setValue(2.0)
    _run(qtbot, dialog)
    measured = {r.backend for r in dialog.rows}
    assert measured == {"grid", "kdtree"}
    # the pick is the tuner's: the cheapest backend's tie-resolved best (among costs within the
    # tie tolerance of the cheapest, the one closest to the defaults), not the bare minimum
    cheapest = min(r.trial.cost for r in dialog.rows)
    best = min((r for r in dialog.results.values() if r.best is not None), key=lambda r: r.best.cost)
    assert dialog.chosen.trial is best.best and dialog.chosen.backend == best.backend
    assert dialog.chosen.trial.cost <= cheapest * (1 + TIE_TOLERANCE)


def test_pareto_front_is_the_non_dominated_points():
    import numpy as np

    from editor.qt.dialogs.tune_dialog import pareto_front

    cost = np.array([5.0, 3.0, 4.0, 1.0, 2.0])
    memory = np.array([1.0, 2.0, 3.0, 5.0, 5.0])
    front = pareto_front(cost, memory)
    assert front.tolist() == [0, 1, 3]


def _plugin_folder(tmp_path):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "broken_plugin.py").write_text("import not_a_module_anywhere_xyz\n")
    (folder / "extra_brute.py").write_text(textwrap.dedent("""
        from plugins.brute import BruteForce

        class ExtraBrute(BruteForce):
            name = "extra_brute"
            description = "A second brute force, from a plugin folder."

        def register(registry):
            registry.add_backend(ExtraBrute)
    """))
    return folder


def test_plugins_dialog_lists_builtins_and_a_broken_plugins_error(qtbot, window, tmp_path):
    from editor.qt.dialogs import open_plugins_dialog
    from spatial.registry import Registry

    registry = Registry()
    registry.load_builtins()
    window.params_panel.registry = registry  # the chooser refreshes from this registry
    dialog = open_plugins_dialog(window, registry=registry)
    qtbot.addWidget(dialog)
    rows = dialog.rows()
    provided = {p for row in rows for p in row["provides"]}
    for name in ("brute", "octree"):
        assert f"backend:{name}" in provided
    assert all(row["source"] == "builtin" for row in rows)

    dialog.add_folder(str(_plugin_folder(tmp_path)))
    rows = {row["name"].rsplit("/", 1)[-1]: row for row in dialog.rows()}
    broken = rows["broken_plugin.py"]
    assert broken["error"] and "not_a_module_anywhere_xyz" in broken["error"]
    item = dialog.tree.topLevelItem(list(rows).index("broken_plugin.py"))
    assert "not_a_module_anywhere_xyz" in item.text(3)
    assert item.text(2) == "failed"
    assert rows["extra_brute.py"]["provides"] == ["backend:extra_brute"]
    combo = window.params_panel.backend_combo
    assert combo.findData("extra_brute") >= 0  # the backend chooser was reloaded
    assert combo.currentData() == window.document.index.name
    dialog.tree.setCurrentItem(item)
    assert "not_a_module_anywhere_xyz" in dialog.details.toPlainText()
