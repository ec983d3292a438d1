"""``python -m safeagents.scripted SCRIPT [--port N]``: serve a scripted model until Ctrl-C
(SIGINT) or SIGTERM."""

from __future__ import annotations

import argparse
import signal

from safeagents.scripted._script import Script
from safeagents.scripted._server import ScriptedServer

_STOP = {signal.SIGINT, signal.SIGTERM}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m safeagents.scripted", description=__doc__)
    parser.add_argument("script", help="YAML or JSON script: a list of steps")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--model", action="append", help="model names listed by /v1/models")
    args = parser.parse_args(argv)
    names = tuple(args.model or ["scripted"])
    # Blocked before the server's threads start, so they inherit the block and the kernel
    # hands the stop signal to this thread's sigwait: a signal taken by another thread would
    # not wake a main thread asleep in a system call.
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP)
    with ScriptedServer(Script.load(args.script), args.host, args.port, names) as server:
        print(f"scripted model listening on {server.base_url}", flush=True)
        signal.sigwait(_STOP)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
