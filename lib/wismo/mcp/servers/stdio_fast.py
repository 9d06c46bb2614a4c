"""A stdio server transport without worker threads, for the SDK's own server loop.

The SDK's `mcp.server.stdio.stdio_server` reads each line, writes each answer and flushes it through
`anyio.wrap_file`, that is through a worker thread, and bridges them to the server loop with two memory
streams and two more tasks. That costs about half of a steady-state tools/call round trip. This transport
reads and writes the same pipes with the event loop's own non-blocking pipe transports and hands
`mcp.server.runner.serve_loop` a read stream and a write stream directly; it parses and serializes every
message exactly as the SDK's transport does (the same pydantic adapter, the same JSON dump), so the wire
is unchanged.

Like the SDK's transport it claims fd 0 and fd 1 while serving: the wire moves to private duplicates, fd 0
reads the null device and fd 1 writes to stderr, so stray output from a handler or a child never reaches
the protocol channel. Both are restored on exit.

It applies when stdin and stdout are pipes or sockets (what every MCP client gives a server) on the asyncio
backend; anywhere else `usable()` is false and the caller uses the SDK's transport (as it does with
WISMO_STDIO_TRANSPORT=sdk, which the benchmark uses to time the SDK's transport in the same run).
"""

from __future__ import annotations

import asyncio
import collections
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import anyio
import anyio.lowlevel
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter

from wismo.core.errors import InputError
from wismo.mcp.servers.protocol import dropped_id

# Reading pauses while this many complete lines wait for the server loop, and resumes below the low mark.
HIGH_WATER_LINES = 64
LOW_WATER_LINES = 16
# The writer waits for the pipe to drain once this many bytes are buffered.
WRITE_HIGH_WATER = 256 * 1024
DRAIN_ON_EXIT_S = 5.0
# A longer line is dropped as it arrives and answered with an error. Without a cap a line grows in memory until its
# newline (or forever); parsing costs about five times its length, so a 64 MB line took the server to 370 MB.
MAX_LINE_BYTES = 32 * 2**20


def _is_pipe_or_socket(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def usable() -> bool:
    """Whether this transport can serve here: POSIX, the asyncio backend, stdin and stdout pipes or sockets."""
    if sys.platform == "win32":
        return False
    try:
        asyncio.get_running_loop()  # none under trio
    except RuntimeError:
        return False
    return _is_pipe_or_socket(0) and _is_pipe_or_socket(1)


class LineTooLong(InputError):
    """A line longer than MAX_LINE_BYTES, dropped unread."""

    def __init__(self) -> None:
        super().__init__(f"the line is longer than {MAX_LINE_BYTES // 2**20} MB and was not read")


TOO_LONG = object()  # in the reader's queue: a line dropped for its length


class _LineReader(asyncio.Protocol):
    """Collects complete lines from the read pipe; pauses reading while too many wait."""

    def __init__(self) -> None:
        self.transport: asyncio.ReadTransport | None = None
        self.partial = bytearray()
        self.lines: collections.deque[bytes | object] = collections.deque()
        self.skipping = False  # inside a line too long to keep: drop everything up to its newline
        self.eof = False
        self.paused = False
        self.waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # typeshed gives every protocol a BaseTransport; connect_read_pipe's is a ReadTransport.
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.skipping:
            end = data.find(b"\n")
            if end < 0:
                return
            self.skipping = False
            data = data[end + 1 :]
        if b"\n" in data:
            self.partial += data
            *complete, rest = self.partial.split(b"\n")
            self.lines.extend(bytes(line) for line in complete)
            self.partial = bytearray(rest)
            self._wake()
            if len(self.lines) >= HIGH_WATER_LINES and not self.paused and self.transport is not None:
                self.paused = True
                self.transport.pause_reading()
        else:
            self.partial += data
        if len(self.partial) > MAX_LINE_BYTES:
            self.partial = bytearray()
            self.skipping = True
            self.lines.append(TOO_LONG)
            self._wake()

    def eof_received(self) -> bool:
        self._finish()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()

    def _finish(self) -> None:
        if not self.eof:
            self.eof = True
            if self.partial:
                # The last line without its newline still counts, as it does for the SDK's line iterator.
                self.lines.append(bytes(self.partial))
                self.partial = bytearray()
        self._wake()

    def _wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def next_line(self) -> bytes | object | None:
        """The next complete line (TOO_LONG for one dropped), or None at end of input."""
        while not self.lines:
            if self.eof:
                return None
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None
        line = self.lines.popleft()
        if self.paused and len(self.lines) <= LOW_WATER_LINES and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return line


class _FlowControl(asyncio.Protocol):
    """Write-side protocol: remembers when the pipe is full and when the reader has gone."""

    def __init__(self) -> None:
        self.paused = False
        self.lost = False
        self.drained: asyncio.Future[None] | None = None
        self.closed = asyncio.get_running_loop().create_future()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self._release()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._release()
        if not self.closed.done():
            self.closed.set_result(None)

    def _release(self) -> None:
        waiter, self.drained = self.drained, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def drain(self) -> None:
        while self.paused and not self.lost:
            self.drained = asyncio.get_running_loop().create_future()
            await self.drained


class ReadStream:
    """The server loop's read stream: one parsed JSON-RPC message (or the parse error) per line."""

    def __init__(self, reader: _LineReader) -> None:
        self._reader = reader
        self._closed = False

    async def receive(self) -> SessionMessage | Exception:
        if self._closed:
            raise anyio.ClosedResourceError
        line = await self._reader.next_line()
        if line is None:
            raise anyio.EndOfStream
        if not isinstance(line, bytes):  # TOO_LONG, the only other thing the reader queues
            return LineTooLong()
        text = line.decode("utf-8", "replace")
        try:
            # As the SDK's transport: UTF-8 with replacement, then the SDK's own message adapter.
            message = jsonrpc_message_adapter.validate_json(text, by_name=False)
        except Exception as exc:
            return exc
        if (invalid := dropped_id(message, text)) is not None:
            return invalid
        return SessionMessage(message)

    def __aiter__(self) -> ReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> ReadStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class WriteStream:
    """The server loop's write stream: each message serialized as the SDK does and written as one line."""

    def __init__(self, transport: asyncio.WriteTransport, flow: _FlowControl) -> None:
        self._transport = transport
        self._flow = flow
        self._closed = False

    async def send(self, item: SessionMessage) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if self._flow.lost or self._transport.is_closing():
            raise anyio.BrokenResourceError
        text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
        # One write per message, so answers from concurrent handlers never interleave on the wire.
        self._transport.write((text + "\n").encode("utf-8"))
        if self._flow.paused:
            await self._flow.drain()

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> WriteStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _divert(fd: int) -> int:
    """Move the wire on `fd` to a private close-on-exec duplicate; point `fd` at the null device (stdin) or at
    stderr (stdout, or the null device without a stderr). Returns the private duplicate."""
    import fcntl

    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        if fd == 1:
            try:
                os.dup2(2, 1)
                return private
            except OSError:
                pass
        target = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        try:
            os.dup2(target, fd)
        finally:
            os.close(target)
    except OSError:
        os.close(private)
        raise
    return private


def _restore(fd: int, wire: int, blocking: bool) -> None:
    """Put the wire back on `fd` in its original blocking mode, and close the private duplicate."""
    with suppress(OSError):
        os.set_blocking(wire, blocking)
    with suppress(OSError):
        os.dup2(wire, fd)
    with suppress(OSError):
        os.close(wire)


@asynccontextmanager
async def stdio_server() -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """Serve over this process's stdin and stdout with the event loop's pipe transports (see the module doc)."""
    loop = asyncio.get_running_loop()
    with suppress(Exception):
        sys.stdout.flush()  # nothing buffered before serving may land in the middle of the protocol
    claimed: list[tuple[int, int, bool]] = []  # (fd, private duplicate, its blocking mode), to undo in reverse
    read_transport = write_transport = None
    flow: _FlowControl | None = None
    try:
        for fd in (0, 1):
            wire = _divert(fd)
            # Non-blocking mode belongs to the open pipe, which the duplicate shares with whoever else holds
            # it: remember it, to put it back on exit.
            claimed.append((fd, wire, os.get_blocking(wire)))
        wire_in, wire_out = claimed[0][1], claimed[1][1]
        reader = _LineReader()
        read_transport, _ = await loop.connect_read_pipe(
            lambda: reader, os.fdopen(wire_in, "rb", buffering=0, closefd=False)
        )
        flow = _FlowControl()
        write_transport, _ = await loop.connect_write_pipe(
            lambda: flow, os.fdopen(wire_out, "wb", buffering=0, closefd=False)
        )
        write_transport.set_write_buffer_limits(high=WRITE_HIGH_WATER)
        yield ReadStream(reader), WriteStream(write_transport, flow)
    finally:
        with anyio.CancelScope(shield=True):
            if read_transport is not None:
                read_transport.close()
            if write_transport is not None and flow is not None:
                # Let every answer already written reach the client before the descriptors are restored.
                write_transport.close()
                with anyio.move_on_after(DRAIN_ON_EXIT_S):
                    await asyncio.shield(flow.closed)
            await anyio.lowlevel.checkpoint()
        with suppress(Exception):
            sys.stdout.flush()  # anything printed while serving went to stderr; it must not follow the restore
        for fd, wire, blocking in reversed(claimed):
            _restore(fd, wire, blocking)
