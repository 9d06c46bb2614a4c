"""A stdio server started as an MCP client starts it, before the SDK is imported, for the SDK's stdio client to adopt.

Importing the SDK takes about as long as a server's whole start, and the server needs nothing from it: a command that
starts a server and then measures it (`wismo tokens`) spawns it here first, imports the SDK while the server starts,
and hands the process to `connection.connect`, where the SDK's own `stdio_client` adopts it and runs the session and
the shutdown exactly as for a process it had spawned itself. Nothing here imports the SDK.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from typing import IO, Any

import anyio

from wismo.servers import designs

# What an MCP client gives a stdio server from its own environment on POSIX (the SDK's DEFAULT_INHERITED_ENV_VARS and
# get_default_environment; tests/test_spawn.py holds them equal).
CLIENT_ENV_KEYS = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


def client_env() -> dict[str, str]:
    """The environment an MCP client gives a stdio server: these few variables of ours, nothing else."""
    # A value starting "()" is an exported shell function, which the SDK does not pass on either.
    return {k: v for k in CLIENT_ENV_KEYS if (v := os.environ.get(k)) is not None and not v.startswith("()")}


def server_env(env: dict[str, str] | None = None) -> dict[str, str] | None:
    """The variables a server we start gets over the client's own (the design registry, then `env`); None for none."""
    return {**designs.env(), **(env or {})} or None


@dataclass
class Spawned:
    """A server process started with pipes in its own session, its stderr going to `errlog`."""

    command: list[str]
    env: dict[str, str]
    cwd: str | None
    process: Any  # anyio.abc.Process, exactly what the SDK's stdio client would have spawned
    errlog: IO[str]
    adopted: bool = False  # set when the SDK's stdio client takes it over: from then on its shutdown stops it


@asynccontextmanager
async def spawned(
    command: Sequence[str], env: dict[str, str] | None = None, cwd: str | None = None
) -> AsyncIterator[Spawned | None]:
    """Start `command` now as the SDK's stdio client would; None when it cannot be (connect() then says why)."""
    # The same call as the SDK's (mcp/client/stdio.py, _create_platform_compatible_process): the client's environment,
    # a session of its own, stderr to a temporary file. A process nobody adopted is killed with its group on exit,
    # and its pipes closed. POSIX only: on Windows the SDK rewrites the command and starts a job object instead.
    if sys.platform == "win32":
        yield None
        return
    full_env = client_env() | (server_env(env) or {})
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errlog:
        try:
            process = await anyio.open_process(
                list(command), env=full_env, stderr=errlog, cwd=cwd, start_new_session=True
            )
        except OSError:
            yield None
            return
        server = Spawned(list(command), full_env, cwd, process, errlog)
        try:
            yield server
        finally:
            if process.returncode is None:  # never adopted, or left alive by the SDK's shutdown (it warns)
                with suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
            if not server.adopted:
                with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                    await process.aclose()
