from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from trainer_testkit import Transcripts


@pytest.fixture
def transcripts(tmp_path: Path) -> Iterator[Transcripts]:
    """A real SQLite transcript store in ``tmp_path``."""
    stored = Transcripts(tmp_path)
    yield stored
    stored.close()
