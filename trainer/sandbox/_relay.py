"""The first process inside a local sandbox: resource limits, then the command.

Run by path with the sandbox's Python (``python -I -S _relay.py [options] -- ARGV``); it uses
the standard library only. With ``--listen PORT --socket PATH`` it first listens on
``127.0.0.1:PORT`` and relays every connection to the unix socket ``PATH`` (bound in from
outside, where the proxy bridge answers), so a harness in a network namespace that has only
loopback reaches the proxy at the URL it was given. It then runs ARGV, waits for it, and
exits with its status; the sandbox's pid namespace, and everything left in it, ends with it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import socket
import subprocess
import sys
import threading

__all__ = ["main"]

_CHUNK = 65536


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while chunk := source.recv(_CHUNK):
            target.sendall(chunk)
    except OSError:
        pass
    finally:
        for end, how in ((target, socket.SHUT_WR), (source, socket.SHUT_RD)):
            with contextlib.suppress(OSError):
                end.shutdown(how)


def _relay(client: socket.socket, path: str) -> None:
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
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_relay, args=(client, path), daemon=True).start()


def _limit(kind: int, value: int | None, grace: int = 0) -> None:
    if value is not None:
        resource.setrlimit(kind, (value, value + grace))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="relay")
    parser.add_argument("--listen", type=int)
    parser.add_argument("--socket")
    parser.add_argument("--cpu", type=int, help="CPU seconds per process")
    parser.add_argument(
        "--memory", type=int, help="data segment (private writable memory) per process, bytes"
    )
    parser.add_argument("--files", type=int, help="file size limit, bytes")
    parser.add_argument("--ready-fd", type=int, help="written to, then closed, once set up")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    if not command:
        parser.error("no command")
    if options.listen is not None and options.socket:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", options.listen))
        listener.listen(128)
        threading.Thread(target=_serve, args=(listener, options.socket), daemon=True).start()
    _limit(resource.RLIMIT_CPU, options.cpu, grace=1)  # SIGXCPU first, then SIGKILL
    _limit(resource.RLIMIT_DATA, options.memory)
    _limit(resource.RLIMIT_FSIZE, options.files)
    if options.ready_fd is not None:
        os.write(options.ready_fd, b"1")
        os.close(options.ready_fd)
    try:
        process = subprocess.Popen(command)
    except OSError as problem:
        print(f"sandbox: cannot run {command[0]}: {problem}", file=sys.stderr)
        return 127
    code = process.wait()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
