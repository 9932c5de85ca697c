"""Build the Blender add-on's zip: ``python clients/blender/build_zip.py --out FILE``.

The zip holds the package ``partition_studio/`` (manifest, add-on modules) with the project's
live-link client ``clients/python/ps_link.py`` copied into it as ``partition_studio/ps_link.py``,
so the protocol has one copy in the repository. Install it in Blender 4.2 or later: Preferences
▸ Get Extensions ▸ Install from Disk (``docs/blender.md``). The zip is the same bytes for the
same sources (fixed timestamps, sorted entries) and appears whole: it is written to a temporary
file beside ``FILE`` and renamed over it.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ADDON = HERE / "partition_studio"
CLIENT = HERE.parent / "python" / "ps_link.py"
PACKAGE = "partition_studio"
#: a fixed timestamp (the zip format's earliest) so a rebuild of the same sources is the same zip
STAMP = (1980, 1, 1, 0, 0, 0)


def addon_files() -> list[tuple[str, Path]]:
    """``(name in the zip, source file)`` of everything the add-on ships, sorted."""
    files = [(f"{PACKAGE}/{path.relative_to(ADDON).as_posix()}", path) for path in sorted(ADDON.rglob("*"))
             if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".toml")]
    if any(name == f"{PACKAGE}/ps_link.py" for name, _ in files):
        raise SystemExit(f"{ADDON / 'ps_link.py'}: remove it; the build copies {CLIENT} in")
    return sorted(files + [(f"{PACKAGE}/ps_link.py", CLIENT)])


def build(out: Path) -> list[str]:
    """Write the add-on's zip to ``out`` atomically; returns the names it holds."""
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    files = addon_files()
    fd, temp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED) as archive:
                for name, source in files:
                    info = zipfile.ZipInfo(name, date_time=STAMP)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    info.external_attr = 0o644 << 16
                    archive.writestr(info, source.read_bytes())
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)  # a plain file, not the temporary file's private mode
        os.replace(temp, out)
    except BaseException:
        os.unlink(temp)
        raise
    return [name for name, _ in files]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, metavar="FILE", help="the zip to write (replaced if it exists)")
    args = parser.parse_args(argv)
    try:
        names = build(Path(args.out))
    except OSError as exc:
        print(f"build_zip: {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"build_zip: wrote {args.out} ({len(names)} files)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
