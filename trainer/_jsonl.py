"""An append-only JSONL file: one object per line, flushed as it is written.

A file that a killed run left mid-line gets a fresh line first, so the next object is never
glued onto half of the last one.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

__all__ = ["JsonlLog"]


class JsonlLog:
    """Appends JSON objects to ``path`` (its folder made if missing), one flushed line each;
    safe to share between threads. ``label`` names the file in errors."""

    def __init__(self, path: Path, label: str = "log") -> None:
        self.path = path
        self.label = label
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._file: IO[str] | None = path.open("a", encoding="utf-8")
        if _ends_mid_line(path):
            self._file.write("\n")
            self._file.flush()

    def write(self, data: Mapping[str, Any]) -> None:
        """Write ``data`` as one line (values JSON cannot hold as their string) and flush."""
        line = json.dumps(data, ensure_ascii=False, default=str)
        with self._lock:
            if self._file is None:
                raise ValueError(f"{self.label} {self.path} is closed")
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        """Close the file; closing twice is harmless."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _ends_mid_line(path: Path) -> bool:
    with path.open("rb") as handle:
        if handle.seek(0, 2) == 0:
            return False
        handle.seek(-1, 2)
        return handle.read(1) != b"\n"
