"""Routes view gestures (2D clicks and drags, 3D pick rays, arrow keys) to the active tool."""
from __future__ import annotations

from .edit_ops import nudge_selection
from .edit_tools import BrushTool, EntityTool, SelectTool
from .query_tools import FrustumTool, InspectTool, RayTool

#: tool name -> (label, shortcut, tooltip)
TOOL_NAMES = {
    "select": ("Select", "S",
               "Select (click, Shift add, Ctrl toggle, drag a box); drag to move; drag handles to resize"),
    "brush": ("Brush", "B", "Create a box brush by dragging in a 2D view"),
    "entity": ("Entity", "N", "Place an entity of the palette's class with a click"),
    "ray": ("Ray", "R", "Cast a ray: drag in a 2D view or click in the 3D view"),
    "frustum": ("Frustum", "F", "Place a camera frustum: drag from the eye toward the target"),
    "inspect": ("Inspect node", "I", "Click a tree node to inspect it"),
}


class ToolManager:
    """Owns one instance of each tool; ``current()`` is the active one."""

    def __init__(self, state) -> None:
        self.state = state
        self.tools = {
            "select": SelectTool(state), "brush": BrushTool(state), "entity": EntityTool(state),
            "ray": RayTool(state), "frustum": FrustumTool(state), "inspect": InspectTool(state),
        }

    @property
    def waiting(self) -> set[str]:
        """Kernel families not loaded yet (``editor.qt.kernel_readiness`` keeps it): until
        they are loaded off the window's thread, gestures that would call them are ignored.
        The editor state's set, which picking reads too."""
        return self.state.kernels_waiting

    @waiting.setter
    def waiting(self, families: set[str]) -> None:
        self.state.kernels_waiting = set(families)

    def ready(self, needs=("pick", "edit")) -> bool:
        """Whether the kernel families ``needs`` are loaded; if not, the status bar says
        what the gesture waits for."""
        if self.waiting & set(needs):
            self.state.status_message.emit("The tools are being prepared (see the status bar)…")
            return False
        return True

    def ready_for(self, tool) -> bool:
        """Whether ``tool``'s gestures can run now: the families its ``KERNELS`` names (every
        family of picking and editing for a tool that names none) are loaded."""
        return self.ready(getattr(tool, "KERNELS", ("pick", "edit")))

    def current(self):
        return self.tools[self.state.tool]

    def merge_id(self):
        """The ``merge_id`` of the edits of the active tool's gesture in progress, which
        merge into one undo step (a drag moving or resizing the selection), else None."""
        merge_id = getattr(self.current(), "merge_id", None)
        return merge_id() if merge_id is not None else None

    def nudge(self, unit_delta) -> bool:
        doc = self.state.document
        if doc is None or not self.ready(("edit",)):
            return False
        return nudge_selection(doc, unit_delta, self.state.grid_size, self.state.snap)

    def pick3d(self, origin, direction, modifiers) -> None:
        if self.state.document is None or not self.ready_for(self.current()):
            return
        handler = getattr(self.current(), "pick3d", None)
        if handler is not None:
            handler(origin, direction, modifiers)
