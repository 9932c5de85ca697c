"""*File ▸ Save game's boxes as level…*: a live session's boxes written as a level file.

The boxes are the game's static objects and the movers of the frame on screen (the newest, or
the one scrubbed back to); :func:`editor.model.live.level.boxes_level` makes them a level (a
box brush each, named by the game's ``meta.names``) and :func:`editor.model.loading.save_level`
writes it, atomically, in the format the chosen name asks for (native ``.json`` by default).
The open document is not touched: the saved level is a new file, opened from *File ▸ Open*.
"""
from __future__ import annotations

import os

from editor.model.live.level import boxes_level
from editor.model.loading import level_file_types, save_level
from editor.model.scene import Settings

from ..prompts import file_filters


def shown_boxes(link) -> tuple | None:
    """``(frame, ids, lo, hi)`` of the movers of the game's frame on screen (its newest
    frame when the timeline shows something else), or ``None`` before the first frame."""
    source = link.source
    if source is None or source.last_record is None:
        return None
    controller = link.controller
    if link.source is not None and controller.simulation is link.source and controller.frame >= 0:
        bodies = controller.shown_bodies()
        if bodies is not None:
            return (controller.frame, *bodies[:3])
    record = source.last_record
    return record.frame, record.ids, record.lo, record.hi


def live_level(window):
    """The level of the live session's boxes (see the module docstring), or ``None``."""
    link = window.live_link
    shown = shown_boxes(link)
    if shown is None:
        return None
    frame, ids, lo, hi = shown
    source = link.source
    rec = source.recording
    meta = rec.meta
    game = meta.get("game") if isinstance(meta.get("game"), str) else "a game"
    file = f" ({meta['file']})" if isinstance(meta.get("file"), str) else ""
    current = window.document.scene.settings
    return boxes_level((rec.static_ids, rec.static_lo, rec.static_hi), (ids, lo, hi), source.names,
                       message=f"boxes of {game}{file} streamed from {source.name}, frame {frame}",
                       settings=Settings(backend=current.backend, params=current.params))


def save_live_level(window) -> bool:
    """Ask for a file name and save the live session's boxes there (True when saved)."""
    scene = live_level(window)
    if scene is None:
        window.report_error("Save game's boxes as level: no game has sent a frame yet")
        return False
    types = level_file_types(saving=True)
    filters = file_filters(types)
    answer = window.prompts.save_path("", filters)
    if not answer:
        return False
    path, chosen = answer
    if not os.path.splitext(path)[1]:
        patterns = types[filters.index(chosen)][1] if chosen in filters and chosen != filters[0] else ("*.json",)
        path += patterns[0].lstrip("*")
    try:
        save_level(scene, path)
    except Exception as exc:  # one line in a dialog, as for File > Save
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        window.report_error(message if path in message else f"{path}: could not save: {message}")
        return False
    window.statusBar().showMessage(f"Saved the game's boxes as {path}", 4000)
    return True
