"""Describe the machine and software a benchmark ran on (CPU, cores, RAM, versions, load)."""
from __future__ import annotations

import datetime
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

#: Distributions whose versions matter for the figures, by the name the report shows.
VERSIONED = {
    "numpy": "numpy", "numba": "numba", "scipy": "scipy", "rtree": "rtree",
    "boostree": "boostree", "python-fcl": "python-fcl", "open3d": "open3d",
    "threadpoolctl": "threadpoolctl",
}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def _libspatialindex() -> str | None:
    try:
        from rtree import core
        return core.rt.SIDX_Version().decode()
    except Exception:
        return None


def _git_revision(repo: Path) -> str | None:
    try:
        rev = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return f"{rev}{' (with uncommitted changes)' if dirty else ''}" if rev else None
    except Exception:
        return None


def describe_machine(repo: Path, threads: str) -> dict:
    """Everything a reader needs to judge the figures, JSON-ready."""
    versions = {}
    for label, dist in VERSIONED.items():
        try:
            versions[label] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[label] = None
    versions["libspatialindex"] = _libspatialindex()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu_model(),
        "logical_cores": os.cpu_count(),
        "usable_cores": usable,
        "ram_gib": round(_ram_gib(), 1) if _ram_gib() else None,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "versions": versions,
        "git": _git_revision(repo),
        "threads": threads,
    }
