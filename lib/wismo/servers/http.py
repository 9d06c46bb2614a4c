"""Serve a low-level MCP server over Streamable HTTP, with bounded sessions: a cap and an idle timeout."""

from __future__ import annotations

import contextlib
import errno
import logging
import math
import signal
import socket
from collections.abc import Callable, Iterator
from typing import Any

from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError, jsonrpc_message_adapter
from starlette.responses import Response

from wismo.core.errors import WismoError
from wismo.servers.protocol import RequestIdInvalid, dropped_id
from wismo.servers.settings import SessionLimits

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
    """The SDK's session manager with one change at the cap: the session idle longest is closed to admit the new
    client (its ID then answers 404, and the protocol tells a client to start a new session on 404), where the SDK
    would refuse the new client with 503 until a session expires. Only when every session is serving a request at
    that moment does a new client get the SDK's 503."""

    def __init__(self, app: Server, limits: SessionLimits, security: TransportSecuritySettings | None) -> None:
        super().__init__(
            app,
            json_response=True,
            security_settings=security,
            session_idle_timeout=limits.idle_timeout_s,
            max_sessions=limits.max_sessions,
        )
        self.evicted = 0

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        # Called by the SDK under its session-creation lock, so the count cannot change between this and admission.
        if len(self._server_instances) >= self.max_sessions:
            self._close_idlest()
        return super()._admit_session(requestor)

    def _close_idlest(self) -> None:
        """Forget the session idle longest at once (its ID answers 404 from now on) and end its server task."""
        idle = [(since, sid) for sid, t in self._server_instances.items() if (since := _idle_since(t)) is not None]
        if not idle:
            return
        _, sid = min(idle)
        transport = self._server_instances.pop(sid)
        self._session_owners.pop(sid, None)
        # The session's task ends as on an idle timeout: its loop stops and the SDK terminates the transport.
        transport.idle_scope.cancel()
        self.evicted += 1
        log.info("closed idle session %s to admit a new client (%d sessions is the cap)", sid, self.max_sessions)


class QuietDisconnects(logging.Filter):
    """A client that goes away before its request body is read is ordinary on a network; the SDK logs it as an
    error with a traceback. This logs it as one line at INFO instead, and leaves every other record alone."""

    def filter(self, record: logging.LogRecord) -> bool:
        from starlette.requests import ClientDisconnect

        if record.exc_info and isinstance(record.exc_info[1], ClientDisconnect):
            log.info("a client disconnected before its whole request was read")
            return False
        return True


class RefuseDroppedIds:
    """In front of the SDK: a POSTed request whose id the SDK would drop (neither a string nor an integer) gets 400
    and a JSON-RPC error with id null, as over stdio, instead of the 202 a notification gets and no answer ever.
    Every other request reaches the SDK unchanged, its body replayed; one over the SDK's size limit is not read
    past it here, so the SDK still answers 413."""

    def __init__(self, app: Any, limit: int = DEFAULT_MAX_REQUEST_BODY_SIZE) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or self._declared_too_long(scope):
            await self.app(scope, receive, send)
            return
        messages, size, whole = [], 0, False
        while not whole and size <= self.limit:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":  # the client went away: let the SDK see it as it came
                break
            size += len(message.get("body", b""))
            whole = not message.get("more_body", False)
        if whole and (invalid := _dropped_id_in(b"".join(m.get("body", b"") for m in messages))) is not None:
            error = JSONRPCError(
                jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message=f"Invalid request: {invalid}.")
            )
            await Response(
                error.model_dump_json(by_alias=True, exclude_unset=True), 400, media_type="application/json"
            )(scope, receive, send)
            return

        async def replayed() -> Any:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replayed, send)


    def _declared_too_long(self, scope: Any) -> bool:
        """Whether the request says it is longer than the limit (or gives a length that is not a number): the SDK
        answers those at once from the header, and waiting here for a body that long would keep its client waiting."""
        declared = next((v for k, v in scope["headers"] if k == b"content-length"), None)
        return declared is not None and not (declared.isdigit() and int(declared) <= self.limit)


def _dropped_id_in(body: bytes) -> RequestIdInvalid | None:
    """The error a POSTed body deserves when it is a request whose id the SDK's adapter would drop."""
    if b'"id"' not in body:
        return None
    try:
        message = jsonrpc_message_adapter.validate_json(body, by_name=False)
    except Exception:  # not a message at all: the SDK gives its own answer
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
    app = Starlette(routes=[Route(PATH, endpoint=endpoint)], lifespan=lambda _: manager.run())
    app.state.sessions = manager
    return app


class CannotListen(WismoError, ValueError):
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

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                yield
                # SIGTERM asks the server to stop, and it has stopped gracefully: exit 0 rather than by the signal,
                # which uvicorn raises again once it is done. Ctrl-C still ends as KeyboardInterrupt.
                self._captured_signals = [s for s in self._captured_signals if s != signal.SIGTERM]

    logging.getLogger("mcp.server.streamable_http").addFilter(QuietDisconnects())
    app = http_app(server, limits or SessionLimits(), host)
    config = uvicorn.Config(app, host=host, port=port or 0, log_level="warning", lifespan="on")
    await Announcing(config).serve(sockets=[sock])
