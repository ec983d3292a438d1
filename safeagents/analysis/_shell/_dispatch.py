"""Which handler knows the effects of a command, by its basename."""

from __future__ import annotations

import re

from safeagents.analysis._shell import _builtins, _files, _git, _interpreters, _network, _search
from safeagents.analysis._shell._model import Handler

_HANDLERS: dict[str, Handler] = {
    **_builtins.HANDLERS,
    **_files.HANDLERS,
    **_search.HANDLERS,
    **_git.HANDLERS,
    **_network.HANDLERS,
    **_interpreters.HANDLERS,
}
_PYTHON = re.compile(r"(?:python|pypy)(?:\d+(?:\.\d+)*)?[dmtu]?")


_PYTHON_NAMES: dict[str, bool] = {}


def handler_for(name: str) -> Handler | None:
    handler = _HANDLERS.get(name)
    if handler is not None:
        return handler
    is_python = _PYTHON_NAMES.get(name)
    if is_python is None:
        if len(_PYTHON_NAMES) >= 4_096:
            _PYTHON_NAMES.clear()
        is_python = _PYTHON_NAMES[name] = _PYTHON.fullmatch(name) is not None
    return _interpreters.python if is_python else None
