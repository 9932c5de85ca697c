"""Partition Studio live link for Blender: stream the open scene into Partition Studio.

A panel in the 3D view's sidebar (N, tab *Partition Studio*) connects to Partition Studio
(*File ▸ Connect to game…* or ``python app.py listen``), sends the scene's mesh objects as boxes
(``scene_boxes``) and keeps sending them: every frame change (playback, scrubbing,
``frame_set``) and, while *Live* is on, every edit (at most one send each
:data:`EDIT_INTERVAL` seconds). Scripts call the same operators::

    bpy.ops.partition_studio.connect(host="127.0.0.1", port=7878)
    bpy.ops.partition_studio.send_scene()
    bpy.ops.partition_studio.disconnect()

The protocol is the project's own client, ``ps_link``: ``clients/blender/build_zip.py`` copies
``clients/python/ps_link.py`` into the add-on; run from the source tree, the add-on loads it
from there. ``docs/blender.md`` is the manual.
"""
import importlib.util
import time
from pathlib import Path

import bpy
from bpy.app.handlers import persistent
from bpy.props import BoolProperty, FloatProperty, IntProperty, PointerProperty, StringProperty

from .scene_boxes import is_static, measure, static_collections
from .scene_stream import SceneStream


def _repo_client():
    """``clients/python/ps_link.py`` of the source tree this add-on sits in (no zip build)."""
    path = Path(__file__).resolve().parents[2] / "python" / "ps_link.py"
    spec = importlib.util.spec_from_file_location(f"{__name__}.ps_link", path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ImportError(f"ps_link.py is neither in the add-on nor at {path}: "
                          "build the add-on with clients/blender/build_zip.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


try:
    from . import ps_link  # copied in by clients/blender/build_zip.py
except ImportError:
    ps_link = _repo_client()

#: seconds between two sends caused by edits while Live is on
EDIT_INTERVAL = 0.05
#: seconds between two polls of the link (push pending bytes, notice a closed editor)
POLL_INTERVAL = 0.2

_stream = SceneStream(ps_link)
_last_edit_send = 0.0
_edit_pending = False


# ---------------------------------------------------------------------- properties
class PartitionStudioSettings(bpy.types.PropertyGroup):
    """Where to send the scene and how (saved with the .blend file)."""

    host: StringProperty(name="Host", default="127.0.0.1",
                         description="Address Partition Studio listens on")
    port: IntProperty(name="Port", default=7878, min=1, max=65535,
                      description="Port Partition Studio listens on (File > Connect to game)")
    live: BoolProperty(name="Live", default=True,
                       description="Send every edit while connected (frame changes are always sent)")
    units_scale: FloatProperty(name="Units per metre", default=1.0, min=1e-6, soft_max=1000.0,
                               precision=4,
                               description="Blender metres x this = the units Partition Studio receives")


def _state(self):
    return _stream.state


def _frames_sent(self):
    return _stream.frames_sent


def _frames_dropped(self):
    return _stream.dropped


class PartitionStudioStatus(bpy.types.PropertyGroup):
    """The link's state, read from the stream (never saved, never written)."""

    state: StringProperty(name="State", get=_state, description="The connection's state")
    frames_sent: IntProperty(name="Frames sent", get=_frames_sent)
    frames_dropped: IntProperty(name="Frames dropped", get=_frames_dropped,
                                description="Frames dropped because Partition Studio was behind")


# ---------------------------------------------------------------------- sending
def _meta(scene) -> dict:
    """The header's meta: who sends, from which file, the frame time. (The file is ``file``,
    not ``source``: Partition Studio sets a recording's ``source`` to the connection.)"""
    fps = scene.render.fps / (scene.render.fps_base or 1.0)
    return {"game": "blender", "file": bpy.path.basename(bpy.data.filepath) or "untitled",
            "scene": scene.name, "dt": 1.0 / fps if fps > 0 else None, "blender": bpy.app.version_string}


def _redraw() -> None:
    """Repaint the sidebars showing the panel (the state changed outside a redraw)."""
    wm = getattr(bpy.context, "window_manager", None)
    for window in getattr(wm, "windows", ()):
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()


def _connect(context, host: str, port: int) -> bool:
    settings = context.scene.partition_studio
    snapshot = measure(context.evaluated_depsgraph_get(), bpy.data.collections)
    ok = _stream.connect(host, port, snapshot, settings.units_scale, _meta(context.scene))
    _redraw()
    return ok


def _send_frame(depsgraph) -> None:
    if _stream.link is None:
        return
    _stream.send(measure(depsgraph, bpy.data.collections, with_static=False))
    _redraw()


@persistent
def _on_frame_change(scene, depsgraph=None) -> None:
    """Playback, scrubbing and ``frame_set``: send the frame's movers."""
    if _stream.link is None:
        return
    _send_frame(depsgraph if depsgraph is not None else bpy.context.evaluated_depsgraph_get())


def _static_changed(depsgraph) -> bool:
    """An update moved or reshaped a static object (its box is in the header)."""
    names = static_collections(bpy.data.collections)
    for update in depsgraph.updates:
        obj = update.id
        if isinstance(obj, bpy.types.Object) and obj.type == "MESH" and \
                (update.is_updated_transform or update.is_updated_geometry) and is_static(obj, names):
            return True
    return False


@persistent
def _on_depsgraph_update(scene, depsgraph) -> None:
    """An edit while Live is on: send the movers, at most once each EDIT_INTERVAL."""
    global _edit_pending
    if _stream.link is None or not scene.partition_studio.live:
        return
    if _static_changed(depsgraph):
        _stream.mark_stale("static objects changed")
    screen = getattr(bpy.context, "screen", None)
    if screen is not None and screen.is_animation_playing:
        return  # the frame handler sends each played frame
    wait = EDIT_INTERVAL - (time.monotonic() - _last_edit_send)
    if wait > 0:
        if not _edit_pending:  # the last edit of a burst is sent when the interval is over
            _edit_pending = True
            bpy.app.timers.register(_send_pending_edit, first_interval=wait)
        return
    _send_edit(depsgraph)


def _send_edit(depsgraph) -> None:
    global _last_edit_send
    _last_edit_send = time.monotonic()
    _send_frame(depsgraph)


def _send_pending_edit():
    global _edit_pending
    _edit_pending = False
    if _stream.link is not None:
        _send_edit(bpy.context.evaluated_depsgraph_get())
    return None  # once


def _poll():
    before = (_stream.state, _stream.frames_sent, _stream.dropped)
    _stream.poll()
    if (_stream.state, _stream.frames_sent, _stream.dropped) != before:
        _redraw()
    return POLL_INTERVAL


# ---------------------------------------------------------------------- operators
class PARTITION_STUDIO_OT_connect(bpy.types.Operator):
    """Connect to Partition Studio and send the scene"""

    bl_idname = "partition_studio.connect"
    bl_label = "Connect"

    host: StringProperty(name="Host", default="", description="Address (empty: the panel's)")
    port: IntProperty(name="Port", default=0, min=0, max=65535, description="Port (0: the panel's)")

    def execute(self, context):
        settings = context.scene.partition_studio
        if self.host:
            settings.host = self.host
        if self.port:
            settings.port = self.port
        if not _connect(context, settings.host, settings.port):
            self.report({"WARNING"}, _stream.state)  # a line in the status bar, not a dialog
            return {"CANCELLED"}
        return {"FINISHED"}


class PARTITION_STUDIO_OT_disconnect(bpy.types.Operator):
    """Stop sending to Partition Studio"""

    bl_idname = "partition_studio.disconnect"
    bl_label = "Disconnect"

    def execute(self, context):
        _stream.disconnect()
        _redraw()
        return {"FINISHED"}


class PARTITION_STUDIO_OT_send_scene(bpy.types.Operator):
    """Send the whole scene now (reconnects when static objects, names or the scale changed)"""

    bl_idname = "partition_studio.send_scene"
    bl_label = "Send scene"

    def execute(self, context):
        settings = context.scene.partition_studio
        snapshot = measure(context.evaluated_depsgraph_get(), bpy.data.collections)
        _stream.send_scene(settings.host, settings.port, snapshot, settings.units_scale, _meta(context.scene))
        _redraw()
        if _stream.link is None:
            self.report({"WARNING"}, _stream.state)
            return {"CANCELLED"}
        return {"FINISHED"}


# ---------------------------------------------------------------------- panel
class PARTITION_STUDIO_PT_link(bpy.types.Panel):
    """The sidebar panel: address, connect, send, Live, scale and the link's state."""

    bl_label = "Live link"
    bl_idname = "PARTITION_STUDIO_PT_link"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Partition Studio"

    def draw(self, context):
        layout = self.layout
        settings = context.scene.partition_studio
        status = context.window_manager.partition_studio
        row = layout.row(align=True)
        row.prop(settings, "host", text="")
        row.prop(settings, "port", text="")
        row = layout.row(align=True)
        if _stream.link is None:
            row.operator(PARTITION_STUDIO_OT_connect.bl_idname, icon="LINKED")
        else:
            row.operator(PARTITION_STUDIO_OT_disconnect.bl_idname, icon="UNLINKED")
        row.operator(PARTITION_STUDIO_OT_send_scene.bl_idname, icon="EXPORT")
        layout.prop(settings, "live")
        layout.prop(settings, "units_scale")
        box = layout.box()
        box.label(text=status.state)
        box.label(text=f"{status.frames_sent:,} frames sent, {status.frames_dropped:,} dropped")


CLASSES = (PartitionStudioSettings, PartitionStudioStatus, PARTITION_STUDIO_OT_connect,
           PARTITION_STUDIO_OT_disconnect, PARTITION_STUDIO_OT_send_scene, PARTITION_STUDIO_PT_link)
HANDLERS = ((bpy.app.handlers.frame_change_post, _on_frame_change),
            (bpy.app.handlers.depsgraph_update_post, _on_depsgraph_update))


def register():
    """Blender calls this when the add-on is enabled."""
    for cls in CLASSES:
        bpy.utils.register_class(cls)
    bpy.types.Scene.partition_studio = PointerProperty(type=PartitionStudioSettings)
    bpy.types.WindowManager.partition_studio = PointerProperty(type=PartitionStudioStatus)
    for handlers, handler in HANDLERS:
        if handler not in handlers:
            handlers.append(handler)
    if not bpy.app.timers.is_registered(_poll):
        bpy.app.timers.register(_poll, first_interval=POLL_INTERVAL, persistent=True)


def unregister():
    """Blender calls this when the add-on is disabled: close the link, remove everything."""
    _stream.disconnect()
    if bpy.app.timers.is_registered(_poll):
        bpy.app.timers.unregister(_poll)
    if bpy.app.timers.is_registered(_send_pending_edit):
        bpy.app.timers.unregister(_send_pending_edit)
    for handlers, handler in HANDLERS:
        if handler in handlers:
            handlers.remove(handler)
    del bpy.types.WindowManager.partition_studio
    del bpy.types.Scene.partition_studio
    for cls in reversed(CLASSES):
        bpy.utils.unregister_class(cls)
