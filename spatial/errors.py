"""Exceptions and warnings shared by every layer.

Every error a user can cause carries enough context to be fixed without a traceback:
the file, line and column, or the name of the offending field or parameter.
"""
from __future__ import annotations


class PartitionStudioError(Exception):
    """Base class of every error the product raises on purpose."""


class ParamError(PartitionStudioError, ValueError):
    """A backend parameter is unknown, of the wrong type, NaN or out of its bounds."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"parameter '{field}': {message}")


class GeometryError(PartitionStudioError, ValueError):
    """Input geometry is unusable: NaN coordinates, inverted boxes, open or degenerate brushes."""


class IndexInvariantError(PartitionStudioError, AssertionError):
    """``validate()`` found a broken invariant in a spatial index."""


class UnknownIdError(PartitionStudioError, KeyError):
    """An edit names an object id the index does not hold (or inserts one it already holds)."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "unknown id"


class PluginError(PartitionStudioError):
    """A plugin failed to import or register, or a requested plugin item does not exist."""


class ParseError(PartitionStudioError):
    """A file could not be read; the message starts with ``path:line:column:``."""

    def __init__(self, path: str, line: int, column: int, message: str):
        self.path, self.line, self.column, self.detail = path, line, column, message
        super().__init__(f"{path}:{line}:{column}: {message}")


class PartitionStudioWarning(UserWarning):
    """Warnings the product emits; the test-suite turns them into errors."""


class UnsupportedContentError(PartitionStudioError, ValueError):
    """A file format cannot hold what the document contains; nothing was written."""
