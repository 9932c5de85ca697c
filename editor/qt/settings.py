"""Persistent preferences (QSettings): recent files, window layout, grid.

Tests pass their own ``QSettings`` on a temporary INI file so they never touch the user's.
"""
from __future__ import annotations

import os

from PySide6.QtCore import QSettings

ORGANIZATION = "PartitionStudio"
APPLICATION = "Partition Studio"
MAX_RECENT = 10


def default_settings() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


def recent_files(settings: QSettings) -> list[str]:
    value = settings.value("recent_files", [])
    if isinstance(value, str):  # QSettings gives a one-entry list back as its single string
        return [value]
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else []


def add_recent_file(settings: QSettings, path: str) -> list[str]:
    path = os.path.abspath(path)
    files = [p for p in recent_files(settings) if p != path]
    files.insert(0, path)
    files = files[:MAX_RECENT]
    settings.setValue("recent_files", files)
    return files


def last_backend(settings: QSettings) -> tuple[str, dict] | None:
    """The backend and parameters the user chose last (None: never chose one)."""
    import json

    text = settings.value("last_backend")
    try:
        value = json.loads(str(text)) if text else None
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("backend"), str) \
            or not isinstance(value.get("params"), dict):
        return None
    return value["backend"], value["params"]


def set_last_backend(settings: QSettings, backend: str, params: dict) -> None:
    """Remember the user's backend choice for levels that bring none of their own."""
    import json

    settings.setValue("last_backend", json.dumps({"backend": backend, "params": dict(params)}))
