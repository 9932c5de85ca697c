"""A running game's frames, live: the stream parser and the session that replays them.

Qt-free. :mod:`.frame_stream` turns bytes (frame lines and binary frames, see
``docs/live-link.md``) into header parts and :class:`~editor.model.recording.FrameRecord`
values; :mod:`.session` feeds those frames through the same frame step as a replay.
"""
