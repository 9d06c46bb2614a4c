"""Transport parity, schema-preserving wrappers, and failure behaviour (the pinned contract: test_contract.py)."""

import copy
import os
import signal
import subprocess
import time

import psutil
import pytest
from mcp import Client

from wismo.accounting import tokens
from wismo.core.errors import ClaimFailed
from wismo.mcp.client.connection import HarnessError, connect
from wismo.mcp.client.process import free_port, server_command
from wismo.reports.analyses import comparison
from wismo.runs.agent.loop import client_tools
from wismo.runs.agent.mcp_tools import CachingTool, McpTool, TimedTool

# Real server processes from the real interpreter: these tests are about the transports and the processes themselves.
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("real_servers")]


@pytest.mark.slow
async def test_http_gives_the_same_tools_verdicts_and_bytes_as_stdio():
    results = {t: await comparison.run(transport=t) for t in ("stdio", "http")}
    assert comparison.check_parity(comparison.parity(results), list(results)).startswith("Checked: ")
    assert results["http"]["tools"] == results["stdio"]["tools"]
    assert results["http"]["summary"] == results["stdio"]["summary"]
    planted = copy.deepcopy(results)
    planted["http"]["cases"][3]["focused"]["bytes"] += 1
    with pytest.raises(ClaimFailed, match="partial delivery"):
        comparison.check_parity(comparison.parity(planted), list(planted))


async def test_the_sdk_default_client_falls_back_over_http_too():
    port = free_port()
    server = subprocess.Popen(server_command("focused", port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    assert client.session.protocol_version == "2025-11-25"
                    tools = await client.list_tools()
                    assert [t.name for t in tools.tools] == ["get_order_support_context"]
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
    finally:
        server.terminate()
        server.wait(10)


async def test_wrappers_keep_the_definition_exactly_and_cache_repeats():
    async with connect("granular") as conn:
        listed = await conn.list_tools()
        for definition in listed:
            wrapped = TimedTool(CachingTool(McpTool(conn, definition)))
            for field in ("name", "description", "inputSchema", "annotations"):
                assert wrapped.definition[field] == definition[field], field
            assert tokens.mcp_tool_to_function(wrapped.definition)["parameters"] == definition["inputSchema"]
        tools = client_tools(conn, listed, cache_repeats=True)
        assert list(tools) == [d["name"] for d in listed]
        before = len(conn.tool_calls())
        first = await tools["get_order"].call({"orderId": "ORD-1004"})
        again = await tools["get_order"].call({"orderId": "ORD-1004"})
        assert first == again and tools["get_order"].inner.hits == 1
        assert len(conn.tool_calls()) == before + 1, "the repeat must not reach the server"


# Failure behaviour: each must end in a HarnessError naming the server, the transport and the cause, promptly.


async def _expect_failure(*fragments, within=30.0, **kwargs):
    started = time.monotonic()
    with pytest.raises(HarnessError) as err:
        async with connect(**kwargs) as conn:
            await conn.call("get_order", {"orderId": "ORD-1001"})
    assert time.monotonic() - started < within
    for fragment in fragments:
        assert fragment in str(err.value), str(err.value)
    return str(err.value)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_missing_server_command(transport):
    await _expect_failure(
        "granular server over " + transport,
        "could not be reached",
        "No such file",
        design="granular",
        transport=transport,
        command=["/nonexistent/wismo-server"],
    )


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_server_that_exits_at_start(transport):
    env = {"WISMO_FIXTURES": "/nonexistent/fixtures"}
    await _expect_failure(
        "focused server over " + transport,
        "could not be reached",
        "orders.json is missing",
        design="focused",
        transport=transport,
        env=env,
    )


async def test_an_http_endpoint_that_is_not_listening():
    await _expect_failure(
        "focused server over http (http://127.0.0.1:",
        "could not be reached",
        "ConnectError",
        design="focused",
        transport="http",
        url=f"http://127.0.0.1:{free_port()}/mcp",
        timeout_s=5,
    )


def _server_pid(conn):
    if conn.process is not None:
        return conn.process.pid
    mine = [p for p in psutil.Process().children(recursive=True) if "serve" in p.cmdline()]
    assert len(mine) == 1
    return mine[0].pid


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_server_that_dies_mid_session(transport):
    started = time.monotonic()
    with pytest.raises(HarnessError) as err:
        async with connect("granular", transport, timeout_s=5) as conn:
            await conn.call("get_order", {"orderId": "ORD-1001"})
            os.kill(_server_pid(conn), signal.SIGKILL)
            await conn.call("get_order", {"orderId": "ORD-1001"})
    message = str(err.value)
    assert time.monotonic() - started < 30
    assert f"granular server over {transport}" in message
    assert ("Connection closed" in message) if transport == "stdio" else ("exited with code -9" in message)


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_call_that_exceeds_its_timeout(transport):
    started = time.monotonic()
    with pytest.raises(HarnessError) as err:
        async with connect("focused", transport, timeout_s=2) as conn:
            await conn.call("get_order_support_context", {"orderId": "ORD-1001"})
            os.kill(_server_pid(conn), signal.SIGSTOP)  # a hung server: alive, silent
            try:
                await conn.call("get_order_support_context", {"orderId": "ORD-1001"})
            except HarnessError as exc:
                assert "no answer within 2 s" in str(exc) and f"focused server over {transport}" in str(exc)
                raise
    assert time.monotonic() - started < 30
    assert f"focused server over {transport}" in str(err.value)


def test_unknown_transport_is_named():
    import anyio

    async def go():
        async with connect("focused", "carrier-pigeon"):
            pass

    with pytest.raises(HarnessError, match="transport 'carrier-pigeon' is not available; use one of stdio, http"):
        anyio.run(go)
