"""Plugin discovery: built-ins, plugin folders, entry points; failures reported, not fatal."""
from __future__ import annotations

import json
import textwrap
from types import SimpleNamespace

import pytest

from editor.cli import run_cli
from spatial import registry as registry_module
from spatial.errors import PluginError
from spatial.registry import Registry

GOOD = textwrap.dedent('''
    from dataclasses import dataclass
    from plugins.brute import BruteForce

    @dataclass(frozen=True)
    class P:
        pass

    class Renamed(BruteForce):
        name = "renamed-brute"
        Params = P

    def register(registry):
        registry.add_backend(Renamed)
        registry.add_importer("dummy", ["*.dummy"], lambda path: None)
''')


def test_builtins_register_through_the_public_api():
    reg = Registry()
    reg.load_builtins()
    assert "brute" in reg.backends
    info = reg.plugins["plugins.brute"]
    assert info.loaded and info.source == "builtin" and "backend:brute" in info.provides


def test_folder_plugins_load_and_broken_ones_are_reported(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "syntax_error.py").write_text("def register(registry:\n")
    (tmp_path / "raises.py").write_text(textwrap.dedent('''
        from plugins.brute import BruteForce
        class Half(BruteForce):
            name = "half-registered"
        def register(registry):
            registry.add_backend(Half)
            raise RuntimeError("boom after adding a backend")
    '''))
    (tmp_path / "no_register.py").write_text("X = 1\n")
    (tmp_path / "pkgplugin").mkdir()
    (tmp_path / "pkgplugin" / "__init__.py").write_text(
        "def register(registry):\n    registry.add_motion('still', object)\n")
    reg = Registry()
    reg.load_folder(tmp_path)
    assert "renamed-brute" in reg.backends
    assert reg.importer_for("level.DUMMY").name == "dummy"
    assert "still" in reg.motions
    errors = {p.name.split("/")[-1]: p.error for p in reg.failures}
    assert set(errors) == {"syntax_error.py", "raises.py", "no_register.py"}
    assert "SyntaxError" in errors["syntax_error.py"]
    assert "boom after adding a backend" in errors["raises.py"]
    assert "register" in errors["no_register.py"]
    # what the failing plugin added before raising was rolled back
    assert "half-registered" not in reg.backends


def test_entry_point_plugins_load(monkeypatch):
    module = SimpleNamespace(register=lambda r: r.add_motion("from-entry-point", object))
    broken = SimpleNamespace(name="broken", load=lambda: (_ for _ in ()).throw(ImportError("missing dep")),
                             dist=SimpleNamespace(name="broken-dist"))
    good = SimpleNamespace(name="good", load=lambda: module, dist=SimpleNamespace(name="good-dist"))
    import importlib.metadata as md
    monkeypatch.setattr(md, "entry_points",
                        lambda group: [good, broken] if group == registry_module.ENTRY_POINT_GROUP else [])
    reg = Registry()
    reg.load_entry_points()
    assert "from-entry-point" in reg.motions
    assert reg.plugins["broken"].error.startswith("import failed: ImportError: missing dep")
    assert reg.plugins["good"].source == "entry-point:good-dist"


def test_duplicate_names_are_refused():
    reg = Registry()
    reg.load_builtins()
    from plugins.brute import BruteForce

    class Other(BruteForce):
        name = "brute"
    with pytest.raises(PluginError, match="already registered"):
        reg.add_backend(Other)
    with pytest.raises(PluginError, match="unknown backend 'nope'"):
        reg.backend("nope")


def test_cli_lists_a_broken_plugin_and_carries_on(tmp_path, capsys):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "broken.py").write_text("import no_such_module_anywhere\n")
    registry_module.reset_default_registry()
    try:
        code = run_cli(["--plugin-dir", str(tmp_path), "plugins", "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        report = json.loads(out)
        assert "renamed-brute" in report["backends"]
        failed = [p for p in report["plugins"] if p["error"] and p["source"].startswith("folder:")]
        assert len(failed) == 1 and "no_such_module_anywhere" in failed[0]["error"]
        code = run_cli(["stats", "--random", "30", "--backend", "renamed-brute", "--json"])
        assert code == 0
    finally:
        registry_module.reset_default_registry()
