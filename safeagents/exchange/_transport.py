"""What the exchange needs from an HTTP client to reach the upstream model server.

:class:`safeagents.exchange.Client` (``_http``) is the implementation; tests and other
front ends may hand :class:`~safeagents.exchange.Upstream` anything that fits.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Mapping
from typing import Protocol

from safeagents.exchange._http_wire import Headers

__all__ = ["Transport", "TransportResponse"]


class TransportResponse(Protocol):
    """An answer whose head has arrived and whose body is still streaming."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> Headers: ...

    def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as sent (content-encoding untouched)."""
        ...

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body with its content-encoding undone."""
        ...

    async def aread(self) -> bytes:
        """The whole decoded body."""
        ...

    async def aclose(self) -> None:
        """Give the connection back (or close it); reading is over."""
        ...


class Transport(Protocol):
    """Sends one request at a time per call; raises ``HTTPError`` (``UpstreamTimeout`` for
    timeouts) when the upstream cannot be reached or breaks off."""

    async def send(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        content: bytes | AsyncIterable[bytes] | None,
    ) -> TransportResponse:
        """Send a request; return once the answer's head has arrived."""
        ...

    async def aclose(self) -> None:
        """Close every connection."""
        ...
