"""Where every server process wismo starts is started and stopped: its command, the environment an MCP client gives
it, its pipes, and a listening socket handed down to an HTTP server. Nothing here imports the SDK."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from typing import IO, cast

from wismo.core import processes
from wismo.mcp.servers import designs

# What an MCP client gives a stdio server from its own environment on POSIX (the SDK's DEFAULT_INHERITED_ENV_VARS and
# get_default_environment; tests/test_process.py holds them equal).
CLIENT_ENV_KEYS = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
Stream = int | IO[bytes] | IO[str] | None  # where a child's stream goes: PIPE, DEVNULL, or an open file


def client_env() -> dict[str, str]:
    """The environment an MCP client gives a stdio server: these few variables of ours, nothing else."""
    # A value starting "()" is an exported shell function, which the SDK does not pass on either.
    return {k: v for k in CLIENT_ENV_KEYS if (v := os.environ.get(k)) is not None and not v.startswith("()")}


def server_env(env: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """The variables a server we start gets over the client's own (the design registry, then `env`); None for none."""
    return {**designs.env(), **(env or {})} or None


def server_command(design: str, http_port: int | None = None, http_fd: int | None = None) -> list[str]:
    """The command that serves `design` with the servers' interpreter (works with a minimal environment): over stdio,
    on an HTTP port, or on a listening socket handed down by file descriptor."""
    command = [processes.interpreter(), "-m", "wismo", "serve", design]
    if http_fd is not None:
        return command + ["--http-fd", str(http_fd)]
    return command + ["--http", str(http_port)] if http_port is not None else command


def listening_socket() -> socket.socket:
    """A socket bound to a free port on 127.0.0.1 and listening, to hand to a server process: unlike a port number
    chosen first and bound by the child later, no other process can take it in between."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return cast("int", s.getsockname()[1])


def start(
    command: Sequence[str],
    env: Mapping[str, str] | None = None,
    cwd: str | None = "/",
    stdin: Stream = PIPE,
    stdout: Stream = PIPE,
    stderr: Stream = DEVNULL,
    handed: socket.socket | None = None,
    detached: bool = False,
    preexec: Callable[[], None] | None = None,
) -> subprocess.Popen[bytes]:
    """Start a server process: `command` in `cwd` with `env` (default: what an MCP client gives), its streams as
    asked, the listening socket `handed` down to it; `detached` puts it in a session of its own, out of reach of
    signals sent to our process group (`preexec` runs in the child before it starts)."""
    return subprocess.Popen(
        list(command),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=dict(client_env() if env is None else env),
        cwd=cwd,
        pass_fds=(handed.fileno(),) if handed is not None else (),
        start_new_session=detached,
        preexec_fn=preexec,
    )


def stop(process: subprocess.Popen[bytes], grace_s: float = 5.0) -> int:
    """Stop a server process: SIGTERM (and SIGCONT, should it be stopped), then SIGKILL after `grace_s`; its exit
    code."""
    if process.poll() is None:
        with suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
            process.send_signal(signal.SIGCONT)
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(grace_s)
    return process.returncode
