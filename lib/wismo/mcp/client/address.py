"""Where an MCP server is: a design wismo serves, a stdio command (run in a folder, with variables of its own) or a
Streamable HTTP URL; one type for every part of wismo that reaches a server."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NotRequired, TypedDict

from wismo.mcp.client.process import client_env, server_command, server_env

if TYPE_CHECKING:
    from wismo.mcp.client.connection import Connection


class Target(TypedDict):
    """An address in a measurement's JSON: its transport, and its URL or its command."""

    transport: str
    url: NotRequired[str]
    command: NotRequired[list[str]]


@dataclass(frozen=True)
class Address:
    """Where a server is: exactly one of `serve` (a design wismo serves, over either transport), `command` (a stdio
    server run in `cwd` with `env` over the client's own) or `url` (a Streamable HTTP endpoint someone else runs)."""

    serve: str | None = None
    command: tuple[str, ...] = ()
    url: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None

    @property
    def fixed_transport(self) -> str | None:
        """The transport the address fixes: None for a design wismo serves, which takes either."""
        return None if self.serve else ("http" if self.url else "stdio")

    @property
    def transport(self) -> str:
        """The transport it is reached over when none is asked: the fixed one, else stdio."""
        return self.fixed_transport or "stdio"

    def argv(self) -> list[str]:
        """The command that starts the server over stdio (a served design's `wismo serve`)."""
        return list(self.command) if self.command or self.serve is None else server_command(self.serve)

    def process_env(self) -> dict[str, str]:
        """The whole environment the server process gets: the client's, the design registry's, then its own."""
        return {**client_env(), **(server_env(self.env) or {})}

    def describe(self) -> str:
        """The address as a sentence names it."""
        return self.url or (f"wismo serve {self.serve}" if self.serve else " ".join(self.command))

    def as_dict(self) -> Target:
        """The address in a measurement's JSON."""
        if self.url:
            return {"transport": "http", "url": self.url}
        return {"transport": "stdio", "command": self.argv()}

    def connect(
        self, name: str, transport: str | None = None, env: Mapping[str, str] | None = None, timeout_s: float = 20.0
    ) -> AbstractAsyncContextManager[Connection]:
        """An SDK session with the server, named `name`: wismo's own over `transport` (default stdio), any other as
        the address says (over `env` too), its revision not held to wismo's pin."""
        from wismo.mcp.client.connection import connect  # the SDK, imported only by what connects

        extra = {**self.env, **(env or {})} or None
        if self.serve:
            return connect(self.serve, transport or "stdio", extra, timeout_s)
        if self.url:
            return connect(name, "http", timeout_s=timeout_s, url=self.url, require_pinned=False)
        return connect(name, "stdio", extra, timeout_s, list(self.command), False, cwd=self.cwd)
