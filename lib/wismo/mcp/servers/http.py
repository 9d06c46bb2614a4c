"""Serve a low-level MCP server over Streamable HTTP, with bounded sessions: a cap and an idle timeout."""

from __future__ import annotations

import errno
import logging
import math
import signal
import socket
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError, jsonrpc_message_adapter
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from wismo.core.errors import InputError
from wismo.mcp.servers.protocol import RequestIdInvalid, dropped_id, invalid_request
from wismo.mcp.servers.settings import SessionLimits

if TYPE_CHECKING:
    from mcp.server.auth.middleware.bearer_auth import AuthorizationContext

log = logging.getLogger("wismo.servers")

PATH = "/mcp"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _idle_since(transport: StreamableHTTPServerTransport) -> float | None:
    """When an idle session's countdown ends (earlier: idle longer), or None while a request (or GET stream) is in
    flight or the session has not started. The SDK holds the deadline at infinity while any request is served."""
    scope = transport.idle_scope
    if scope is None or scope.cancel_called or math.isinf(scope.deadline):
        return None
    return scope.deadline


class BoundedSessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager with one change at the cap: once a new client's session is established, the
    session idle longest is closed (its ID then answers 404, and the protocol tells a client to start a new session
    on 404), where the SDK would refuse the new client with 503 until a session expires. A request that opens no
    session (not an initialize, refused for its headers or body) closes none. Only when every session is serving a
    request does a new client get the SDK's 503."""

    def __init__(self, app: Server, limits: SessionLimits, security: TransportSecuritySettings | None) -> None:
        super().__init__(
            app,
            json_response=True,
            security_settings=security,
            session_idle_timeout=limits.idle_timeout_s,
            max_sessions=limits.max_sessions,
        )
        self.cap = limits.max_sessions

    def _live(self) -> dict[str, StreamableHTTPServerTransport]:
        """The sessions that count toward the cap: not those whose idle timeout has already ended them."""
        return {
            sid: t
            for sid, t in self._server_instances.items()
            if t.idle_scope is None or not t.idle_scope.cancel_called
        }

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        # Called by the SDK under its session-creation lock, with no await in between: the counts cannot change.
        # At the cap a newcomer is admitted past it when an idle session could make room once it is established;
        # the SDK's own limit is lifted for that one admission.
        if len(self._live()) >= self.cap and self._idlest() is None:
            return None
        self.max_sessions = None
        try:
            return super()._admit_session(requestor)
        finally:
            self.max_sessions = self.cap

    async def _serve_opening_request(
        self, http_transport: StreamableHTTPServerTransport, scope: Scope, receive: Receive, send: Send
    ) -> None:
        await super()._serve_opening_request(http_transport, scope, receive, send)
        # The SDK has kept the session only if its opening request succeeded: only then does it take a place.
        while len(self._live()) > self.cap and (sid := self._idlest(but=http_transport.mcp_session_id)) is not None:
            self._close(sid)

    def _idlest(self, but: str | None = None) -> str | None:
        """The session idle longest (other than `but`), or None when every one has a request in flight."""
        idle = [(since, sid) for sid, t in self._live().items() if sid != but and (since := _idle_since(t)) is not None]
        return min(idle)[1] if idle else None

    def _close(self, sid: str) -> None:
        """Forget a session at once (its ID answers 404 from now on) and end its server task."""
        transport = self._server_instances.pop(sid)
        self._session_owners.pop(sid, None)
        # The session's task ends as on an idle timeout: its loop stops and the SDK terminates the transport.
        if transport.idle_scope is not None:  # None only before the session's task has started
            transport.idle_scope.cancel()
        log.info("closed idle session %s for a new client (%d sessions is the cap)", sid, self.cap)


class QuietDisconnects(logging.Filter):
    """A client that goes away before its request body is read is ordinary on a network; the SDK logs it as an
    error with a traceback. This logs it at INFO (not shown at `wismo serve`'s WARNING level) and leaves every other
    record alone."""

    def filter(self, record: logging.LogRecord) -> bool:
        from starlette.requests import ClientDisconnect

        if record.exc_info and isinstance(record.exc_info[1], ClientDisconnect):
            log.info("a client disconnected before its whole request was read")
            return False
        return True


class RefuseDroppedIds:
    """Behind the SDK's own checks: when the SDK accepts a POSTed message as a notification (202) although it came
    with an id it dropped (neither a string nor an integer), the client gets 400 and a JSON-RPC error with id null
    instead, as over stdio, rather than an answer that never comes. Every other answer passes unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body: list[bytes] = []
        refused = False

        async def recorded() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                body.append(message.get("body", b""))
            return message

        async def checked(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 202:
                invalid = _dropped_id_in(b"".join(body))
                if invalid is not None:
                    refused = True
                    error = JSONRPCError(
                        jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message=invalid_request(invalid))
                    )
                    content = error.model_dump_json(by_alias=True, exclude_unset=True)
                    await Response(content, 400, media_type="application/json")(scope, receive, send)
                    return
            if not refused:  # the SDK's own 202 and its empty body are replaced by the refusal
                await send(message)

        await self.app(scope, recorded, checked)


def _dropped_id_in(body: bytes) -> RequestIdInvalid | None:
    """The error a POSTed body deserves when it is a request whose id the SDK's adapter dropped."""
    try:
        message = jsonrpc_message_adapter.validate_json(body, by_name=False)
    except Exception:  # not one message: the SDK has given its own answer
        return None
    return dropped_id(message, body)


def security_for(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection for a loopback host, as the SDK's own app sets it up; none for other hosts."""
    if host not in LOOPBACK:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def http_app(server: Server, limits: SessionLimits, host: str = "127.0.0.1") -> Any:
    """The ASGI app serving `server` at /mcp: stateful sessions within `limits`, JSON responses."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    manager = BoundedSessionManager(server, limits, security_for(host))
    endpoint = RefuseDroppedIds(StreamableHTTPASGIApp(manager))
    return Starlette(routes=[Route(PATH, endpoint=endpoint)], lifespan=lambda _: manager.run())


class CannotListen(InputError):
    """`wismo serve --http` cannot listen on `host` port `port`: `reason` says why (one sentence)."""

    def __init__(self, host: str, port: int, reason: str) -> None:
        super().__init__(reason)
        self.host = host
        self.port = port
        self.reason = reason


class PortTaken(CannotListen):
    """Another process already listens on `port` at `host`."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(host, port, f"port {port} on {host} is taken; choose another with --http PORT")


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to HOST:PORT (0: any free port) and listening; CannotListen (PortTaken when the port is
    in use) in one sentence otherwise. Bound here, not by uvicorn, so a taken port is our sentence, not its log."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise CannotListen(host, port, f"cannot listen on {host}: not an address here ({exc.strerror})") from None
    sock = socket.socket(family, kind, proto)
    # As uvicorn does: a port a previous server left in TIME_WAIT is free to use; one that is listening is not.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortTaken(host, port) from None
        raise CannotListen(host, port, f"cannot listen on {host} port {port}: {exc.strerror or exc}") from None
    return sock


def url_of(sock: socket.socket) -> str:
    """The Streamable HTTP endpoint a listening socket serves: http://HOST:PORT/mcp."""
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}{PATH}"


async def serve_http(
    server: Server,
    port: int | None,
    host: str = "127.0.0.1",
    listening_fd: int | None = None,
    on_listening: Callable[[str], None] | None = None,
    limits: SessionLimits | None = None,
) -> None:
    """Serve Streamable HTTP at http://HOST:PORT/mcp (stateful sessions within `limits`, JSON responses) until
    stopped; or on a socket the parent already bound and listens on (`listening_fd`), so no other process can take
    its port first. `on_listening` is given the endpoint's URL once the server accepts requests."""
    import uvicorn

    sock = socket.socket(fileno=listening_fd) if listening_fd is not None else listening_socket(host, port or 0)

    class Announcing(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started and on_listening is not None:
                on_listening(url_of(sock))

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            super().handle_exit(sig, frame)
            # SIGTERM asks the server to stop, and it stops gracefully: exit 0 then, not by the signal that uvicorn
            # would raise again once it is done. Ctrl-C still ends as KeyboardInterrupt.
            if sig == signal.SIGTERM:
                self._captured_signals = [s for s in self._captured_signals if s != signal.SIGTERM]

    logging.getLogger("mcp.server.streamable_http").addFilter(QuietDisconnects())
    app = http_app(server, limits or SessionLimits(), host)
    config = uvicorn.Config(app, host=host, port=port or 0, log_level="warning", lifespan="on")
    await Announcing(config).serve(sockets=[sock])
