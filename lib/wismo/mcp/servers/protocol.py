"""The pinned MCP protocol revision, the server middleware that holds every client to it, and the one rule of
JSON-RPC the SDK's message adapter does not keep (a request's id of the wrong type), for both transports."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_REQUEST, PROTOCOL_VERSION_META_KEY, UNSUPPORTED_PROTOCOL_VERSION, JSONRPCNotification

from wismo.core.errors import InputError
from wismo.core.revision import PINNED_REVISION


def _has_modern_envelope(params: Mapping[str, object] | None) -> bool:
    """Whether a request carries the 2026-07-28 per-request protocol envelope."""
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    return isinstance(meta, Mapping) and PROTOCOL_VERSION_META_KEY in meta


async def pin_revision(ctx: Any, call_next: Any) -> Any:
    """Refuse the handshake-less era and answer every initialize with the pinned revision."""
    if ctx.method == "server/discover" or (ctx.request_id is not None and _has_modern_envelope(ctx.params)):
        # -32022 naming only a handshake revision is what makes a 2026-era client fall back to initialize.
        requested = None
        meta = (ctx.params or {}).get("_meta") if isinstance(ctx.params, Mapping) else None
        if isinstance(meta, Mapping):
            requested = meta.get(PROTOCOL_VERSION_META_KEY)
        raise MCPError(
            code=UNSUPPORTED_PROTOCOL_VERSION,
            message=f"This server speaks MCP revision {PINNED_REVISION} through the initialize handshake only.",
            data={"supported": [PINNED_REVISION], "requested": requested if isinstance(requested, str) else None},
        )
    if ctx.request_id is not None and ctx.method not in ("initialize", "ping"):
        connection = getattr(ctx.session, "_connection", None)  # the SDK's per-connection state (pinned SDK)
        if connection is not None and not connection.initialize_accepted:
            # The SDK's own answer here is a bare "Invalid request parameters"; say what is actually wrong.
            raise MCPError(
                code=INVALID_REQUEST,
                message=f"{ctx.method} before the handshake: send initialize (MCP revision {PINNED_REVISION}) first.",
            )
    result = await call_next(ctx)
    if ctx.method == "initialize" and isinstance(result, dict) and "protocolVersion" in result:
        # The spec lets a server answer a revision it does not speak with the one it does;
        # the client then decides whether to go on.
        result = {**result, "protocolVersion": PINNED_REVISION}
    return result


class RequestIdInvalid(InputError):
    """A request to `method` whose id is neither a string nor an integer: an invalid request, not a notification."""

    def __init__(self, method: str) -> None:
        super().__init__(f"the id of a {method} request is neither a string nor an integer")
        self.method = method


def invalid_request(reason: Exception) -> str:
    """The message of the -32600 error for a message wismo refuses, in the one sentence `reason` gives."""
    return f"Invalid request: {reason}."


def dropped_id(message: object, text: str | bytes) -> RequestIdInvalid | None:
    """The error a message deserves when the SDK's adapter read it as a notification although it has an id member.

    The adapter reads {"id": true, "method": ...} (an id of the wrong type) as a notification and drops the id, so
    the request would go unanswered and its client wait forever; JSON-RPC calls it an invalid request, answered with
    an error whose id is null. Notifications are few and short: parsing them again is cheap."""
    if not isinstance(message, JSONRPCNotification):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return RequestIdInvalid(message.method) if isinstance(value, dict) and "id" in value else None
