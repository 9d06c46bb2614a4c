"""Servers kept running between the steps of one report on one event loop, so a notebook starts each design's
server once: the scale report's measurements leave them running and its budgeted sessions reuse, then stop them.

A kept server serves the generated orders it was started with; a request for orders it does not serve, or for
another cap, replaces it. Servers still kept when their event loop ends are stopped with it (the loop cancels
their owner tasks), and a stdio server exits anyway when its client process does (its stdin closes).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field

import sniffio

from wismo.mcp.client.connection import Connection, connect

START_TIMEOUT_S = 120.0


@dataclass
class _Kept:
    """One running server: what it serves, the task that owns its connection, and how to stop it."""

    design: str
    sizes: frozenset[int]
    cap: int | None
    env: dict[str, str]
    ready: asyncio.Future[Connection] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[object] | None = None

    def serves(self, sizes: list[int], cap: int | None) -> bool:
        """Whether this server can answer for these orders under this cap and is still running."""
        return set(sizes) <= self.sizes and cap == self.cap and self.task is not None and not self.task.done()

    async def own(self) -> None:
        """Enter the connection, hand it over, and hold it open until told to stop (one task enters and exits it)."""
        try:
            async with connect(self.design, env=self.env, timeout_s=START_TIMEOUT_S) as conn:
                self.ready.set_result(conn)
                await self.stop.wait()
        except asyncio.CancelledError:
            if not self.ready.done():
                self.ready.cancel()
            raise
        except Exception as exc:
            # Before the hand-over the caller gets the start's own error; after it, the caller's next call fails.
            if not self.ready.done():
                self.ready.set_exception(exc)

    async def close(self) -> None:
        """Stop the server and wait for its connection to be closed."""
        self.stop.set()
        if self.task is not None:
            with suppress(Exception):
                await asyncio.shield(self.task)


# Per event loop: a loop's tasks and streams are useless on any other loop.
_KEPT: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, _Kept]] = weakref.WeakKeyDictionary()


def _kept() -> dict[str, _Kept]:
    """The servers kept on the running event loop."""
    return _KEPT.setdefault(asyncio.get_running_loop(), {})


async def _acquire(design: str, sizes: list[int], cap: int | None, env: dict[str, str]) -> _Kept:
    """The kept server of `design` if it serves these orders and cap, else a new one, kept in its place."""
    kept = _kept()
    current = kept.get(design)
    if current is not None and current.serves(sizes, cap):
        return current
    fresh = _Kept(design, frozenset(sizes), cap, env)
    # Registered before any await: a second request for the same design waits on this start, not a second one.
    kept[design] = fresh
    fresh.task = asyncio.get_running_loop().create_task(fresh.own(), name=f"wismo {design} server")
    if current is not None:
        await current.close()
    return fresh


@asynccontextmanager
async def server(design: str, sizes: list[int], cap: int | None, env: dict[str, str]) -> AsyncIterator[Connection]:
    """A connection to `design`'s server for these generated orders, kept running afterwards for the next step;
    started with `env` when no kept server fits. On the asyncio backend only; elsewhere a server of its own."""
    if sniffio.current_async_library() != "asyncio":
        async with connect(design, env=env, timeout_s=START_TIMEOUT_S) as conn:
            yield conn
        return
    kept = await _acquire(design, sizes, cap, env)
    try:
        conn = await asyncio.shield(kept.ready)
        yield conn
    except BaseException:
        # A start or a step that failed may have left the server in any state: the next step gets a fresh one.
        _forget(kept)
        await kept.close()
        raise


def _forget(kept: _Kept) -> None:
    """Stop offering this server to later steps."""
    servers = _kept()
    if servers.get(kept.design) is kept:
        del servers[kept.design]


async def stop_all() -> None:
    """Stop every server kept on the running event loop (the last step that needs them calls this)."""
    if sniffio.current_async_library() != "asyncio":
        return
    kept = _kept()
    servers = list(kept.values())
    kept.clear()
    for one in servers:
        await one.close()


def running() -> dict[str, frozenset[int]]:
    """The designs with a server kept on the running event loop, and the orders each serves."""
    return {design: k.sizes for design, k in _kept().items() if k.task is not None and not k.task.done()}
