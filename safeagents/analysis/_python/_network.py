"""Effects of Python calls that reach the network."""

from __future__ import annotations

import ast
from typing import Protocol
from urllib.parse import urlsplit

from safeagents._actions import Effect
from safeagents.analysis._python._resolve import Resolver, Value

__all__ = ["NETWORK_FUNCTIONS", "network_call"]

_HTTP_VERBS = ("get", "post", "put", "patch", "delete", "head", "options")
_URL_FIRST = frozenset(
    {"urllib.request.urlopen", "urllib.request.Request", "urllib.request.urlretrieve"}
    | {f"{library}.{verb}" for library in ("requests", "httpx") for verb in _HTTP_VERBS}
)
_URL_SECOND = frozenset({"requests.request", "httpx.request", "httpx.stream", "urllib3.request"})
_HOST_FIRST = frozenset({"http.client.HTTPConnection", "http.client.HTTPSConnection", "ftplib.FTP"})
NETWORK_FUNCTIONS = _URL_FIRST | _URL_SECOND | _HOST_FIRST | {"socket.create_connection"}


class CallEffects(Protocol):
    """What a network call needs of ``_calls.CallEffects``."""

    resolver: Resolver
    effects: list[Effect]

    def argument(self, node: ast.Call, index: int | None, *keywords: str) -> ast.expr | None: ...

    def paths(self, node: ast.Call, argument: ast.AST | None) -> list[str]: ...

    def opaque(self, node: ast.AST) -> None: ...


def network_call(calls: CallEffects, name: str, node: ast.Call) -> None:
    """A ``requests``/``httpx``/``urllib``/``socket`` call: the URL or host it reaches."""
    if name == "socket.create_connection":
        address = calls.argument(node, 0, "address")
        host = None
        if isinstance(address, ast.Tuple) and address.elts:
            host = calls.resolver.single_text(address.elts[0])
        _network_effect(calls, node, None if host is None else [Value(host)], as_host=True)
        return
    if name in _HOST_FIRST:
        hosts = calls.resolver.values(calls.argument(node, 0, "host"))
        _network_effect(calls, node, hosts, as_host=True)
        return
    index = 1 if name in _URL_SECOND else 0
    url = calls.argument(node, index, "url")
    if name == "urllib.request.urlopen" and _is_request_object(calls, url):
        return
    _network_effect(calls, node, calls.resolver.values(url), as_host=False)
    if name == "urllib.request.urlretrieve":
        filename = calls.argument(node, 1, "filename")
        if filename is not None:
            calls.effects.extend(Effect("write", path=path) for path in calls.paths(node, filename))


def _is_request_object(calls: CallEffects, url: ast.AST | None) -> bool:
    """``urlopen(Request(...))``: the ``Request`` call records the network effect."""
    if isinstance(url, ast.Name):
        binding = calls.resolver.bindings.get(url.id, [])
        url = binding[0][1] if len(binding) == 1 else None
    return (
        isinstance(url, ast.Call) and calls.resolver.qualname(url.func) == "urllib.request.Request"
    )


def _network_effect(
    calls: CallEffects, node: ast.Call, targets: list[Value] | None, *, as_host: bool
) -> None:
    if targets is None:
        calls.effects.append(Effect("network"))
        calls.opaque(node)
        return
    for target in targets:
        if as_host:
            calls.effects.append(Effect("network", host=target.text.split(":", 1)[0] or None))
        else:
            calls.effects.append(Effect("network", url=target.text, host=_host(target.text)))


def _host(url: str) -> str | None:
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None
