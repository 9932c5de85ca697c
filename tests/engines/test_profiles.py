"""Engine profiles: knobs with sources and legal defaults, unit conversion, the model class, and
every engine's text read back by that engine's dialect."""
from __future__ import annotations

import math

import numpy as np
import pytest

from spatial.backend_lookup import backend_class
from spatial.cost import measure
from spatial.engines import ENGINE_NAMES, engine_profile
from spatial.engines.profile import LevelFrame, engine_index_class, knob_params_class
from spatial.engines.tuning import default_settings
from spatial.engines.units import level_scale
from spatial.params import param_specs
from tests.engines.parsers import PARSERS
from tests.spatial.tuning_helpers import small_workload

FRAME = LevelFrame((-320.0, -640.0, 0.0), (960.0, 640.0, 256.0), 32.0, 2, 500, 24.0)


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_every_knob_has_a_source_and_a_legal_default(name):
    profile = engine_profile(name)
    assert profile.name == name and profile.knobs
    for knob in profile.knobs:
        assert knob.source and knob.help and knob.name
        value = knob.start
        if knob.choices:
            assert value in knob.choices and (knob.default is None or knob.default in knob.choices)
        elif value is not None:
            assert knob.lo is None or knob.lo <= value
            assert knob.hi is None or value <= knob.hi
    specs = {s.name: s for s in param_specs(knob_params_class(profile))}
    assert set(specs) == {k.key for k in profile.knobs}


def test_lengths_convert_between_level_and_engine_units():
    assert FRAME.to_level(0.1, "m") == pytest.approx(3.2)
    assert FRAME.to_engine(32.0, "cm") == pytest.approx(100.0)
    assert FRAME.to_engine(7.5, "units") == 7.5
    godot = engine_profile("godot")
    assert godot.backend_params({"bvh_collision_margin": 0.25}, FRAME)["margin"] == pytest.approx(8.0)
    unity = engine_profile("unity")  # 1280 units wide ground / 8 subdivisions
    assert unity.backend_params({"m_WorldSubdivisions": 8}, FRAME)["cell_size"] == pytest.approx(160.0)


def test_format_defaults_for_units_per_metre():
    assert level_scale("maps/e1m1.map") == (32.0, 2)
    assert level_scale("/usr/share/games/doom/freedoom1.wad:E1M1") == (32.0, 2)
    assert level_scale("world.obj") == (1.0, 1)
    assert level_scale(None) == (1.0, 2)


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_default_text_reads_back_with_the_engines_dialect(name):
    settings = default_settings(engine_profile(name), FRAME, source="test level")
    parsed = PARSERS[name](settings.profile.render(settings))
    for knob in settings.profile.knobs:
        if knob.key in parsed:
            want = settings.values[knob.key]
            got = parsed[knob.key]
            assert got == pytest.approx(want, rel=1e-5) if isinstance(want, float) else got == want


def test_unity_world_bounds_are_the_level_in_metres_with_y_up():
    settings = default_settings(engine_profile("unity"), FRAME)
    parsed = PARSERS["unity"](settings.profile.render(settings))
    # level z (up) becomes Unity's y
    assert parsed["m_Center"] == pytest.approx([10.0, 4.0, 0.0])
    assert parsed["m_Extent"] == pytest.approx([20.0, 4.0, 20.0])


def test_chipmunk_starts_from_the_median_object_size_and_sizes_the_table():
    settings = default_settings(engine_profile("chipmunk"), FRAME)
    parsed = PARSERS["chipmunk"](settings.profile.render(settings))
    assert parsed["dim"] == pytest.approx(24.0) and parsed["count"] == 5000 and parsed["enabled"]


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_the_model_builds_our_backend_with_the_translated_knobs(name):
    work = small_workload(n=60, frames=2)
    frame = LevelFrame.of(work.lo, work.hi, 1.0, 2)
    profile = default_settings(engine_profile(name), frame).profile
    base = backend_class(profile.backend)
    model = engine_index_class(profile, frame, base)
    index = model()
    assert isinstance(index, base) and isinstance(index.params, base.Params)
    assert dict(index.engine_params.__dict__) == profile.defaults()
    report = measure(model, model.Params(), work)
    assert math.isfinite(report.cost) and report.cost > 0
    bad = {k.key: "nope" for k in profile.knobs if k.choices}
    if bad:
        with pytest.raises(Exception, match="expected one of"):
            model(bad)
    assert np.isfinite(model.worst_case_bytes(model.Params(), work.lo, work.hi))


def test_bullets_margin_is_written_at_its_default_with_the_reason():
    """The model finds pairs on tight boxes where Bullet finds them on fat leaves, so it cannot
    weigh gDbvtMargin: a tuning keeps Bullet's default and the file says why."""
    from spatial.engines.tuning import tune_engine

    profile = engine_profile("bullet")
    knob = profile.knob("dbvt_margin")
    assert not knob.tunable and knob.default == 0.05
    tuned = tune_engine(profile, small_workload(), FRAME, budget_s=5, source="test level")
    text = tuned.render()
    assert PARSERS["bullet"](text)["dbvt_margin"] == pytest.approx(0.05)
    assert "not tuned" in text and "fat" in text
