"""The timeline dock: transport buttons, speed, loop, record, the frame slider and live plots."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSlider,
)

from ..panels.base import Panel, push_button
from ..quiet import signals_blocked
from .controller import SPEEDS
from .plots import LivePlots


class TimelinePanel(Panel):
    """Play, pause, step, stop, speed, loop, record and a slider over the recorded frames.

    Dragging the slider seeks: the recorded frame is replayed into a fresh index of the current
    backend (see :class:`~.controller.TimelineController`).
    """

    def __init__(self, controller, parent=None) -> None:
        super().__init__("timeline_panel", parent, margins=(4, 2, 4, 2))
        self.controller = controller
        outer = self.body
        bar = QHBoxLayout()
        self.play_button = push_button("▶ Play", controller.toggle,
                                       "Play or pause the simulation (Space)", "timeline_play")
        self.step_button = push_button("Step ▸|", lambda: controller.request_step(),
                                       "Advance one frame")
        self.stop_button = push_button("■ Stop", controller.stop, "Stop and return to the edited level")
        self.speed_combo = QComboBox()
        self.speed_combo.setObjectName("timeline_speed")
        self.speed_combo.setToolTip("Playback speed (times real time)")
        for s in SPEEDS:
            self.speed_combo.addItem(f"{s:g}×", s)
        self.speed_combo.setCurrentIndex(SPEEDS.index(1.0))
        self.speed_combo.currentIndexChanged.connect(
            lambda i: controller.set_speed(self.speed_combo.itemData(i)))
        self.loop_box = QCheckBox("Loop")
        self.loop_box.setToolTip("At the end of the recording, start again from its first frame")
        self.loop_box.toggled.connect(controller.set_loop)
        self.record_box = QCheckBox("Record")
        self.record_box.setChecked(controller.record)
        self.record_box.setToolTip("Keep every frame in the recording (for scrubbing and saving)")
        self.record_box.toggled.connect(controller.set_record)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setObjectName("timeline_slider")
        self.slider.setToolTip("Scrub through the recorded frames")
        self.slider.setEnabled(False)
        self.slider.valueChanged.connect(self._on_slider_moved)
        self.frame_label = QLabel("stopped")
        self.frame_label.setObjectName("timeline_frame_label")
        self.frame_label.setMinimumWidth(330)
        for w in (self.play_button, self.step_button, self.stop_button, QLabel("Speed"),
                  self.speed_combo, self.loop_box, self.record_box):
            bar.addWidget(w)
        bar.addWidget(self.slider, 1)
        bar.addWidget(self.frame_label)
        outer.addLayout(bar)
        self.plots = LivePlots(controller)
        outer.addWidget(self.plots, 1)
        controller.frame_changed.connect(self._on_frame_changed)
        controller.state_changed.connect(self._on_state_changed)
        controller.source_changed.connect(lambda: self._on_frame_changed(controller.last_stats))

    def _on_state_changed(self, state: str) -> None:
        self.play_button.setText("❚❚ Pause" if state == "playing" else "▶ Play")

    def _on_frame_changed(self, stats) -> None:
        c = self.controller
        first, last = c.frame_range()
        with signals_blocked(self.slider):
            self.slider.setEnabled(first >= 0)
            self.slider.setRange(max(first, 0), max(last, 0))
            self.slider.setValue(max(c.frame, 0))
        if stats is None or c.frame < 0:
            self.frame_label.setText("stopped: showing the edited level")
            return
        where = "live" if c.live else "replay"
        self.frame_label.setText(
            f"frame {c.frame} ({where})  awake {stats.awake}/{stats.dynamic}  pairs "
            f"{stats.candidates}/{stats.overlapping}  {stats.update_ms:.2f} ms")

    def _on_slider_moved(self, value: int) -> None:
        rec = self.controller.recording
        if rec is None or not len(rec):
            return
        # frame numbers may skip (a game's recording): land on the nearest held frame
        frames = rec.frame_numbers
        nearest = int(frames[min(int(np.searchsorted(frames, value)), len(frames) - 1)])
        self.controller.pause()
        self.controller.seek(nearest)
