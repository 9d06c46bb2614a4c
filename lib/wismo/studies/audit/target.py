"""What `wismo tokens` measures: a stdio command or a Streamable HTTP endpoint, and the tool calls to sample; a
TargetError when either cannot be used."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass

from wismo.core.errors import InputError
from wismo.mcp.client.address import Address


class TargetError(InputError):
    """A server that cannot be measured (not started, not reached, not MCP, too slow); the message is one sentence."""


def target(command: Sequence[str], url: str | None) -> Address:
    """An Address from a command line or a URL (exactly one of them); a TargetError names a missing command."""
    if bool(command) == bool(url):
        raise TargetError(
            "give either a server command after -- or --url http://HOST:PORT/mcp, "
            "for example: wismo tokens -- wismo serve granular"
        )
    if url:
        if not url.startswith(("http://", "https://")):
            raise TargetError(
                f"--url wants an http:// or https:// address such as http://127.0.0.1:8000/mcp, not {url!r}"
            )
        return Address(url=url)
    if shutil.which(command[0]) is None:
        raise TargetError(f"cannot start {' '.join(command)!r}: no command {command[0]!r} is here or on PATH")
    return Address(command=tuple(command))


@dataclass(frozen=True)
class Call:
    """One tools/call to sample: a tool and its arguments."""

    tool: str
    arguments: dict[str, object]


def parse_call(tool: str, arguments: str) -> Call:
    """A Call from `--call NAME JSON`; a ValueError names what is wrong with the JSON."""
    try:
        value = json.loads(arguments)
    except ValueError as exc:
        raise InputError(f"--call {tool}: the arguments are not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise InputError(f"--call {tool}: the arguments must be a JSON object, got {type(value).__name__}")
    return Call(tool, value)
