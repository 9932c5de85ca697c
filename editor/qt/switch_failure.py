"""A backend that fails to build or list its nodes leaves the editor on the one that works.

The editor switches backends by recording the choice in the document (``SetSettings``) and then
building. If the build, or the node table the views need, raises — or calls ``sys.exit()`` in
plugin code — the choice is taken back: the switching command is undone when it is the last
step of the history (it stays redoable), else a new step records the backend still indexed.
So the settings name the index on screen, and a save writes the backend that works. One line
names the backend, the plugin that provides it when its code raised, and the error.
"""
from __future__ import annotations

from editor.model import SetSettings
from spatial.params import params_to_dict
from spatial.plugin_guard import blame


def describe_build_failure(registry, backend: str, exc: BaseException, working: str) -> str:
    """One line: which backend failed, where (its plugin), why, and what stays selected."""
    return f"backend '{backend}' failed{blame(exc, registry)}; staying on '{working}'"


def take_back_choice(document) -> None:
    """Make the document's settings name the backend and parameters of its working index."""
    index = document.index
    settings = document.scene.settings
    stack = document.stack
    if stack.index > 0 and isinstance(stack.command(stack.index - 1), SetSettings):
        stack.undo()
        settings = document.scene.settings
    params = params_to_dict(index.params)
    if settings.backend != index.name or dict(settings.params) != params:
        document.push(document.settings_command(backend=index.name, params=params,
                                                text=f"Keep {index.name}"))
