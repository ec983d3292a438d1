"""Why a store cannot be used: what the command line and the proxy report without a traceback."""

from __future__ import annotations

__all__ = ["NewerSchemaError", "StoreConnectionError", "StoreError"]


class StoreError(RuntimeError):
    """The store cannot be used (the message says why, without secrets)."""


class NewerSchemaError(StoreError):
    """The store was written by a newer safeagents: this one refuses to use it."""

    def __init__(self, where: str, version: int, known: int) -> None:
        super().__init__(
            f"the store {where} has schema version {version}, newer than the {known} "
            "this safeagents knows: upgrade safeagents to use it"
        )
        self.version = version


class StoreConnectionError(StoreError):
    """The database server cannot be reached, or refused the connection."""
