"""Find rule files: pack directories, directories of packs, single rule files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from safeagents.rules._errors import RuleError

__all__ = ["FIXTURE_SUFFIX", "PACK_FILE", "RuleSource", "bundled_rules_path", "discover"]

PACK_FILE = "pack.yaml"
FIXTURE_SUFFIX = ".test.yaml"
_SKIPPED_DIRS = ("__pycache__", "node_modules")


def bundled_rules_path() -> Path:
    """``<repo>/rules`` in a checkout, else the packs shipped inside the wheel."""
    package = Path(__file__).parent.parent  # safeagents/
    checkout = package.parent / "rules"
    if checkout.is_dir() and (package.parent / "pyproject.toml").is_file():
        return checkout
    return package / "_bundled_rules"


@dataclass(slots=True)
class RuleSource:
    """One directory's rule files; ``pack_file`` is its ``pack.yaml`` when it has one."""

    directory: Path
    pack_file: Path | None
    rule_files: list[Path] = field(default_factory=list)


def is_rule_file(path: Path) -> bool:
    return (
        path.suffix == ".yaml" and path.name != PACK_FILE and not path.name.endswith(FIXTURE_SUFFIX)
    )


def discover(paths: Sequence[Path]) -> tuple[list[RuleSource], list[RuleError]]:
    """Group the rule files under ``paths`` by directory, each file once."""
    finder = _Finder()
    for path in paths:
        finder.found = False
        finder.visit(path)
        if not finder.found and not finder.errors_for(path):
            finder.errors.append(
                RuleError(
                    str(path),
                    0,
                    0,
                    "no rules found (expected a pack directory with pack.yaml, "
                    "a directory of packs, or a rule file)",
                )
            )
    return list(finder.sources.values()), finder.errors


class _Finder:
    def __init__(self) -> None:
        self.sources: dict[Path, RuleSource] = {}
        self.seen: set[Path] = set()
        self.errors: list[RuleError] = []
        self.found = False

    def errors_for(self, path: Path) -> bool:
        return any(error.file == str(path) for error in self.errors)

    def visit(self, path: Path) -> None:
        if not path.exists():
            self.errors.append(RuleError(str(path), 0, 0, "no such file or directory"))
        elif path.is_dir():
            self._directory(path)
        elif path.name == PACK_FILE:
            self._pack(path.parent)
        elif path.name.endswith(FIXTURE_SUFFIX):
            message = "this is a fixture file, not a rule (give the rule file or its directory)"
            self.errors.append(RuleError(str(path), 0, 0, message))
        elif path.suffix != ".yaml":
            self.errors.append(RuleError(str(path), 0, 0, "not a rule file (expected ID.yaml)"))
        else:
            self._add(path.parent, path)

    def _directory(self, directory: Path) -> None:
        if (directory / PACK_FILE).is_file():
            self._pack(directory)
            return
        for entry in sorted(directory.iterdir()):
            if entry.is_file() and is_rule_file(entry):
                self._add(directory, entry)
        for entry in sorted(directory.iterdir()):
            if (
                entry.is_dir()
                and not entry.name.startswith(".")
                and entry.name not in _SKIPPED_DIRS
            ):
                self._directory(entry)

    def _pack(self, directory: Path) -> None:
        self._source(directory)
        for entry in sorted(directory.iterdir()):
            if entry.is_file() and is_rule_file(entry):
                self._add(directory, entry)

    def _source(self, directory: Path) -> RuleSource:
        self.found = True
        key = directory.resolve()
        if key not in self.sources:
            pack_file = directory / PACK_FILE
            self.sources[key] = RuleSource(directory, pack_file if pack_file.is_file() else None)
        return self.sources[key]

    def _add(self, directory: Path, file: Path) -> None:
        source = self._source(directory)
        key = file.resolve()
        if key in self.seen:
            return
        self.seen.add(key)
        source.rule_files.append(file)
