"""The environment a server wismo starts is given: what an MCP client gives a stdio server from its own, and the
variables wismo adds (the design registry, a design's own). Nothing here imports the SDK."""

from __future__ import annotations

import os

from wismo.mcp.servers import designs

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
