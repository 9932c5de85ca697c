"""Editing and query tools. The :class:`ToolManager` routes view gestures to the active tool.

Every edit a tool makes is a command pushed on the document's undo stack (the GUI never
mutates the scene); selection changes are commands too (undoable, never dirtying the file).
"""
from __future__ import annotations

from .manager import TOOL_NAMES, ToolManager

__all__ = ["ToolManager", "TOOL_NAMES"]
