"""Raw MCP clients with no SDK in between: JSON lines over a server's stdio, HTTP/1.1 on one kept-alive socket.

The benchmark uses them to time the server alone; the tests use them to see the wire exactly. Every read has a
deadline, so neither can hang.
"""

from __future__ import annotations

import json
import os
import select
import socket
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping
from typing import IO, Any, BinaryIO, Self, cast

from wismo.core.processes import piped
from wismo.core.revision import PINNED_REVISION
from wismo.mcp.client.process import DEVNULL, PIPE, Stream, client_env, listening_socket, server_command, start, stop

INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def line(message: Mapping[str, object]) -> bytes:
    """A JSON-RPC message as one compact JSON line, newline included."""
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _initialize_params(revision: str) -> dict[str, object]:
    """The params of the initialize request a client opens with."""
    return {
        "protocolVersion": revision,
        "capabilities": {},
        "clientInfo": {"name": "wismo-raw", "version": "0"},
    }


def initialize(revision: str = PINNED_REVISION, request_id: int | str = 1) -> dict[str, object]:
    """The initialize request a client opens with."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": _initialize_params(revision),
    }


def tools_call(tool: str, arguments: Mapping[str, object], request_id: int | str = 7) -> dict[str, object]:
    """The tools/call request an SDK client sends."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


# Bytes read from a pipe past the last line returned, per stream. The pipe is read with os.read, never through the
# stream's own buffer: select() cannot see lines a buffered readline() already took, so answers that arrived together
# would wait for a deadline (seen when a busy machine coalesces pipelined answers into one read).
_pending: weakref.WeakKeyDictionary[IO[bytes], bytearray] = weakref.WeakKeyDictionary()


def read_line(stream: IO[bytes], timeout_s: float = 20.0) -> bytes:
    """One line from a pipe, or an error after the deadline or when the peer has closed its end."""
    buffer = _pending.setdefault(stream, bytearray())
    deadline = time.monotonic() + timeout_s
    while b"\n" not in buffer:
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise TimeoutError(f"no line within {timeout_s:g} s")
        chunk = os.read(stream.fileno(), 65536)
        if not chunk:
            if buffer:  # a last line without its newline
                last = bytes(buffer)
                buffer.clear()
                return last
            raise EOFError("the peer closed its output")
        buffer += chunk
    end = buffer.index(b"\n") + 1
    got = bytes(buffer[:end])
    del buffer[:end]
    return got


def write_all(stream: IO[bytes], data: bytes, timeout_s: float = 20.0) -> None:
    """Write all of `data` to a pipe, or an error after the deadline (a peer that has stopped reading)."""
    stream.flush()
    view = memoryview(data)
    deadline = time.monotonic() + timeout_s
    while view:
        _, ready, _ = select.select([], [stream], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise TimeoutError(f"the peer read nothing for {timeout_s:g} s")
        # At most PIPE_BUF bytes at a time: a pipe select() calls writable takes that much without blocking.
        view = view[os.write(stream.fileno(), view[: select.PIPE_BUF]) :]


def rest(stream: IO[bytes]) -> bytes:
    """Everything left on a pipe until the peer closes it, the bytes read_line already holds first."""
    return bytes(_pending.pop(stream, b"")) + stream.read()


def _succeeded(tool: str, answer: bytes) -> None:
    """Raise unless the answer is a successful tool result (checked on the bytes: parsing is not the server's cost)."""
    if b'"isError":false' not in answer:
        raise RuntimeError(f"{tool} failed: {answer[:300]!r}")


def _handshake_check(who: str, answer: dict[str, Any]) -> dict[str, object]:
    """The initialize answer, or an error if the server did not answer it with the pinned revision."""
    if answer.get("result", {}).get("protocolVersion") != PINNED_REVISION:
        raise RuntimeError(f"{who} did not complete the handshake at {PINNED_REVISION}: {json.dumps(answer)[:300]}")
    return answer


class _TimedCalls:
    """What both raw clients share: a timed tools/call that must succeed, built on each one's own `call`, and a
    with block that ends in each one's own `close`."""

    call: Callable[[str, Mapping[str, object]], tuple[float, bytes]]
    close: Callable[[], object]

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def timed_call(self, tool: str, arguments: Mapping[str, object]) -> float:
        """One tools/call: ms from sending it to reading the whole answer; an error unless the tool succeeded."""
        elapsed, answer = self.call(tool, arguments)
        _succeeded(tool, answer)
        return elapsed


class RawServer(_TimedCalls):
    """A server process over stdio, spoken to line by line."""

    def __init__(
        self,
        design: str,
        env: dict[str, str] | None = None,
        cwd: str = "/",
        command: list[str] | None = None,
        keep_stderr: bool = True,
        stderr_file: BinaryIO | None = None,
    ) -> None:
        # keep_stderr=False for long runs: nobody reads the pipe, and a full pipe would block the server; or a file
        # (stderr_file), read once the server has exited.
        self.proc = start(
            command or server_command(design), env, cwd, stderr=stderr_file or (PIPE if keep_stderr else DEVNULL)
        )
        self.design = design
        self.next_id = 1

    def send(self, message: Mapping[str, object] | str) -> None:
        """Write one message (a dict, or a string sent as it is) and its newline."""
        data = message.encode() + b"\n" if isinstance(message, str) else line(message)
        piped(self.proc.stdin).write(data)
        piped(self.proc.stdin).flush()

    def send_bytes(self, data: bytes, timeout_s: float = 20.0) -> None:
        """Write bytes as they are, no newline added (frames that are not JSON, partial frames), within a deadline."""
        write_all(piped(self.proc.stdin), data, timeout_s)

    def recv(self, timeout: float = 15.0) -> dict[str, object]:
        """The next line from the server, parsed."""
        return cast("dict[str, object]", json.loads(read_line(piped(self.proc.stdout), timeout)))

    def request(self, method: str, params: dict[str, object] | None = None) -> dict[str, object]:
        """Send a request with the next id and return the next line."""
        message: dict[str, object] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.next_id += 1
        self.send(message)
        return self.recv()

    def handshake(self, revision: str = PINNED_REVISION) -> dict[str, object]:
        """initialize at `revision`, then notifications/initialized; the initialize answer."""
        answer = self.request("initialize", _initialize_params(revision))
        self.send(INITIALIZED)
        return answer

    def checked_handshake(self) -> dict[str, object]:
        """The handshake at the pinned revision, or an error naming the server when it was not completed."""
        return _handshake_check(f"the {self.design} server over stdio", self.handshake())

    def call(self, tool: str, arguments: Mapping[str, object]) -> tuple[float, bytes]:
        """One tools/call with the next id: ms from writing the line to reading the answer, and the answer unread."""
        self.next_id += 1
        data = line(tools_call(tool, arguments, self.next_id))
        started = time.perf_counter()
        piped(self.proc.stdin).write(data)
        piped(self.proc.stdin).flush()
        answer = read_line(piped(self.proc.stdout))
        return (time.perf_counter() - started) * 1000, answer

    def close(self) -> int | None:
        """Close stdin and wait for the exit code; kill the server if it does not exit."""
        piped(self.proc.stdin).close()
        try:
            return self.proc.wait(10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(10)
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    stream.close()


def spawn_and_ask(
    command: list[str], message: dict[str, object], env: dict[str, str] | None = None
) -> tuple[float, bytes, str]:
    """Spawn `command`, send one line, read one line back: elapsed ms (spawn included), the answer, its stderr."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = start(command, client_env() | (env or {}), stderr=err)
        try:
            piped(proc.stdin).write(line(message))
            piped(proc.stdin).flush()
            answer = read_line(piped(proc.stdout))
            elapsed = (time.perf_counter() - started) * 1000
            piped(proc.stdin).close()
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
            piped(proc.stdout).close()
        err.seek(0)
        return elapsed, answer, err.read().decode(errors="replace")


def status_of(status_line: bytes) -> int:
    """The status code of an HTTP/1.1 status line (0 when there is none)."""
    parts = status_line.split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def read_http_response(reader: BinaryIO) -> tuple[bytes, dict[str, str], bytes]:
    """Status line, headers (lower-case names) and body of one HTTP/1.1 response (Content-Length or chunked)."""
    status = reader.readline()
    headers: dict[str, str] = {}
    got = reader.readline()
    while got not in (b"\r\n", b"\n", b""):
        name, _, value = got.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
        got = reader.readline()
    if headers.get("transfer-encoding", "").lower() != "chunked":
        return status, headers, reader.read(int(headers.get("content-length", "0")))
    body = b""
    while (size := int(reader.readline().split(b";")[0], 16)) != 0:
        body += reader.read(size)
        reader.readline()
    reader.readline()
    return status, headers, body


class HttpConnection:
    """One kept-alive HTTP/1.1 connection to 127.0.0.1 that POSTs JSON bodies to /mcp."""

    def __init__(self, port: int, timeout_s: float = 20.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = self.sock.makefile("rb")
        self.host = f"127.0.0.1:{port}"

    def post(self, body: bytes, headers: dict[str, str] | None = None) -> tuple[bytes, dict[str, str], bytes]:
        """POST one body and read the whole response: status line, headers, body."""
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\n{extra}Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        self.sock.sendall(head + body)
        return read_http_response(self.reader)

    def open_session(self) -> tuple[str, bytes]:
        """initialize at the pinned revision, then notifications/initialized in the new session: the session's id
        and the initialize answer; RuntimeError saying what came back when no session was opened."""
        headers = {"MCP-Protocol-Version": PINNED_REVISION}
        status_line, got, body = self.post(line(initialize()).strip(), headers)
        session = got.get("mcp-session-id")
        if status_of(status_line) != 200 or not session:
            raise RuntimeError(
                f"initialize was answered {status_line.decode(errors='replace').strip()}: {body[:200]!r}"
            )
        self.post(line(INITIALIZED).strip(), headers | {"Mcp-Session-Id": session})
        return session, body

    def close(self) -> None:
        """Close the connection."""
        self.reader.close()
        self.sock.close()


class HttpSession(_TimedCalls):
    """One MCP session on its own kept-alive connection to a server already listening on 127.0.0.1:port; several
    can share one server, as the clients of a real one do."""

    def __init__(self, design: str, port: int, timeout_s: float = 20.0) -> None:
        self.design = design
        self.port = port
        self.conn = HttpConnection(port, timeout_s)
        self.headers = {"MCP-Protocol-Version": PINNED_REVISION}
        self.next_id = 1

    def post(self, message: dict[str, object]) -> tuple[bytes, dict[str, str], bytes]:
        """POST one JSON-RPC message with the session's headers."""
        return self.conn.post(line(message).strip(), self.headers)

    def checked_handshake(self) -> dict[str, object]:
        """initialize (keeping the session id), then notifications/initialized; an error if not completed."""
        session, body = self.conn.open_session()
        self.headers["Mcp-Session-Id"] = session
        try:
            answer = json.loads(body)
        except ValueError:
            raise RuntimeError(f"the {self.design} server over HTTP answered initialize with {body[:200]!r}") from None
        return _handshake_check(f"the {self.design} server over HTTP", answer)

    def call(self, tool: str, arguments: Mapping[str, object]) -> tuple[float, bytes]:
        """One tools/call with the next id: ms from sending the request to reading the whole answer, and its body."""
        self.next_id += 1
        body = line(tools_call(tool, arguments, self.next_id)).strip()
        started = time.perf_counter()
        _, _, answer = self.conn.post(body, self.headers)
        return (time.perf_counter() - started) * 1000, answer

    def close(self) -> int | None:
        """Close the connection (the server goes on): None, no exit code, unlike RawHttp's."""
        if (conn := getattr(self, "conn", None)) is not None:  # RawHttp closes before it connects when that fails
            conn.close()
        return None


class RawHttp(HttpSession):
    """A server process over Streamable HTTP (stateful, JSON responses), spoken to with raw HTTP/1.1; `port` is
    where further sessions (HttpSession) can reach the same server."""

    def __init__(
        self,
        design: str,
        timeout_s: float = 20.0,
        options: tuple[str, ...] = (),
        stdout: Stream = DEVNULL,
        stderr: Stream = DEVNULL,
    ) -> None:
        # options: more `wismo serve` options (session limits); stdout, stderr: files to keep what the server wrote.
        with listening_socket() as sock:  # handed down already listening: no other process can take the port
            port = sock.getsockname()[1]
            self.proc = start(
                server_command(design, http_fd=sock.fileno()) + list(options),
                stdin=DEVNULL,
                stdout=stdout,
                stderr=stderr,
                handed=sock,
                detached=True,
            )
        deadline = time.monotonic() + timeout_s
        while not hasattr(self, "conn"):
            try:
                super().__init__(design, port, timeout_s)
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.close()
                    raise RuntimeError(f"the {design} server over HTTP did not listen on 127.0.0.1:{port}") from None
                time.sleep(0.02)

    def close(self) -> int:
        """Close the connection and stop the server (SIGTERM, then SIGKILL after 5 s); its exit code."""
        super().close()
        return stop(self.proc)
