"""The Tune dialog's engine chooser: tune a game engine's own knobs instead of our backend's.

"Engine" offers every profile of :mod:`spatial.engines` (or none: our backends); "Units per
metre" converts lengths (default from the level's format, :func:`spatial.engines.units.level_scale`).
The search job and the export of the chosen trial in the engine's own syntax live here so the
dialog only routes to them.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox

from spatial.atomic import atomic_write_text
from spatial.engines import ENGINE_NAMES, engine_profile
from spatial.engines.units import level_scale


class EngineChoice:
    """The two widgets and what an engine search needs from them."""

    def __init__(self, level_path: str | None) -> None:
        self.combo = QComboBox()
        self.combo.setObjectName("tune_engine")
        self.combo.addItem("none (our backends)", "")
        for name in ENGINE_NAMES:
            profile = engine_profile(name)
            self.combo.addItem(f"{profile.title} ({name})", name)
            self.combo.setItemData(self.combo.count() - 1, f"writes {profile.syntax}; modelled by our "
                                   f"{profile.backend}", Qt.ItemDataRole.ToolTipRole)
        self.combo.setToolTip("Tune a game engine's own broad-phase settings (docs/engines.md)")
        upm, self.up_axis = level_scale(level_path)
        self.units = QDoubleSpinBox()
        self.units.setObjectName("tune_units_per_metre")
        self.units.setRange(1e-3, 1e6)
        self.units.setDecimals(3)
        self.units.setValue(upm)
        self.units.setToolTip("Level units per metre, for the engine's lengths (32 for Quake and "
                              "Doom maps, 1 for meshes)")
        self.combo.currentIndexChanged.connect(lambda _: self.units.setEnabled(bool(self.name())))
        self.units.setEnabled(False)

    def name(self) -> str:
        """The chosen engine, or "" for our backends."""
        return self.combo.currentData() or ""

    def choose(self, name: str) -> None:
        self.combo.setCurrentIndex(max(0, self.combo.findData(name)))

    def set_enabled(self, enabled: bool) -> None:
        self.combo.setEnabled(enabled)
        self.units.setEnabled(enabled and bool(self.name()))

    def job(self, workload, budget: float, seed: int, weights, source: str):
        """The worker's job for an engine search, or None when no engine is chosen."""
        if not self.name():
            return None
        from spatial.engines.profile import LevelFrame
        from spatial.engines.tuning import tune_engine

        profile = engine_profile(self.name())
        frame = LevelFrame.of(workload.lo, workload.hi, self.units.value(), self.up_axis)

        def run(cancel, on_trial, on_stage):
            return tune_engine(profile, workload, frame, budget_s=budget, seed=seed, weights=weights,
                               cancel=cancel, source=source,
                               on_trial=lambda p: on_trial(profile.name, p))
        return run

    @staticmethod
    def export(tuning, trial, path: str) -> None:
        """Write ``trial`` (one of ``tuning``'s) in the engine's syntax, atomically. The search's
        best trial is written as the tuning settled it: an engine that runs here (Chipmunk) may
        have replaced the model's values with those its own timing kept."""
        import dataclasses

        settings = tuning.settings
        if trial is not tuning.result.best:
            settings = dataclasses.replace(settings, values=dict(trial.params), cost=trial.cost)
        atomic_write_text(path, settings.profile.render(settings))
