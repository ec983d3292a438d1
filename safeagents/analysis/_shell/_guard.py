"""A bound on one tree-sitter parse, measured in a helper process before the real one.

tree-sitter's error recovery is superlinear on some malformed input: 4 KB of ``a|a|…|``,
``a=(b a=(b …`` or ``$[$[…`` take 0.1-0.5 s, in native code that keeps the GIL (so a check
running off the event loop still stalls it) and that calls neither the progress callback nor
the logger meanwhile, so it cannot be interrupted. A piece with more than
:data:`GUARD_ABOVE` bytes of code is therefore parsed first by a helper process (one per
thread, started on first use, ending with its stdin); the thread waits for it without the GIL.
A parse that took more than :data:`PARSE_BUDGET` seconds of the helper's CPU is not repeated
here: the piece is unanalysable. Smaller pieces (every call checked on the event loop: at most
2,048 characters) parse in at most ~15-40 ms and are not guarded.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import sys
import threading
import time

__all__ = ["GUARD_ABOVE", "PARSE_BUDGET", "parses_in_time"]

GUARD_ABOVE = 2_048
"""Bytes of code above which a parse is measured in the helper first."""
PARSE_BUDGET = 0.05
"""CPU seconds one guarded parse may take (an honest 4 KB script takes 1-4 ms)."""
WAIT_LIMIT = 10.0
"""Wall-clock seconds to wait for the helper (a loaded machine) before it counts as too slow."""

_HELPER = r"""
import sys, time
import tree_sitter, tree_sitter_bash
parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
read, write = sys.stdin.buffer.read, sys.stdout.buffer
while True:
    head = read(4)
    if len(head) < 4:
        break
    source = read(int.from_bytes(head, "big"))
    started = time.thread_time()
    parser.parse(source)
    write.write(f"{time.thread_time() - started:.6f}\n".encode())
    write.flush()
"""
_local = threading.local()


class _Helper:
    """One helper process, ended when its thread's storage is dropped (or it misbehaves)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _HELPER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()


def _helper() -> _Helper:
    helper: _Helper | None = getattr(_local, "helper", None)
    if helper is None or helper.process.poll() is not None:
        if helper is not None:
            helper.stop()
        helper = _local.helper = _Helper()
    return helper


def _drop(helper: _Helper) -> None:
    helper.stop()
    _local.helper = None


def parses_in_time(source: bytes) -> bool:
    """Whether parsing ``source`` (ASCII, as the parser is given it) takes at most
    :data:`PARSE_BUDGET` CPU seconds; ``True`` when no helper can be run."""
    try:
        helper = _helper()
    except OSError:
        return True
    process = helper.process
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(len(source).to_bytes(4, "big") + source)
        process.stdin.flush()
        deadline = time.monotonic() + WAIT_LIMIT
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([process.stdout], [], [], left)[0]:
                _drop(helper)
                return False
            chunk = os.read(process.stdout.fileno(), 64)
            if not chunk:
                raise OSError("the parse helper exited")
            line += chunk
        return float(line) <= PARSE_BUDGET
    except (OSError, ValueError):
        _drop(helper)
        return True
