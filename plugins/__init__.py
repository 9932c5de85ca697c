"""Built-in plugins: backends, importers, exporters and motion behaviours.

Each module (or sub-package) here defines ``register(registry)`` and is loaded through exactly the
same API a third-party plugin uses (see :mod:`spatial.registry`). This package imports no Qt.
"""
