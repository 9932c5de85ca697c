"""The rebuild policy of :class:`IndexSync`, run the way the editor runs it: through a runner
that finishes later (a worker thread there, a queue here), with a warm-up hook."""
from __future__ import annotations

import pytest

from editor.model import IndexSync, SetSettings, Transform
from editor.model.index_sync import run_inline

from .helpers import assert_index_matches, private_registry, small_scene


class QueuedRunner:
    """Holds each build until the test delivers it, as a worker thread would later."""

    def __init__(self) -> None:
        self.queue: list = []

    def __call__(self, build, prepare, done, failed):
        job = _Queued(build, prepare, done, failed)
        self.queue.append(job)
        return job

    def finish_all(self) -> None:
        jobs, self.queue = self.queue, []
        for job in jobs:
            job.finish()


class _Queued:
    def __init__(self, build, prepare, done, failed) -> None:
        self.build, self.prepare, self.done, self.failed = build, prepare, done, failed
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def finish(self) -> None:
        if self.prepare is not None:
            self.prepare()
        try:
            index = self.build()  # a cancelled worker still runs its build; the result is dropped
        except BaseException as exc:  # noqa: B036 - as the worker thread does
            self.failed(exc)
            return
        self.done(index, 1.0)  # delivered even when cancelled: the sync must drop it


class ColdBackends:
    """A warm-up hook that says which backends are cold and records its preparations."""

    def __init__(self, cold) -> None:
        self.cold = set(cold)
        self.prepared: list[tuple[str, str]] = []
        self.cancelled: list[str] = []

    def needed(self, backend: str) -> bool:
        return backend in self.cold

    def preparation(self, backend: str, current: str):
        hook = self

        class Preparation:
            def run(self) -> None:
                hook.prepared.append((backend, current))
                hook.cold.discard(backend)

            def cancel(self) -> None:
                hook.cancelled.append(backend)

        return Preparation()


def _sync(runner=None, warm_up=None, background_above=1000):
    scene, stack, ids = small_scene()
    registry = private_registry()
    sync = IndexSync(scene, registry=registry, runner=runner, warm_up=warm_up,
                     background_above=background_above)
    events: list = []
    sync.rebuild_started.connect(lambda: events.append(("started", sync.rebuilding)))
    sync.rebuild_finished.connect(lambda ms: events.append(("finished", sync.index.name)))
    return scene, stack, ids, registry, sync, events


def test_the_default_runner_builds_at_once():
    scene, stack, ids, registry, sync, events = _sync()
    assert sync.runner is run_inline
    stack.push(SetSettings(backend="tuned-brute", params={"chunk": 7}, registry=registry))
    assert sync.index.name == "tuned-brute" and sync.index.params.chunk == 7
    assert events == [("started", False), ("finished", "tuned-brute")]
    assert_index_matches(sync)


def test_new_parameters_of_the_same_backend_rebuild_in_place():
    scene, stack, ids, registry, sync, events = _sync()
    stack.push(SetSettings(backend="tuned-brute", registry=registry))
    index = sync.index
    stack.push(SetSettings(params={"chunk": 3}, registry=registry))
    assert sync.index is index and index.params.chunk == 3
    assert_index_matches(sync)


def test_above_the_size_a_rebuild_goes_through_the_runner():
    runner = QueuedRunner()
    scene, stack, ids, registry, sync, events = _sync(runner, background_above=2)
    old = sync.index
    stack.push(SetSettings(backend="tuned-brute", params={"chunk": 5}, registry=registry))
    assert sync.rebuilding and sync.index is old and events == [("started", True)]
    runner.finish_all()
    assert not sync.rebuilding and sync.index.name == "tuned-brute"
    assert events[-1] == ("finished", "tuned-brute")
    assert_index_matches(sync)


def test_below_the_size_the_runner_is_not_used():
    runner = QueuedRunner()
    scene, stack, ids, registry, sync, events = _sync(runner, background_above=1000)
    stack.push(SetSettings(backend="tuned-brute", registry=registry))
    assert not runner.queue and sync.index.name == "tuned-brute"


def test_a_result_older_than_the_scene_is_built_again():
    runner = QueuedRunner()
    scene, stack, ids, registry, sync, events = _sync(runner, background_above=2)
    stack.push(SetSettings(backend="tuned-brute", registry=registry))
    # the scene moves on while the worker builds: the old index follows the edit at once
    stack.push(Transform([ids["pillar"]], (64, 0, 0)))
    assert sync.index.name == "brute"
    assert_index_matches(sync)
    runner.finish_all()  # stale: dropped, and a new build starts
    assert sync.rebuilding and sync.index.name == "brute" and len(runner.queue) == 1
    runner.finish_all()
    assert sync.index.name == "tuned-brute" and not sync.rebuilding
    assert_index_matches(sync)


def test_a_background_switch_gathers_its_record_in_the_runner(monkeypatch):
    """The switch's own call (the window's thread in the editor) gathers nothing: the record
    of the scene is read in the runner's build (the worker thread), which it held ~100 ms
    on a real level."""
    import editor.model.index_sync as index_sync

    runner = QueuedRunner()
    scene, stack, ids, registry, sync, events = _sync(runner, background_above=2)
    gathered: list[str] = []
    real = index_sync.index_input
    monkeypatch.setattr(index_sync, "index_input",
                        lambda scene: gathered.append("read") or real(scene))
    stack.push(SetSettings(backend="tuned-brute", registry=registry))
    assert gathered == [] and len(runner.queue) == 1
    runner.finish_all()
    assert gathered == ["read"] and sync.index.name == "tuned-brute"
    assert_index_matches(sync)


def test_a_read_that_failed_under_an_edit_is_built_again_not_reported(monkeypatch):
    import editor.model.index_sync as index_sync

    runner = QueuedRunner()
    scene, stack, ids, registry, sync, events = _sync(runner, background_above=2)
    failures: list = []
    sync.rebuild_failed.connect(lambda backend, exc: failures.append(backend))
    real = index_sync.index_input
    torn = [True]

    def read(scene):
        if torn.pop() if torn else False:  # the first read meets an edit in progress
            raise RuntimeError("dictionary changed size during iteration")
        return real(scene)
    monkeypatch.setattr(index_sync, "index_input", read)
    stack.push(SetSettings(backend="tuned-brute", registry=registry))
    stack.push(Transform([ids["pillar"]], (64, 0, 0)))  # the edit the read met
    runner.finish_all()
    assert failures == [] and sync.rebuilding and len(runner.queue) == 1
    runner.finish_all()
    assert sync.index.name == "tuned-brute" and not sync.rebuilding and failures == []
    assert_index_matches(sync)


def test_cancel_drops_the_result_in_flight():
    runner = QueuedRunner()
    scene, stack, ids, registry, sync, events = _sync(runner, background_above=2)
    stack.push(SetSettings(backend="tuned-brute", registry=registry))
    job = runner.queue[0]
    sync.cancel()
    assert job.cancelled and not sync.rebuilding
    runner.finish_all()
    assert sync.index.name == "brute"


def test_a_newer_switch_replaces_the_one_in_flight():
    runner = QueuedRunner()
    scene, stack, ids, registry, sync, events = _sync(runner, background_above=2)
    stack.push(SetSettings(backend="tuned-brute", params={"chunk": 9}, registry=registry))
    stack.undo()  # back to brute before the first build arrived
    assert runner.queue[0].cancelled
    runner.finish_all()
    assert sync.index.name == "brute" and not sync.rebuilding
    assert_index_matches(sync)


def test_a_cold_backend_is_prepared_first_through_the_runner():
    runner, hook = QueuedRunner(), ColdBackends({"tuned-brute"})
    scene, stack, ids, registry, sync, events = _sync(runner, hook, background_above=1000)
    stack.push(SetSettings(backend="tuned-brute", registry=registry))
    # small, but cold: in the background, preparing while the old tree stays on screen
    assert sync.rebuilding and sync.preparing_backend == "tuned-brute"
    runner.finish_all()
    assert hook.prepared == [("tuned-brute", "brute")]
    assert sync.preparing_backend is None and sync.index.name == "tuned-brute"
    stack.undo()  # brute is warm: at once
    assert not sync.rebuilding and sync.index.name == "brute"


def test_cancel_stops_the_preparation():
    runner, hook = QueuedRunner(), ColdBackends({"tuned-brute"})
    scene, stack, ids, registry, sync, events = _sync(runner, hook)
    stack.push(SetSettings(backend="tuned-brute", registry=registry))
    sync.close()
    assert hook.cancelled == ["tuned-brute"] and sync.preparing_backend is None


def test_settings_are_parsed_once_where_they_enter(monkeypatch):
    scene, stack, ids, registry, sync, events = _sync()
    import spatial.params

    calls = []
    real = spatial.params.parse_params
    monkeypatch.setattr(spatial.params, "parse_params",
                        lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    stack.push(SetSettings(backend="tuned-brute", params={"chunk": 11}, registry=registry))
    stack.undo()
    stack.redo()
    assert sync.index.params.chunk == 11
    assert len(calls) == 1, "the command parsed them; the sync read its cached value"


@pytest.mark.parametrize("name", ["missing-plugin"])
def test_an_unknown_backend_in_the_settings_falls_back_once(name):
    from editor.model.scene import Edit, Settings

    scene, stack, ids, registry, sync, events = _sync()
    scene.apply(Edit(settings=Settings(backend="tuned-brute")))
    assert sync.index.name == "tuned-brute"
    scene.apply(Edit(settings=Settings(backend=name)))
    assert sync.index.name == "brute" and name in sync.fallback
    count = len(events)
    scene.apply(Edit(settings=Settings(backend=name, metadata={"x": 1})))
    assert len(events) == count  # already fallen back: nothing to rebuild


def _breaking(registry, monkeypatch, exc):
    """Make the tunable backend's builds (and rebuilds in place) raise ``exc``."""
    cls = registry.backend("tuned-brute")

    def broken(self, *args, **kwargs):
        raise exc

    monkeypatch.setattr(cls, "nodes", broken)


@pytest.mark.parametrize("background", [False, True])
@pytest.mark.parametrize("exc", [RuntimeError("bad split"), SystemExit(3)])
def test_a_failed_build_keeps_the_live_index_and_says_so(monkeypatch, background, exc):
    runner = QueuedRunner()
    scene, stack, ids, registry, sync, events = _sync(runner=runner,
                                                       background_above=0 if background else 1000)
    failures: list = []
    sync.rebuild_failed.connect(lambda backend, error: failures.append((backend, error)))
    before = sync.index
    _breaking(registry, monkeypatch, exc)
    stack.push(SetSettings(backend="tuned-brute", registry=registry))
    runner.finish_all()
    assert failures == [("tuned-brute", exc)]
    assert sync.index is before and not sync.rebuilding and sync.preparing_backend is None
    assert_index_matches(sync)


def test_a_failed_rebuild_in_place_restores_the_parameters(monkeypatch):
    scene, stack, ids, registry, sync, events = _sync()
    stack.push(SetSettings(backend="tuned-brute", params={"chunk": 5}, registry=registry))
    failures: list = []
    sync.rebuild_failed.connect(lambda backend, error: failures.append(backend))
    _breaking(registry, monkeypatch, ValueError("no"))
    stack.push(SetSettings(params={"chunk": 9}, registry=registry))
    assert failures == ["tuned-brute"] and sync.index.params.chunk == 5


def test_a_backend_named_for_the_sync_is_kept_when_the_settings_change():
    """A side of compare mode names its own backend: the document's choice does not move it."""
    scene, stack, ids = small_scene()
    registry = private_registry()
    own = IndexSync(scene, "brute", registry=registry)
    following = IndexSync(scene, registry=registry)
    stack.push(SetSettings(backend="tuned-brute", registry=registry))
    assert own.index.name == "brute" and following.index.name == "tuned-brute"
    assert_index_matches(own)
