"""Effects of Python calls that reach the network or the hermes tool API."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from safeagents._actions import Effect
from safeagents._patch import edit_effect, parse_patch, write_effect
from safeagents._python_resolve import Value

if TYPE_CHECKING:
    from safeagents._python_calls import CallEffects

__all__ = ["HERMES_TOOLS", "NETWORK_FUNCTIONS", "hermes_call", "network_call"]

HERMES_TOOLS = frozenset({"terminal", "write_file", "read_file", "patch", "search_files"})
"""Functions of ``hermes_tools`` that hermes ``execute_code`` snippets may call."""
_HTTP_VERBS = ("get", "post", "put", "patch", "delete", "head", "options")
_URL_FIRST = frozenset(
    {"urllib.request.urlopen", "urllib.request.Request", "urllib.request.urlretrieve"}
    | {f"{library}.{verb}" for library in ("requests", "httpx") for verb in _HTTP_VERBS}
)
_URL_SECOND = frozenset({"requests.request", "httpx.request", "httpx.stream", "urllib3.request"})
_HOST_FIRST = frozenset({"http.client.HTTPConnection", "http.client.HTTPSConnection", "ftplib.FTP"})
NETWORK_FUNCTIONS = _URL_FIRST | _URL_SECOND | _HOST_FIRST | {"socket.create_connection"}


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


def hermes_call(calls: CallEffects, tool: str, node: ast.Call) -> None:
    """A ``hermes_tools`` call: the same effects as the hermes tool called directly."""
    if tool == "terminal":
        ctx = calls.ctx
        workdir = calls.argument(node, None, "workdir")
        if workdir is not None:
            resolved_workdir = calls.resolver.single_text(workdir)
            ctx = ctx.chdir(resolved_workdir) if resolved_workdir else ctx
        scripts = calls.resolver.values(calls.argument(node, 0, "command"))
        if scripts is None:
            calls.opaque(node)
            return
        for script in scripts:
            calls.effects.extend(calls.shell(script.text, ctx))
    elif tool in ("write_file", "read_file"):
        paths = calls.paths(node, calls.argument(node, 0, "path"))
        if tool == "read_file":
            calls.effects.extend(Effect("read", path=path) for path in paths)
            return
        content = calls.resolver.single_text(calls.argument(node, 1, "content"))
        for path in paths:
            if content is None:
                calls.effects.append(Effect("write", path=path))
            else:
                calls.effects.append(write_effect(path, content, calls.ctx))
    elif tool == "patch":
        _hermes_patch(calls, node)
    elif tool == "search_files":
        pattern = calls.resolver.single_text(calls.argument(node, 0, "pattern"))
        path = calls.resolver.single_text(calls.argument(node, 2, "path")) or "."
        calls.effects.append(Effect("search", pattern=pattern, path=calls.ctx.resolve(path)))


def _hermes_patch(calls: CallEffects, node: ast.Call) -> None:
    mode = calls.resolver.single_text(calls.argument(node, 4, "mode")) or "replace"
    if mode == "patch":
        text = calls.resolver.single_text(calls.argument(node, 5, "patch"))
        if text is None:
            calls.opaque(node)
        else:
            calls.effects.extend(parse_patch(text, calls.ctx))
        return
    old = calls.resolver.single_text(calls.argument(node, 1, "old_string"))
    new = calls.resolver.single_text(calls.argument(node, 2, "new_string"))
    for path in calls.paths(node, calls.argument(node, 0, "path")):
        if old is None or new is None:
            calls.effects.append(Effect("write", path=path))
        else:
            calls.effects.append(edit_effect(path, old, new, calls.ctx))


def _host(url: str) -> str | None:
    try:
        return urlsplit(url).hostname
    except ValueError:
        return None
