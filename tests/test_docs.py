"""The documents are self-contained: every link and file name they give resolves inside the
repository, and a path outside it names only level data or a system program, never a document.

The rule (CONTRIBUTING.md, "Documents"): what a reader needs is in a document of our own. Paths
outside the repository may appear as *locations* only: the level-data folder
(``../shared/data``, the default of ``$PARTITION_STUDIO_DATA``, as in a command's argument),
Freedoom's WADs (``/usr/share/games/doom``, Debian's ``freedoom`` package) and a system program
in a configuration example (``/usr/bin/...``).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted(ROOT.glob("docs/*.md")) + [ROOT / name for name in (
    "README.md", "CONTRIBUTING.md", "plugins/README.md", "benchmarks/README.md")]
#: the only places outside the repository a document may name
OUTSIDE_ALLOWED = ("../shared/data", "/usr/share/games/doom", "/usr/bin/")
#: top-level folders of the repository: a code span starting with one names a file in it
REPO_FOLDERS = ("spatial", "editor", "plugins", "benchmarks", "tests", "docs", "resources", ".ci")

_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_OUTSIDE = re.compile(r"(?<![\w.$/])(\.\./[^\s`)\"']*|/(?:work|home|root|mnt|media|tmp|usr|opt|srv|etc|var)"
                      r"/[^\s`)\"']*)")
_CODE_PATH = re.compile(r"`((?:" + "|".join(re.escape(f) for f in REPO_FOLDERS) + r")/[^`\s:]*)")


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def broken_links(doc: Path, root: Path = ROOT) -> list[str]:
    """Markdown links of ``doc`` to a missing file or to one outside ``root``."""
    text = doc.read_text(encoding="utf-8")
    bad = []
    for match in _LINK.finditer(text):
        target = match.group(1)
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a web address or an anchor in the same page
        path = (doc.parent / target.split("#", 1)[0]).resolve()
        if not path.is_relative_to(root.resolve()) or not path.exists():
            bad.append(f"{doc.name}:{_line(text, match.start())} links {target}")
    return bad


def outside_paths(doc: Path) -> list[str]:
    """Paths outside the repository ``doc`` names, other than the allowed locations."""
    text = doc.read_text(encoding="utf-8")
    return [f"{doc.name}:{_line(text, m.start())} names {m.group(1)}" for m in _OUTSIDE.finditer(text)
            if not m.group(1).startswith(OUTSIDE_ALLOWED)]


def missing_files(doc: Path, root: Path = ROOT) -> list[str]:
    """Repository files named in code spans of ``doc`` that do not exist (a placeholder segment
    in capitals, such as ``editor/cli/NAME.py``, or a glob is not a file name)."""
    text = doc.read_text(encoding="utf-8")
    bad = []
    for match in _CODE_PATH.finditer(text):
        name = match.group(1)
        if "*" in name or any(part.split(".")[0].isupper() for part in name.split("/")):
            continue
        if not (root / name).exists():
            bad.append(f"{doc.name}:{_line(text, match.start())} names {name}")
    return bad


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_document_is_self_contained(doc):
    assert doc.exists()
    assert broken_links(doc) + outside_paths(doc) + missing_files(doc) == []


def test_the_checks_catch_what_they_are_for(tmp_path):
    """Each check fails on a real defect (a check that cannot fail is a defect)."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "there.md").write_text("x")
    doc = tmp_path / "docs" / "page.md"
    doc.write_text("See [notes](../../shared/QT-NOTES.md), [here](there.md), [gone](gone.md),\n"
                   "[web](https://example.org) and `../shared/QT-NOTES.md`.\n"
                   "Run `python app.py stats ../shared/data/quake/e1m1.map` or read `docs/there.md`,\n"
                   "`docs/missing.md` and `editor/cli/NAME.py`.\n")
    assert broken_links(doc, tmp_path) == ["page.md:1 links ../../shared/QT-NOTES.md",
                                           "page.md:1 links gone.md"]
    assert outside_paths(doc) == ["page.md:1 names ../../shared/QT-NOTES.md",
                                  "page.md:2 names ../shared/QT-NOTES.md"]
    assert missing_files(doc, tmp_path) == ["page.md:4 names docs/missing.md"]
