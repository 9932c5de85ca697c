"""Benchmarks of the spatial backends against peer libraries (run ``benchmarks/run.py``)."""
