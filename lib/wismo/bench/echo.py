"""The floors' far end: `python -m wismo.bench.echo pipe|once [MODULE ...]|http`, a process that only moves bytes.

pipe: echo every line of stdin to stdout. once: import the named modules (none for the bare interpreter), then
echo one line and exit. http: listen on a free port of 127.0.0.1, print it, and echo every POST body on one
kept-alive connection. Only the standard library, so the floor carries nothing of wismo's.
"""

from __future__ import annotations

import importlib
import sys


def pipe() -> None:
    """Echo JSON lines until end of input."""
    read, write = sys.stdin.buffer, sys.stdout.buffer
    for got in iter(read.readline, b""):
        write.write(got)
        write.flush()


def once(modules: list[str]) -> None:
    """Import `modules`, then answer one line with itself."""
    for name in modules:
        importlib.import_module(name)
    sys.stdout.buffer.write(sys.stdin.buffer.readline())
    sys.stdout.buffer.flush()


def http() -> None:
    """Accept one connection and answer every request with its own body, until the client closes."""
    import socket  # here, so that the other modes' start does not pay for it

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    sys.stdout.write(f"{server.getsockname()[1]}\n")
    sys.stdout.flush()
    conn, _ = server.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    reader = conn.makefile("rb")
    while got := reader.readline():  # the request line
        length = 0
        while got not in (b"\r\n", b"\n", b""):
            name, _, value = got.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
            got = reader.readline()
        body = reader.read(length)
        conn.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body
        )


def main(argv: list[str]) -> int:
    """Run the mode named first in argv."""
    modes = {"pipe": pipe, "once": lambda: once(argv[1:]), "http": http}
    if not argv or argv[0] not in modes:
        print(f"usage: python -m wismo.bench.echo {'|'.join(modes)}", file=sys.stderr)
        return 2
    modes[argv[0]]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
