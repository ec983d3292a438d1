"""Publishing adapter versions: save, load into vLLM under a new name, repoint the proxy's
alias, unload what left the staleness window. Serving never pauses and never reloads a name
in place (vLLM keys its prefix cache by adapter name).

Every ``keep_every``-th version stays on disk after it leaves serving, as
``output_dir/{harness}/v{k}/`` with a ``version.json`` (its name, the optimiser step whose
weights it holds, and that step's metrics), so that evaluation can serve them all later.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from trainer._batching import BASE_VERSION, adapter_name, parse_version

__all__ = ["VERSION_FILE", "AdapterPublisher", "AdapterServer", "AliasTarget", "SavesAdapter"]

VERSION_FILE = "version.json"

logger = logging.getLogger("safeagents.trainer")


class SavesAdapter(Protocol):
    """A PEFT model, or anything that writes an adapter directory vLLM can load."""

    def save_pretrained(self, save_directory: str) -> None: ...


class AdapterServer(Protocol):
    def load_adapter(self, name: str, path: Path) -> None: ...

    def unload_adapter(self, name: str) -> None: ...


class AliasTarget(Protocol):
    def set_alias(self, harness: str, model: str) -> None: ...


class AdapterPublisher:
    """Publishes ``{harness}-v{k}`` for k = 1, 2, …; keeps ``max_staleness + 1`` versions live."""

    def __init__(
        self,
        *,
        harness: str,
        output_dir: Path,
        server: AdapterServer,
        proxy: AliasTarget,
        max_staleness: int,
        keep_every: int = 1,
    ) -> None:
        if keep_every < 0:
            raise ValueError(f"keep_every must be >= 0, got {keep_every}")
        self.keep_every = keep_every
        self.harness = harness
        self.output_dir = output_dir
        self.server = server
        self.proxy = proxy
        self.max_staleness = max_staleness
        self.version = BASE_VERSION
        self.live: list[str] = []

    def path(self, version: int) -> Path:
        return self.output_dir / self.harness / f"v{version}"

    def serving(self, version: int) -> None:
        """Point the proxy's alias for the harness at ``version``, loaded on the server (by
        :meth:`publish`, or by TRL's own adapter sync on the async path)."""
        name = adapter_name(self.harness, version)
        self.proxy.set_alias(self.harness, name)
        self.version = version
        logger.info("%s now served by %s", self.harness, name)

    def publish(self, model: SavesAdapter) -> str:
        """Save ``model``'s adapter as the next version and make the proxy serve it."""
        version = self.version + 1
        name = adapter_name(self.harness, version)
        path = self.path(version)
        path.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(str(path))
        self.server.load_adapter(name, path)
        self.serving(version)
        self.live.append(name)
        while len(self.live) > self.max_staleness + 1:
            old = self.live.pop(0)
            try:
                self.server.unload_adapter(old)
            except Exception as problem:  # serving goes on; the slot is reclaimed later
                logger.warning("could not unload %s: %s", old, problem)
            self._forget(parse_version(old, self.harness))
        return name

    def kept(self, version: int) -> bool:
        """Whether ``version`` stays on disk once it leaves serving."""
        return self.keep_every > 0 and version % self.keep_every == 0

    def record(
        self,
        version: int,
        *,
        step: int,
        metrics: Mapping[str, Any] | None = None,
        source: Path | None = None,
    ) -> Path | None:
        """Write ``version``'s ``version.json`` (copying the adapter from ``source`` first,
        where another component saved it); ``None`` for a version that is not kept and has
        no directory of its own."""
        path = self.path(version)
        if source is not None:
            if not self.kept(version):
                return None
            shutil.copytree(source, path, dirs_exist_ok=True)
        if not path.is_dir():
            return None
        info = {
            "name": adapter_name(self.harness, version),
            "version": version,
            "step": step,
            "metrics": dict(metrics or {}),
        }
        (path / VERSION_FILE).write_text(json.dumps(info, indent=1, default=str) + "\n")
        return path

    def _forget(self, version: int | None) -> None:
        """Remove an unloaded version's files unless it is one to keep."""
        if version is not None and version > BASE_VERSION and not self.kept(version):
            shutil.rmtree(self.path(version), ignore_errors=True)
