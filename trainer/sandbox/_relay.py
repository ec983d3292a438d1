"""The first process inside a local sandbox: resource limits, then the command.

Run by path with the sandbox's Python (``python -I -S _relay.py [options] -- ARGV``); it uses
the standard library only, and imports little, since every sandboxed command waits for it.
With ``--listen PORT --socket PATH`` it first listens on ``127.0.0.1:PORT`` and relays every
connection to the unix socket ``PATH`` (bound in from outside, where the proxy bridge
answers), so a harness in a network namespace that has only loopback reaches the proxy at
the URL it was given. ``--ready-fd N`` is written to, then closed, once that is set up (the
sandbox started). It then runs ARGV, waits for it, and exits with its status; the sandbox's
pid namespace, and everything left in it, ends with it.
"""

from __future__ import annotations

import os
import resource
import socket
import sys

__all__ = ["main"]

_CHUNK = 65536
_LIMITS = {
    "--cpu": (resource.RLIMIT_CPU, 1),  # SIGXCPU at the limit, SIGKILL a second later
    "--memory": (resource.RLIMIT_DATA, 0),  # private writable memory, not reserved space
    "--files": (resource.RLIMIT_FSIZE, 0),
}


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while chunk := source.recv(_CHUNK):
            target.sendall(chunk)
    except OSError:
        pass
    finally:
        for end, how in ((target, socket.SHUT_WR), (source, socket.SHUT_RD)):
            try:  # noqa: SIM105 - contextlib is one more import for every sandbox start
                end.shutdown(how)
            except OSError:
                pass


def _relay(client: socket.socket, path: str) -> None:
    import threading

    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
    back.start()
    _pipe(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, path: str) -> None:
    import threading

    while True:
        client, _ = listener.accept()
        threading.Thread(target=_relay, args=(client, path), daemon=True).start()


def _listen(port: int, path: str) -> None:
    import threading

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()


def _parse(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    while argv and argv[0] != "--":
        if len(argv) < 2 or not argv[0].startswith("--"):
            raise SystemExit(f"relay: bad arguments {argv[:2]}")
        options[argv[0]] = argv[1]
        argv = argv[2:]
    if len(argv) < 2:
        raise SystemExit("relay: no command")
    return options, argv[1:]


def main(argv: list[str] | None = None) -> int:
    options, command = _parse(list(sys.argv[1:] if argv is None else argv))
    if "--listen" in options and "--socket" in options:
        _listen(int(options["--listen"]), options["--socket"])
    for flag, (kind, grace) in _LIMITS.items():
        if flag in options:
            value = int(options[flag])
            resource.setrlimit(kind, (value, value + grace))
    if "--ready-fd" in options:
        ready = int(options["--ready-fd"])
        os.write(ready, b"1")
        os.close(ready)
    try:
        pid = os.posix_spawnp(command[0], command, os.environ)
    except OSError as problem:
        print(f"sandbox: cannot run {command[0]}: {problem}", file=sys.stderr)
        return 127
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
