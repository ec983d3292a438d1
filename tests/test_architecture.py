"""A package never imports another package's private (``_``-prefixed) modules.

The layering and the absence of cycles are import-linter contracts (pyproject.toml,
``lint-imports``); this is the rule import-linter cannot express. Imports under
``TYPE_CHECKING`` and inside functions count.
"""

from __future__ import annotations

import grimp
import pytest

PACKAGES = ("safeagents", "trainer", "harness_plugins")


def private_owner(module: str) -> str | None:
    """The package whose private module ``module`` is, or None for a public one."""
    parts = module.split(".")
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index])
    return None


def reaches_in(importer: str, imported: str) -> bool:
    owner = private_owner(imported)
    if owner is None:
        return False
    return not (importer == owner or importer.startswith(owner + "."))


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES)


def test_no_package_imports_another_packages_private_modules(graph: grimp.ImportGraph) -> None:
    violations = sorted(
        f"{importer} -> {imported}"
        for importer in graph.modules
        for imported in graph.find_modules_directly_imported_by(importer)
        if reaches_in(importer, imported)
    )
    assert violations == []


@pytest.mark.parametrize(
    ("importer", "imported", "reaches"),
    [
        ("safeagents.intercept._addon", "safeagents.proxy._app", True),
        ("trainer._reward", "safeagents._registry", True),
        ("harness_plugins.pi", "safeagents.analysis._shell._walker", True),
        ("safeagents.proxy._app", "safeagents._registry", False),
        ("safeagents.analysis._shell._simple", "safeagents.analysis._shell._walker", False),
        ("safeagents.intercept._addon", "safeagents.exchange", False),
        ("trainer._plugin", "safeagents.rules", False),
    ],
)
def test_what_counts_as_reaching_in(importer: str, imported: str, reaches: bool) -> None:
    assert reaches_in(importer, imported) is reaches
