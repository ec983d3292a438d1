from __future__ import annotations

import sys
from collections.abc import Iterator
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from trainer_testkit import Transcripts

from safeagents import default_registry
from safeagents.plugins import PROJECT_NAME


@pytest.fixture
def transcripts(tmp_path: Path) -> Iterator[Transcripts]:
    """A real SQLite transcript store in ``tmp_path``."""
    stored = Transcripts(tmp_path)
    yield stored
    stored.close()


@pytest.fixture(autouse=True, scope="session")
def trainer_entry_point(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The ``trainer`` entry point of the ``safeagents`` group, from a stand-in distribution
    when the installed safeagents metadata predates it (an editable install made earlier).

    ``test_trainer_plugin`` checks the real metadata declares it.
    """
    if any(ep.name == "trainer" for ep in entry_points(group=PROJECT_NAME)):
        yield
        return
    root = tmp_path_factory.mktemp("trainer-entry-point")
    dist_info = root / "safeagents_trainer_standin-0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: safeagents-trainer-standin\nVersion: 0\n"
    )
    (dist_info / "entry_points.txt").write_text(f"[{PROJECT_NAME}]\ntrainer = trainer._plugin\n")
    sys.path.append(str(root))
    default_registry.cache_clear()
    yield
    sys.path.remove(str(root))
    default_registry.cache_clear()
