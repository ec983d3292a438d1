"""The upstream model server: URL mapping, header hygiene, and errors mapped to 502/504."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Mapping
from typing import Any, Literal

from safeagents.exchange._auth import Credentials
from safeagents.exchange._config import ProxyConfig
from safeagents.exchange._http import Client, Headers, HTTPError, UpstreamTimeout
from safeagents.exchange._transport import Transport, TransportResponse
from safeagents.protocols import MAX_ANSWER_DEPTH, StreamError, json_bytes, loads_json

__all__ = [
    "HOP_BY_HOP",
    "ResponseTooLarge",
    "Upstream",
    "UpstreamError",
    "UpstreamStatus",
    "check_status",
    "clean_response_headers",
    "parse_json_object",
    "upstream_error",
]

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
    }
)
_NOT_FORWARDED = HOP_BY_HOP | {"host"}
_OWN_PREFIX = "x-safeagents-"
_KEY_SLOTS = ("authorization", "x-api-key")
_SNIPPET = 300


class UpstreamError(Exception):
    """The upstream could not give a usable answer; the harness gets ``status`` (502/504)."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message


class UpstreamStatus(Exception):
    """The upstream refused the request (4xx); the harness gets its answer unchanged."""

    def __init__(self, status: int, content: bytes, headers: Mapping[str, str]) -> None:
        super().__init__(f"upstream answered {status}")
        self.status = status
        self.content = content
        self.headers = dict(headers)


class ResponseTooLarge(HTTPError):
    """The upstream's answer grew past the proxy's response limit; reading stopped there."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"the upstream's answer exceeds the response limit of {_size(limit)} "
            "(--response-limit of safeagents serve and intercept)"
        )
        self.limit = limit


_BROKE = {
    "connect": "cannot reach the upstream model server",
    "read": "upstream connection failed",
    "stream": "upstream stream broke",
}


def upstream_error(
    problem: HTTPError | StreamError, stage: Literal["connect", "read", "stream"]
) -> UpstreamError:
    """What the harness gets for an upstream fault while connecting, reading a whole
    answer, or reading a stream: 504 for a timeout, else 502."""
    if isinstance(problem, StreamError):
        return UpstreamError(502, "upstream_malformed", f"malformed upstream stream: {problem}")
    if isinstance(problem, ResponseTooLarge):
        return UpstreamError(502, "upstream_too_large", str(problem))
    if isinstance(problem, UpstreamTimeout):
        during = " mid-stream" if stage == "stream" else ""
        return UpstreamError(504, "upstream_timeout", f"upstream timed out{during}: {problem!r}")
    return UpstreamError(502, "upstream_unreachable", f"{_BROKE[stage]}: {problem!r}")


def clean_response_headers(headers: Headers, *, decoded: bool) -> dict[str, str]:
    """Upstream response headers safe to send on: no hop-by-hop, no stale length/encoding."""
    drop = HOP_BY_HOP | {"content-length"} | ({"content-encoding"} if decoded else set())
    return {key: value for key, value in headers.items() if key.lower() not in drop}


class Upstream:
    """One pooled HTTP client for the model server at ``config.upstream``."""

    def __init__(self, config: ProxyConfig, client: Transport | None = None) -> None:
        root = config.upstream.rstrip("/")
        self.root = root.removesuffix("/v1")
        self._credentials = Credentials(config)
        self._api_key = config.upstream_api_key or None
        self.client: Transport = client or Client(
            timeout=config.timeout, connect_timeout=config.connect_timeout, max_idle=256
        )
        self.response_limit = config.response_limit

    def url(self, path: str, query: str = "", *, model: bool = False) -> str:
        """The upstream URL for an incoming ``path`` (session prefix already removed)."""
        if model and not path.startswith("/v1/"):
            path = "/v1" + path
        return self.root + path + (f"?{query}" if query else "")

    def headers(self, incoming: Mapping[str, str], *, model: bool) -> dict[str, str]:
        """Request headers to send on: hop-by-hop, our own and the proxy's credentials (its
        tokens, ``sa-`` session keys) removed. With ``upstream_api_key`` no client key goes
        on: the upstream's own key takes the slot the client used (default ``Authorization``).

        Model requests are re-encoded by the proxy (and their answers parsed), so their
        length and encodings are dropped and the upstream is asked for an identity body."""
        out: dict[str, str] = {}
        slot = "authorization"
        for key, value in incoming.items():
            lower = key.lower()
            if lower in _NOT_FORWARDED or lower.startswith(_OWN_PREFIX):
                continue
            if model and lower in ("content-length", "content-encoding"):
                continue  # the proxy re-encodes model request bodies
            if lower in _KEY_SLOTS:
                slot = lower if self._api_key else slot
                if self._api_key or self._credentials.is_credential(value):
                    continue
            if model and lower == "accept-encoding":
                continue
            out[key] = value
        if self._api_key:
            out[slot] = f"Bearer {self._api_key}" if slot == "authorization" else self._api_key
        if model:
            out["accept-encoding"] = "identity"
        return out

    async def open(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        content: bytes | AsyncIterable[bytes] | None,
    ) -> TransportResponse:
        """Send a request and return the response with its body still streaming."""
        try:
            return await self.client.send(method, url, headers, content)
        except HTTPError as error:
            raise upstream_error(error, "connect") from None

    async def body(self, response: TransportResponse) -> AsyncIterator[bytes]:
        """The decoded body as it arrives; :class:`ResponseTooLarge` once it grows past the
        response limit (nothing beyond it is read)."""
        received = 0
        async for chunk in response.aiter_bytes():
            received += len(chunk)
            if received > self.response_limit:
                raise ResponseTooLarge(self.response_limit)
            yield chunk

    async def read(self, response: TransportResponse) -> bytes:
        """The whole (decoded) body, at most the response limit; errors mapped like
        :meth:`open`."""
        try:
            return b"".join([chunk async for chunk in self.body(response)])
        except HTTPError as error:
            raise upstream_error(error, "read") from None
        finally:
            await response.aclose()

    async def complete(
        self, url: str, headers: Mapping[str, str], body: Mapping[str, Any]
    ) -> tuple[dict[str, Any], Headers]:
        """POST a non-stream model request and return its JSON object."""
        payload = json_bytes(body)
        headers = {**headers, "content-type": "application/json"}
        response = await self.open("POST", url, headers, payload)
        content = await self.read(response)
        check_status(response.status_code, content, response.headers)
        return parse_json_object(content), response.headers

    async def aclose(self) -> None:
        await self.client.aclose()


def check_status(status: int, content: bytes, headers: Headers) -> None:
    """Raise for an upstream error status: 5xx becomes a 502, 4xx is passed on as is."""
    if status >= 500:
        snippet = content[:_SNIPPET].decode("utf-8", "replace")
        raise UpstreamError(502, "upstream_error", f"upstream answered {status}: {snippet}")
    if status >= 400:
        raise UpstreamStatus(status, content, clean_response_headers(headers, decoded=True))


def parse_json_object(content: bytes) -> dict[str, Any]:
    try:
        value = loads_json(content, MAX_ANSWER_DEPTH)
    except ValueError as error:
        snippet = content[:_SNIPPET].decode("utf-8", "replace")
        raise UpstreamError(
            502, "upstream_malformed", f"upstream sent malformed JSON ({error}): {snippet!r}"
        ) from None
    if not isinstance(value, dict):
        raise UpstreamError(502, "upstream_malformed", "upstream JSON is not an object")
    return value


def _size(limit: int) -> str:
    mib = limit / (1024 * 1024)
    return f"{mib:g} MiB" if mib >= 1 else f"{limit} bytes"
