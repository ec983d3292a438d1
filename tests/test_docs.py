"""The docs stand on their own: what they point to is in the repository, and the exit status
is documented once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "DEVELOPERS.md", *sorted((ROOT / "docs").glob("*.md"))]
TASK_FILES = {"instruction.md"}  # what a trainer task directory holds, not a document here


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_every_document_named_is_in_the_repository(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    names = set(re.findall(r"`([\w./-]+\.md)`", text))
    names |= {link.partition("#")[0] for link in re.findall(r"\]\(([^)\s]+\.md[^)\s]*)\)", text)}
    names -= TASK_FILES
    for name in sorted(names):
        assert not name.startswith(("../", "/")), f"{doc.name} points outside: {name}"
        candidates = [doc.parent / name, ROOT / name, ROOT / "docs" / name]
        assert any(path.is_file() for path in candidates), f"{doc.name} names a missing {name}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda path: path.name)
def test_no_document_points_to_an_issue_tracker(doc: Path) -> None:
    assert not re.search(r"\b[Ii]ssue \d+", doc.read_text(encoding="utf-8"))


def test_the_exit_status_is_documented_once() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count("## Exit status") == 1
    table = readme.partition("## Exit status")[2].partition("\n## ")[0]
    first_cells = " ".join(line.split("|")[1] for line in table.splitlines() if line[:1] == "|")
    for code in ("`0`", "`1`", "`2`", "`130`", "`141`"):
        assert code in first_cells
    assert "Exit status:" not in readme  # no second, per-command statement
