"""Containment of plugin code: every failure becomes a reason, stdout goes to stderr, time limits."""
from __future__ import annotations

import signal
import sys
import threading
import types

import pytest

from spatial.plugin_guard import contained
from spatial.registry import Registry


def test_a_value_comes_back_when_the_call_succeeds():
    outcome = contained(lambda: 42, time_limit=5)
    assert outcome.ok and outcome.value == 42 and outcome.error == ""


@pytest.mark.parametrize("raise_it,reason", [
    (lambda: sys.exit(3), "called sys.exit(3)"),
    (lambda: sys.exit(), "called sys.exit(None)"),
    (lambda: (_ for _ in ()).throw(KeyboardInterrupt()), "raised KeyboardInterrupt"),
    (lambda: 1 / 0, "ZeroDivisionError: division by zero"),
])
def test_every_failure_becomes_a_one_line_reason(raise_it, reason):
    outcome = contained(raise_it)
    assert not outcome.ok
    assert outcome.error.startswith(reason)
    assert "\n" not in outcome.error


def test_print_goes_to_stderr_while_plugin_code_runs(capsys):
    contained(lambda: print("from the plugin"))
    out, err = capsys.readouterr()
    assert out == "" and "from the plugin" in err
    print("after")  # and stdout is restored afterwards
    assert capsys.readouterr().out == "after\n"


def _spin_and_swallow_the_first_timeout():
    try:
        while True:
            pass
    except BaseException:  # noqa: B036 - the careless plugin being tested
        pass
    while True:
        pass


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs POSIX interval timers")
def test_a_busy_loop_that_swallows_a_timeout_is_still_stopped():
    outcome = contained(_spin_and_swallow_the_first_timeout, time_limit=0.2)
    assert not outcome.ok and outcome.error == "did not finish within 0.2 s"
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)  # no alarm left armed


def test_off_the_main_thread_the_limit_still_holds():
    done = threading.Event()
    result = []

    def hang():
        done.wait(30)

    worker = threading.Thread(target=lambda: result.append(contained(hang, time_limit=0.2)))
    worker.start()
    worker.join(10)
    done.set()
    assert result and not result[0].ok and "did not finish" in result[0].error


def test_a_failing_register_is_rolled_back_and_the_plugin_named_in_tracebacks():
    module = types.ModuleType("third_party_plugin")

    def register(registry):
        registry.add_importer("half", ("*.half",), lambda path: None)
        raise SystemExit(1)
    module.register = register

    registry = Registry()
    assert not registry.load_module(module, "third-party", "folder:/x")
    assert registry.plugins["third-party"].error == "register() failed: called sys.exit(1)"
    assert "half" not in registry.importers
    assert registry.plugin_of_module("third_party_plugin.sub") == "third-party"
    assert registry.plugin_of_module("elsewhere") is None

    plugin_code = {"__name__": "third_party_plugin.backend"}
    exec("def explode():\n    raise ValueError('bad')\n", plugin_code)
    with pytest.raises(ValueError) as info:
        plugin_code["explode"]()
    assert registry.plugin_in_traceback(info.value) == ("third-party", "explode")
