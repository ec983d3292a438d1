"""Exits registered to run later: ``atexit`` handlers and handlers of the signals a test
timeout or a crash raises, which end a failing run with success."""

from __future__ import annotations

import ast

from safeagents.detectors._ast_facts import dotted_name
from safeagents.detectors._exit_reach import contains_exit, exiting_handler
from safeagents.detectors._module_facts import ModuleFacts

__all__ = ["exiting_atexit_handler", "exiting_signal_handler"]


def exiting_atexit_handler(facts: ModuleFacts, aliases: dict[str, str]) -> bool:
    """A function registered with ``atexit`` (decorated, or passed to ``atexit.register``)
    that exits: the run's status is decided after the tests, by the handler."""
    functions = facts.functions_by_name
    for node in facts.of(ast.FunctionDef, ast.AsyncFunctionDef, ast.Call):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            registered = any(
                dotted_name(d, aliases) == "atexit.register" for d in node.decorator_list
            )
            if registered and contains_exit(node, aliases):
                return True
        if not (isinstance(node, ast.Call) and node.args):
            continue
        if dotted_name(node.func, aliases) != "atexit.register":
            continue
        if exiting_handler(node.args[0], functions, aliases):
            return True
    return False


_FAILURE_SIGNALS = frozenset(
    {"SIGALRM", "SIGVTALRM", "SIGPROF", "SIGXCPU", "SIGSEGV", "SIGABRT", "SIGFPE", "SIGBUS"}
    | {"SIGILL", "SIGTRAP", "SIGSYS", "SIGXFSZ"}
)
"""Signals that a test timeout or a crash raises (not ``SIGTERM``/``SIGINT``: a server or
a CLI exiting cleanly when asked to stop is ordinary)."""


def exiting_signal_handler(facts: ModuleFacts, aliases: dict[str, str]) -> bool:
    """``signal.signal(signal.SIGALRM, lambda *a: sys.exit(0))``: a test timeout (or a crash)
    ends the run with success."""
    functions = facts.functions_by_name
    for call in facts.of(ast.Call):
        if dotted_name(call.func, aliases) != "signal.signal" or len(call.args) != 2:
            continue
        number, handler = call.args
        if (dotted_name(number, aliases) or "").rsplit(".", 1)[-1] not in _FAILURE_SIGNALS:
            continue
        if exiting_handler(handler, functions, aliases):
            return True
    return False
