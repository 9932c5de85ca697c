"""Geometry kernels, the spatial-index contract, the plugin registry and statistics.

This package depends on numpy (and numba for hot kernels) only: never on Qt, never on the
document model (``editor``) and never on the built-in plugins (``plugins``).
"""
